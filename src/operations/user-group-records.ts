/**
 * The results files of `get --from` and `rotate --from`: both hold user group records, so each
 * command's spec knows the other's columns, to refuse its files by name.
 */
import type { RecordColumn } from '../bulk/records.js';

/** The columns both commands' results files open with. */
const GROUP_COLUMNS: readonly RecordColumn[] = [
  'row',
  'user_group_id',
  'name',
  'status',
  'token',
  'team_id',
];

export const GET_COLUMNS: readonly RecordColumn[] = [
  ...GROUP_COLUMNS,
  'new_user_group',
  'error',
  'http_status',
];

/** The rotate results header written before records carried their time (`at`). */
export const ROTATE_COLUMNS_BEFORE_AT: readonly RecordColumn[] = [
  ...GROUP_COLUMNS,
  'api_environment_tag',
  'error',
  'http_status',
  'settled_by',
];

/** `at`: when a `sending` record was written (`--resume` waits out a request still in flight). */
export const ROTATE_COLUMNS: readonly RecordColumn[] = [...ROTATE_COLUMNS_BEFORE_AT, 'at'];

/**
 * Which command wrote an NDJSON record (a CSV results file says it by its header). Every version
 * of ugs writes `new_user_group` in each `get` record and never in a `rotate` one; `created` and
 * `found` are get outcomes only, `rotated` and `sending` rotate ones only. So the record format
 * already tells, without a marker of its own: a record without `new_user_group` (older files
 * included) is taken as written by rotate. Undefined when its fields contradict each other, or
 * when it is no result record at all.
 */
export function userGroupRecordWriter(value: Record<string, unknown>): string | undefined {
  // Only a result record is judged: the input's rows (or anything else) are no one's results.
  if (typeof value.row !== 'number' || typeof value.status !== 'string') return undefined;
  const get = 'new_user_group' in value;
  const status = value.status;
  if (status === 'created' || status === 'found') return get ? 'get' : undefined;
  if (status === 'rotated' || status === 'sending') return get ? undefined : 'rotate';
  return get ? 'get' : 'rotate';
}
