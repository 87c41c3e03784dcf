/**
 * `ugs rotate --from`: one current_token per row. A rotation is at risk (its `risk`): each row is
 * journaled before it is sent, and one whose answer was lost is settled by reading the group's
 * current token back before anything else is sent for it.
 */

import { sentValue, wholeTokenProblem } from '../../bulk/records.js';
import { currentTokenField, groupText } from '../../bulk/row-fields.js';
import type { BulkSpec, RecordOutcome, Settled } from '../../bulk/spec.js';
import { ApiError } from '../../errors.js';
import type { RowFields } from '../../input/bulk-options.js';
import { isUnrotated, otherGroupOf, type ServiceResult } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { readExisting, readsWithoutCreating } from '../get-customer/operation.js';
import {
  otherResultsFiles,
  ROTATE_COLUMNS,
  ROTATE_COLUMNS_BEFORE_AT,
  ROTATE_MARKS,
} from '../user-group-records.js';
import { READ_CURRENT_TOKEN_HINT, rotateToken } from './operation.js';

export interface RotateRow {
  row: number;
  line: number;
  current_token: string;
  user_group_id?: string;
  name?: string;
}

export const spec: BulkSpec<RotateRow> = {
  rows: {
    fields: new Set(['current_token', 'user_group_id', 'name']),
    required: ['current_token'],
    objects: [],
    // V8 quotes the text near a JSON error, which may be a current token.
    quoteJsonErrors: false,
    check: rotateRow,
    fromResults: rotateRowFromResults,
    unique: {
      key: (row) => row.current_token,
      normalize: false,
      problem: (_row, first) => `same current_token as row ${first}`,
    },
  },
  records: {
    command: 'rotate',
    columns: ROTATE_COLUMNS,
    // Files written before records carried their time are resumed as they are.
    formerColumns: [ROTATE_COLUMNS_BEFORE_AT],
    extras: [
      { field: 'api_environment_tag', always: false, resume: true },
      { field: 'settled_by', always: false, resume: false },
    ],
    marks: ROTATE_MARKS,
    others: otherResultsFiles('rotate'),
  },
  secrets: (row) => rotateToken.secrets(row.current_token),
  send: (client, row) => client.rotateToken(row.current_token),
  outcome(row: RotateRow, result: ServiceResult, settled: boolean): RecordOutcome {
    const group = result.userGroup;
    const id = group.provided_id;
    const tag = group.api_environment_tag;
    if (!settled && isUnrotated(result, row.current_token)) {
      return {
        status: 'failed',
        error: 'not rotated: the service answered success but returned the token that was sent',
        http_status: result.status ?? null,
      };
    }
    // The rotation happened (its token is real and recorded), but not to the row's group.
    const other =
      row.user_group_id === undefined ? undefined : otherGroupOf(result, row.user_group_id);
    return {
      status: other === undefined ? 'rotated' : 'mismatch',
      user_group_id: row.user_group_id ?? (typeof id === 'string' ? id : null),
      name: row.name ?? (typeof group.name === 'string' ? group.name : null),
      token: group.token,
      team_id: sentValue(group.team_id),
      ...(!settled && { api_environment_tag: sentValue(tag) }),
      http_status: settled ? null : (result.status ?? null),
      ...(settled && { settled_by: 'get' as const }),
      ...(other !== undefined && {
        error: message`the rotation answer names user group "${other}", not this row's "${row.user_group_id ?? ''}": the token was rotated (the new token is recorded); check which group it belongs to`,
      }),
    };
  },
  risk: {
    delivery: rotateToken.risk as NonNullable<typeof rotateToken.risk>,
    needsYes: {
      message: '--yes is required to rotate tokens when not running interactively',
      hint: 'every row is rotated at once; add --yes to confirm in scripts',
    },
    question: (count) =>
      `Rotate the tokens of ${count} user ${count === 1 ? 'group' : 'groups'}? Dashboards using the old tokens may stop working.`,
    cancelled: 'rotation cancelled; nothing was sent',
    unanswered: 'an earlier run sent this rotation without an answer',
    noun: { one: 'rotation', many: 'rotations' },
    checked: {
      notDone: 'not rotated',
      doingAgain: 'rotating it again',
      doAgain: 'rotate it again',
      unchanged: "reading the group back still finds the row's token",
      reading: "reading the group's token",
    },
    // DRF's get_object_or_404: the service does not know the token (its hint says so).
    spent: (error) => error instanceof ApiError && error.status === 404,
    stale:
      "not rotated by ugs: the row's token was not current (the group has another token, recorded here)",
    unsettleable: (row) =>
      row.user_group_id === undefined || row.name === undefined
        ? `the row has no user_group_id and name to check it with (${READ_CURRENT_TOKEN_HINT})`
        : undefined,
    /** The group's current token, read back with Get User, says (settleWith). */
    async settle(client, row): Promise<Settled> {
      return settleWith(row, await client.getUser(groupOf(row)));
    },
  },
  // In the Customer API the group is read back with get_customer/, which creates nothing: a
  // group that is not there leaves the row unknown, and no group is made by the check.
  forDialect(dialect) {
    if (!readsWithoutCreating(dialect) || this.risk === undefined) return this;
    return {
      ...this,
      risk: {
        ...this.risk,
        // A customer read sends the id alone: a row without a name can be settled too.
        unsettleable: (row) =>
          row.user_group_id === undefined
            ? `the row has no user_group_id to check it with (${READ_CURRENT_TOKEN_HINT})`
            : undefined,
        async settle(client, row): Promise<Settled> {
          const id = row.user_group_id ?? '';
          let current: ServiceResult;
          try {
            current = await readExisting(client, id);
          } catch (error) {
            if (!(error instanceof ApiError) || error.status !== 404) throw error;
            return {
              kind: 'unknown',
              why: message`no group has user_group_id ${id} (nothing was created), so the token's group is not known`,
            };
          }
          return settleWith(row, current);
        },
      },
    };
  },
};

/** The row's group, as Get User reads it (its id and name). */
function groupOf(row: RotateRow): { user_group_id: string; name: string } {
  return { user_group_id: row.user_group_id ?? '', name: row.name ?? '' };
}

/**
 * The group's current token says: another token than the row's means the rotation happened;
 * the same token means it did not.
 */
function settleWith(row: RotateRow, current: ServiceResult): Settled {
  const id = row.user_group_id ?? '';
  const other = otherGroupOf(current, id);
  if (other !== undefined) {
    return {
      kind: 'unknown',
      why: message`reading the group back answered for user group "${other}", so whether this row rotated is not known`,
    };
  }
  if (current.created === true) {
    return {
      kind: 'unknown',
      why: message`no group had user_group_id ${id} (ugs get created it), so the token's group is not known`,
    };
  }
  if (current.userGroup.token !== row.current_token) return { kind: 'happened', result: current };
  return { kind: 'not-happened' };
}

function rotateRow(
  row: number,
  line: number,
  fields: RowFields,
  problems: string[],
): RotateRow | undefined {
  const current_token = currentTokenField(fields, problems) ?? '';
  const user_group_id = groupText(fields, 'user_group_id', false, problems);
  const name = groupText(fields, 'name', false, problems);
  if (problems.length > 0) return undefined;
  const result: RotateRow = { row, line, current_token };
  if (user_group_id !== undefined) result.user_group_id = user_group_id;
  if (name !== undefined) result.name = name;
  return result;
}

/** Statuses of a results record whose token is the group's current one. */
const CURRENT_TOKEN_STATUSES = new Set(['created', 'found', 'rotated']);

/**
 * A row of ugs's own results (`get --from --output`, `rotate --from --output`): the last record's
 * token is the current token. Any other last status has no token to rotate (or one that may not
 * be current: `mismatch`, `unknown`, `sending`).
 */
function rotateRowFromResults(record: RowFields): RowFields | string {
  const status = typeof record.status === 'string' ? record.status : String(record.status);
  if (!CURRENT_TOKEN_STATUSES.has(status)) {
    return message`its last status in the results is "${status}", not created, found or rotated: it has no current token to rotate (settle it first, e.g. with --resume of the run that wrote it)`;
  }
  const noToken = wholeTokenProblem(record);
  if (noToken !== undefined) return noToken;
  const fields: RowFields = { current_token: record.token };
  if (record.user_group_id !== undefined && record.user_group_id !== null) {
    fields.user_group_id = record.user_group_id;
  }
  if (record.name !== undefined && record.name !== null) fields.name = record.name;
  return fields;
}
