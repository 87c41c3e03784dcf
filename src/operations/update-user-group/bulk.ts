/**
 * `ugs update --from`: one group's changes per row, named by its `user_group_id`. An empty cell
 * (or a missing field) leaves that field as it is: only what a row gives is sent, as with the
 * single `update`. A list (`emails`, `group_tags`) is written in a CSV cell as its items
 * separated by `|` (`eu|paying`), or as a JSON array (`[]` clears it): `,` and `;` are the
 * separators spreadsheets write between cells.
 *
 * An update is at risk (its descriptor's `risk`): each row is journaled before it is sent, and one
 * whose answer was lost is never sent again blindly. In the customer dialect it is settled by
 * reading the group back (get_customer/, which creates nothing): the row's values there mean it
 * happened, other values that it did not (it is then sent once more). The explo dialect cannot
 * read a group without creating it: such a row is `unknown`, and `--resume` sends it again, which
 * sets the same values (renames, which could not be repeated, are the customer dialect's alone).
 */
import { isDeepStrictEqual } from 'node:util';
import { sentValue } from '../../bulk/records.js';
import {
  booleanField,
  groupText,
  mappingField,
  objectField,
  typeOf,
} from '../../bulk/row-fields.js';
import type { BulkRow, BulkSpec, RecordOutcome, Settled } from '../../bulk/spec.js';
import { ApiError } from '../../errors.js';
import type { RowFields } from '../../input/bulk-options.js';
import { groupTextProblem, quoteVisible } from '../../input/parse.js';
import { isPlainObject } from '../../platform/guards.js';
import type { ServiceClient } from '../../service/client.js';
import { otherGroupOf, type ServiceResult, type UserGroup } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { readExisting, readsWithoutCreating } from '../get-customer/operation.js';
import { otherResultsFiles, UPDATE_COLUMNS, UPDATE_MARKS } from '../user-group-records.js';
import { sendUpdate, type UpdateUserGroupRequest, updateUserGroup } from './operation.js';

/** What a row changes: its request without the id. */
export type UpdateChanges = Omit<UpdateUserGroupRequest, 'user_group_id'>;

export interface UpdateRow extends BulkRow {
  user_group_id: string;
  /** The new name, when the row gives one (its records show it). */
  name?: string;
  changes: UpdateChanges;
}

/** The Customer API's own fields: a row of another dialect that sets one is refused. */
const CUSTOMER_ONLY = [
  'new_provided_id',
  'emails',
  'group_tags',
  'hierarchy_level',
  'parent_provided_id',
];

/** The id a row renames its group to, when it renames it. */
function renamesTo(row: UpdateRow): string | undefined {
  const to = row.changes.new_provided_id;
  return to === undefined || to === row.user_group_id ? undefined : to;
}

export const spec: BulkSpec<UpdateRow> = {
  rows: {
    // A row's columns are the request's fields: the id that picks the group, and what changes.
    fields: new Set(updateUserGroup.fields),
    required: ['user_group_id'],
    customerOnly: CUSTOMER_ONLY,
    // In this order a column ugs does not know is offered as a property first (the likelier).
    objects: ['properties', 'mapping'],
    quoteJsonErrors: true,
    check: updateRow,
    unique: {
      key: (row) => row.user_group_id,
      normalize: true,
      problem: (row, first, exact) =>
        `user_group_id ${quoteVisible(row.user_group_id)} is also in row ${first}${exact ? '' : ' (the same id once Unicode-normalised, NFC)'}: the order of two updates of one group is not kept`,
    },
  },
  records: {
    command: 'update',
    columns: UPDATE_COLUMNS,
    extras: [
      { field: 'changed', always: true, resume: false },
      { field: 'settled_by', always: false, resume: false },
    ],
    marks: UPDATE_MARKS,
    others: otherResultsFiles('update'),
  },
  secrets: () => [],
  rowFields: (row) => ({ changed: Object.keys(row.changes).join(' ') }),
  send: (client, row) => sendUpdate(client, { user_group_id: row.user_group_id, ...row.changes }),
  outcome(row: UpdateRow, result: ServiceResult, settled: boolean): RecordOutcome {
    const group = result.userGroup;
    // A rename answers the new id.
    const expected = renamesTo(row) ?? row.user_group_id;
    const other = otherGroupOf(result, expected);
    if (other !== undefined) {
      return {
        status: 'failed',
        error: message`the service answered for user group "${other}", not "${expected}": its answer is not used`,
        http_status: result.status ?? null,
      };
    }
    return {
      status: 'updated',
      name: typeof group.name === 'string' ? group.name : (row.name ?? null),
      token: group.token,
      team_id: sentValue(group.team_id),
      http_status: settled ? null : (result.status ?? null),
      ...(settled && { settled_by: 'show' }),
    };
  },
  risk: {
    delivery: updateUserGroup.risk as NonNullable<typeof updateUserGroup.risk>,
    // The command runs with `yes` (an update asks no confirmation, as the single one does).
    needsYes: {
      message: '--yes is required to update groups when not running interactively',
      hint: 'every row is updated at once',
    },
    question: (count) => `Update ${count} user ${count === 1 ? 'group' : 'groups'}?`,
    cancelled: 'update cancelled; nothing was sent',
    unanswered: 'an earlier run sent this update without an answer',
    noun: { one: 'update', many: 'updates' },
    checked: {
      notDone: 'not updated',
      doingAgain: 'sending the update again',
      doAgain: 'send the update again',
      unchanged: "reading the group back does not find the row's values",
      reading: 'reading the group back',
    },
    // Without a read that creates nothing, a row in doubt is sent again by --resume alone.
    resendOnResume: (row) => renamesTo(row) === undefined,
    resendNote:
      'not sent again by this run: run the same command with --resume to send it again (it sets the same values)',
    // Every row has its id; what an explo row lacks is a read that creates nothing.
    lacksCheck: () => false,
    // A 404 is "no user group": nothing was changed (an update never spends its input).
    spent: () => false,
    stale: 'not updated by ugs',
    unsettleable: (row) =>
      renamesTo(row) === undefined
        ? undefined
        : 'only the customer dialect can read a renamed group back (ugs show --id <new id>)',
    settle: async () => ({
      kind: 'unknown',
      why: 'this dialect cannot read a group back without creating it',
    }),
  },
  // The Customer API reads a group without creating it (get_customer/): a row in doubt is read
  // back, renames included, and sent again only when its values are not there.
  forDialect(dialect) {
    if (!readsWithoutCreating(dialect) || this.risk === undefined) return this;
    const { resendOnResume: _resend, resendNote: _note, ...risk } = this.risk;
    return {
      ...this,
      risk: { ...risk, unsettleable: () => undefined, settle: settleByReading },
    };
  },
};

/** The group of `id` as it is now, or undefined when there is none (nothing is created). */
async function groupNow(client: ServiceClient, id: string): Promise<ServiceResult | undefined> {
  try {
    return await readExisting(client, id);
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return undefined;
    throw error;
  }
}

/**
 * Did the row's update happen? A rename: the old id still there means no; the old id gone and
 * the new one there means yes. Otherwise the group holding every value the row sets means yes
 * (or that sending it changes nothing); any other value means no, and it is sent again.
 */
async function settleByReading(client: ServiceClient, row: UpdateRow): Promise<Settled> {
  const to = renamesTo(row);
  const now = await groupNow(client, row.user_group_id);
  if (to !== undefined) {
    if (now !== undefined) return { kind: 'not-happened' };
    const renamed = await groupNow(client, to);
    if (renamed === undefined) {
      return {
        kind: 'unknown',
        why: message`neither "${row.user_group_id}" nor "${to}" names a group now`,
      };
    }
    return { kind: 'happened', result: renamed };
  }
  // No group of that id: an update never creates one, so the row changed nothing (sent again,
  // it is refused as "no user group").
  if (now === undefined) return { kind: 'not-happened' };
  return holdsChanges(now.userGroup, row.changes)
    ? { kind: 'happened', result: now }
    : { kind: 'not-happened' };
}

/**
 * Whether a group read back holds every value the changes set. An object sets its keys (the
 * vendor does not say whether properties are merged or replaced: either way the keys sent are
 * there); a list is compared as a set; a field the read does not show counts as not set.
 */
export function holdsChanges(group: UserGroup, changes: UpdateChanges): boolean {
  const shown = group as Record<string, unknown>;
  for (const [field, value] of Object.entries(changes)) {
    if (field === 'new_provided_id') continue;
    const current =
      field === 'mapping'
        ? (shown.mapping ?? shown.parent_schema_datasource_mapping)
        : shown[field];
    if (isPlainObject(value)) {
      if (!isPlainObject(current)) return false;
      for (const [key, entry] of Object.entries(value)) {
        if (!Object.hasOwn(current, key) || !isDeepStrictEqual(current[key], entry)) return false;
      }
    } else if (Array.isArray(value)) {
      if (!Array.isArray(current)) return false;
      const have = new Set(current);
      if (have.size !== new Set(value).size || !value.every((item) => have.has(item))) return false;
    } else if (current !== value) return false;
  }
  return true;
}

function updateRow(
  row: number,
  line: number,
  fields: RowFields,
  problems: string[],
): UpdateRow | undefined {
  const user_group_id = groupText(fields, 'user_group_id', true, problems);
  const changes: UpdateChanges = {};
  const name = groupText(fields, 'name', false, problems);
  if (name !== undefined) changes.name = name;
  const mapping = mappingField(fields, problems);
  if (mapping !== undefined) changes.mapping = mapping;
  const properties = objectField(fields, 'properties', problems);
  if (properties !== undefined) changes.properties = properties;
  const demo = booleanField(fields, 'is_demo_group', problems);
  if (demo !== undefined) changes.is_demo_group = demo;
  const newId = groupText(fields, 'new_provided_id', false, problems);
  if (newId !== undefined) changes.new_provided_id = newId;
  const emails = listField(fields, 'emails', problems);
  if (emails !== undefined) changes.emails = emails;
  const tags = listField(fields, 'group_tags', problems);
  if (tags !== undefined) changes.group_tags = tags;
  const level = groupText(fields, 'hierarchy_level', false, problems, 'name');
  if (level !== undefined) changes.hierarchy_level = level;
  const parent = groupText(fields, 'parent_provided_id', false, problems);
  if (parent !== undefined) changes.parent_provided_id = parent;
  if (problems.length > 0 || user_group_id === undefined) return undefined;
  if (Object.keys(changes).length === 0) {
    // An update of nothing would still be a request that changes data.
    problems.push(
      'has nothing to change: every field but user_group_id is empty (an empty cell leaves a field as it is)',
    );
    return undefined;
  }
  return { row, line, user_group_id, ...(name !== undefined && { name }), changes };
}

/**
 * A list: a JSON array of strings, or (as a CSV cell holds it) its items separated by `|`, each
 * trimmed; a cell that is a JSON array (`[]`, `["a|b"]`) is read as one.
 */
export function listField(
  fields: RowFields,
  field: string,
  problems: string[],
): string[] | undefined {
  let value = fields[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') {
    const text = value.trim();
    if (text.startsWith('[')) {
      try {
        value = JSON.parse(text) as unknown;
      } catch {
        problems.push(
          `${field} starts with "[" but is not a JSON array (separate items with "|": a|b)`,
        );
        return undefined;
      }
    } else value = text.split('|').map((item) => item.trim());
  }
  if (!Array.isArray(value)) {
    problems.push(
      `${field} must be a list (a JSON array, or items separated by "|"), got ${typeOf(value)}`,
    );
    return undefined;
  }
  const items: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') {
      problems.push(`${field}: each item must be a string, got ${typeOf(item)}`);
      return undefined;
    }
    const problem = groupTextProblem(item, 'name');
    if (problem !== undefined) {
      problems.push(
        item.trim() === ''
          ? `${field} has an empty item`
          : `${field} item ${quoteVisible(item)} ${problem}`,
      );
      return undefined;
    }
    items.push(item);
  }
  return items;
}
