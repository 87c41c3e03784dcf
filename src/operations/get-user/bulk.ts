/** `ugs get --from`: one group per row, got or created; nothing to settle (safe to repeat). */

import { sentValue } from '../../bulk/records.js';
import { booleanField, groupText, mappingField, objectField } from '../../bulk/row-fields.js';
import type { BulkSpec, RecordOutcome } from '../../bulk/spec.js';
import type { RowFields } from '../../input/bulk-options.js';
import { type JsonObject, quoteVisible, type StringMap } from '../../input/parse.js';
import type { ServiceResult } from '../../service/user-group.js';
import { otherGroupOf } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { readExisting, readsWithoutCreating } from '../get-customer/operation.js';
import { GET_COLUMNS, GET_MARKS, otherResultsFiles } from '../user-group-records.js';
import { type GetUserRequest, mustExistProblem } from './operation.js';

export interface GetRow {
  row: number;
  line: number;
  user_group_id: string;
  name: string;
  mapping?: StringMap;
  properties?: JsonObject;
  /** The vendor's demo watermark (`--dialect explo` only), `true`/`false` in any format. */
  is_demo_group?: boolean;
}

export const spec: BulkSpec<GetRow> = {
  rows: {
    fields: new Set(['user_group_id', 'name', 'mapping', 'properties', 'is_demo_group']),
    required: ['user_group_id', 'name'],
    // The interface has no demo flag: a file that sets it is refused unless the run speaks explo.
    exploOnly: ['is_demo_group'],
    // In this order a column ugs does not know is offered as a property first (the likelier).
    objects: ['properties', 'mapping'],
    quoteJsonErrors: true,
    check: getRow,
    unique: {
      key: (row) => row.user_group_id,
      normalize: true,
      problem: (row, first, exact) =>
        `user_group_id ${quoteVisible(row.user_group_id)} is also in row ${first}${exact ? '' : ' (the same id once Unicode-normalised, NFC)'}`,
    },
  },
  records: {
    command: 'get',
    columns: GET_COLUMNS,
    extras: [{ field: 'new_user_group', always: true, resume: true }],
    marks: GET_MARKS,
    others: otherResultsFiles('get'),
  },
  secrets: () => [],
  dryRunNote: 'each group is created, or found as it is: which, only the service can tell',
  // A get creates the group of an id it does not know: a typo is a new tenant.
  noteLookalikeIds: true,
  send(client, row) {
    const request: GetUserRequest = { name: row.name, user_group_id: row.user_group_id };
    if (row.mapping) request.mapping = row.mapping;
    if (row.properties) request.properties = row.properties;
    if (row.is_demo_group !== undefined) request.is_demo_group = row.is_demo_group;
    return client.getUser(request);
  },
  outcome(row: GetRow, result: ServiceResult): RecordOutcome {
    const group = result.userGroup;
    const other = otherGroupOf(result, row.user_group_id);
    if (other !== undefined) {
      // Another customer's token must not be stored as this row's: the record keeps none.
      return {
        status: 'failed',
        error: message`the service answered for user group "${other}", not "${row.user_group_id}": its answer is not used`,
        http_status: result.status ?? null,
      };
    }
    return {
      status: result.created === true ? 'created' : 'found',
      name: typeof group.name === 'string' ? group.name : row.name,
      token: group.token,
      team_id: sentValue(group.team_id),
      new_user_group: result.created ?? null,
      http_status: result.status ?? null,
    };
  },
};

function getRow(
  row: number,
  line: number,
  fields: RowFields,
  problems: string[],
): GetRow | undefined {
  const user_group_id = groupText(fields, 'user_group_id', true, problems);
  const name = groupText(fields, 'name', true, problems);
  const result: GetRow = { row, line, user_group_id: user_group_id ?? '', name: name ?? '' };
  const mapping = mappingField(fields, problems);
  if (mapping !== undefined) result.mapping = mapping;
  const properties = objectField(fields, 'properties', problems);
  if (properties !== undefined) result.properties = properties;
  const demo = booleanField(fields, 'is_demo_group', problems);
  if (demo !== undefined) result.is_demo_group = demo;
  return problems.length > 0 ? undefined : result;
}

/**
 * `get --from --must-exist`: a row the service reports as new is `failed`, with the message of
 * the single get; its record keeps team_id and new_user_group (what the service owner needs to
 * find the group) but no token, as the single get prints none.
 */
export function mustExistSpec(base: BulkSpec<GetRow>): BulkSpec<GetRow> {
  return {
    ...base,
    // Where the service reads a group without creating it (the Customer API's get_customer), a
    // row is read with that, as the single `get --must-exist` is: a missing id is `failed`
    // ("no user group"), and nothing is created.
    forDialect(dialect) {
      if (!readsWithoutCreating(dialect)) return this;
      return { ...this, send: (client, row) => readExisting(client, row.user_group_id) };
    },
    outcome(row, result, settled) {
      const outcome = base.outcome(row, result, settled);
      if (outcome.status !== 'created' && outcome.status !== 'found') return outcome;
      const problem = mustExistProblem(row.user_group_id, result.created);
      if (problem === undefined) return outcome;
      return { ...outcome, status: 'failed', token: null, error: problem.message };
    },
  };
}
