/**
 * The results files of `get --from`, `rotate --from`, `update --from` and `delete --from`: each
 * command's spec knows the others' columns, to refuse their files by name.
 */
import type { RecordColumn, RecordMarks, RecordSchema } from '../bulk/records.js';

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
 * `update --from`: `changed` says which fields each row changes; `settled_by` a row whose answer
 * was lost and whose group was read back; `at` when a `sending` record was written.
 */
export const UPDATE_COLUMNS: readonly RecordColumn[] = [
  ...GROUP_COLUMNS,
  'changed',
  'error',
  'http_status',
  'settled_by',
  'at',
];

/**
 * What marks each command's NDJSON records (the engine's `writerOf` tells them apart by it):
 * every version of ugs writes `new_user_group` in each get record and never in a rotate one;
 * `created` and `found` are get outcomes only, `rotated` and `sending` rotate ones only. A record
 * without `new_user_group` (older files included) is taken as written by rotate.
 */
export const GET_MARKS: RecordMarks = { field: 'new_user_group', statuses: ['created', 'found'] };
export const ROTATE_MARKS: RecordMarks = { statuses: ['rotated', 'sending'] };
/**
 * Every update record has `changed` (null when not known), which no get or rotate record has;
 * `updated` is its outcome alone, and its `sending` records carry `changed` too.
 */
export const UPDATE_MARKS: RecordMarks = { field: 'changed', statuses: ['updated', 'sending'] };

/**
 * `delete --from`: no token and no group data (a delete answers only `success`, and the token it
 * sent is dead): the row, the id the row gave, the outcome, and `settled_by`/`at` as for rotate.
 */
export const DELETE_COLUMNS: readonly RecordColumn[] = [
  'row',
  'user_group_id',
  'status',
  'error',
  'http_status',
  'settled_by',
  'at',
];

/** `deleted` is a delete's outcome alone; its `sending` records look like rotate's. */
export const DELETE_MARKS: RecordMarks = { statuses: ['deleted', 'sending'] };

/**
 * Every results file ugs writes, by the command that writes it (rotate's in both its headers). A
 * new bulk command adds its line here, and every other command then refuses its files by name.
 */
const RESULTS_FILES: RecordSchema['others'] = [
  { command: 'get', columns: GET_COLUMNS, marks: GET_MARKS },
  { command: 'rotate', columns: ROTATE_COLUMNS, marks: ROTATE_MARKS },
  { command: 'rotate', columns: ROTATE_COLUMNS_BEFORE_AT, marks: ROTATE_MARKS },
  { command: 'update', columns: UPDATE_COLUMNS, marks: UPDATE_MARKS },
  { command: 'delete', columns: DELETE_COLUMNS, marks: DELETE_MARKS },
];

/** The results files of every command but `command`: what its `--output`/`--resume` refuses. */
export function otherResultsFiles(command: string): RecordSchema['others'] {
  return RESULTS_FILES.filter((file) => file.command !== command);
}
