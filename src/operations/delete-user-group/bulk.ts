/**
 * `ugs delete --from`: one current_token per row (an optional user_group_id is the caller's note:
 * never sent, written to the records and the history). A delete is at risk (its `risk`): each row
 * is journaled in `--output` before it is sent, so `--resume` never sends a row that got an answer
 * again, and a row whose answer was lost is settled by sending the same delete once more: a
 * delete cannot happen twice, and the service's 404 to the repeat ("no group has that token")
 * after the row's `sending` record means the first one deleted the group, unseen.
 */

import { wholeTokenProblem } from '../../bulk/records.js';
import { currentTokenField, groupText } from '../../bulk/row-fields.js';
import type { BulkSpec, RecordOutcome, Settled } from '../../bulk/spec.js';
import { ApiError } from '../../errors.js';
import type { RowFields } from '../../input/bulk-options.js';
import type { ServiceClient } from '../../service/client.js';
import type { ServiceResult } from '../../service/user-group.js';
import { message } from '../../text/message.js';
import { DELETE_COLUMNS, DELETE_MARKS, otherResultsFiles } from '../user-group-records.js';
import {
  type DeleteResult,
  type DeleteUserGroupRequest,
  deleteUserGroup,
  noGroupWithToken,
} from './operation.js';

export interface DeleteRow {
  row: number;
  line: number;
  current_token: string;
  user_group_id?: string;
}

/**
 * The engine's results carry a group; a delete answers none (only `success`), so the group is
 * empty and a delete's record takes nothing from it but the answer's status.
 */
function answerOf(result: DeleteResult): ServiceResult {
  return {
    body: result.body,
    text: result.text,
    status: result.status,
    userGroup: { token: '' },
    created: undefined,
  };
}

/**
 * What settling learnt from a 404 to the delete sent again: the group was gone already, so the
 * earlier request of the row deleted it. Compared by identity in `outcome`.
 */
const GONE: ServiceResult = { body: {}, userGroup: { token: '' }, created: undefined };

/** A row settled by a 404: deleted, as the earlier request did it, with no answer of its own. */
const SETTLED: RecordOutcome = { status: 'deleted', settled_by: 'delete', http_status: null };

function requestOf(row: DeleteRow): DeleteUserGroupRequest {
  return {
    current_token: row.current_token,
    ...(row.user_group_id !== undefined && { user_group_id: row.user_group_id }),
  };
}

/** The delete; a 404 is "no group has that token" (the token is not named, nor the id). */
async function send(client: ServiceClient, row: DeleteRow): Promise<ServiceResult> {
  try {
    return answerOf(await client.deleteUserGroup(requestOf(row)));
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) throw noGroupWithToken(error, undefined);
    throw error;
  }
}

export const spec: BulkSpec<DeleteRow> = {
  rows: {
    // `name` is taken (and not used) so that a rotate input file serves as it is.
    fields: new Set(['current_token', 'user_group_id', 'name']),
    required: ['current_token'],
    objects: [],
    // V8 quotes the text near a JSON error, which may be a current token.
    quoteJsonErrors: false,
    check: deleteRow,
    fromResults: deleteRowFromResults,
    unique: {
      key: (row) => row.current_token,
      normalize: false,
      // The second delete of one token could only be refused (404) and read as a failure.
      problem: (_row, first) => `same current_token as row ${first}`,
    },
  },
  records: {
    command: 'delete',
    columns: DELETE_COLUMNS,
    extras: [{ field: 'settled_by', always: false, resume: false }],
    marks: DELETE_MARKS,
    others: otherResultsFiles('delete'),
  },
  secrets: (row) => deleteUserGroup.secrets(requestOf(row)),
  send,
  /**
   * Every answer of a delete is `deleted`. `settled` is true for a row settled after a lost
   * answer: when the delete sent again was answered (the first never reached the group), this
   * request deleted it and the record is as any other; a 404 (GONE) is the earlier one's doing.
   */
  outcome(_row, result): RecordOutcome {
    if (result === GONE) return SETTLED;
    return { status: 'deleted', http_status: result.status ?? null };
  },
  risk: {
    delivery: deleteUserGroup.risk as NonNullable<typeof deleteUserGroup.risk>,
    needsYes: {
      message: '--yes is required to delete user groups when not running interactively',
      hint: 'a delete cannot be undone and breaks every dashboard that embeds the token; add --yes to confirm in scripts',
    },
    question: (count) =>
      `Delete ${count} user ${count === 1 ? 'group' : 'groups'}? ${count === 1 ? 'Its token stops' : 'Their tokens stop'} working at once (dashboards that embed them break), and a delete cannot be undone.`,
    cancelled: 'delete cancelled; nothing was sent',
    unanswered: 'an earlier run sent this delete without an answer',
    noun: { one: 'delete', many: 'deletes' },
    checked: {
      notDone: 'not deleted',
      doingAgain: 'deleting it again',
      doAgain: 'delete it again',
      unchanged: 'the group is still there',
      reading: 'sending the delete again to check',
    },
    // Settling needs nothing but the row's token: no row lacks what it takes.
    lacksCheck: () => false,
    unsettleable: () => undefined,
    // DRF's get_object_or_404: no group has the token (any more).
    spent: (error) => error instanceof ApiError && error.status === 404,
    spentMeansDone: () => SETTLED,
    stale: 'not deleted by ugs: no group had the token',
    settledHow: 'by sending the delete again (404: the earlier request had deleted the group)',
    /**
     * Was the row's delete done? The same delete says: repeating it cannot delete anything twice,
     * and no read could tell more (the End User Group API has no read that creates nothing).
     * Answered: this one deleted the group; 404: the earlier one had.
     */
    async settle(client, row): Promise<Settled> {
      try {
        return { kind: 'happened', result: answerOf(await client.deleteUserGroup(requestOf(row))) };
      } catch (error) {
        if (error instanceof ApiError && error.status === 404) {
          return { kind: 'happened', result: GONE };
        }
        throw error;
      }
    },
  },
};

function deleteRow(
  row: number,
  line: number,
  fields: RowFields,
  problems: string[],
): DeleteRow | undefined {
  const user_group_id = groupText(fields, 'user_group_id', false, problems);
  // A row naming its group by id alone is not looked up: the explo dialect's only read creates a
  // missing group, and a token read here would have no journal of its own. Said plainly, with
  // the command that does delete by id.
  const idOnly =
    (fields.current_token === undefined || fields.current_token === null) &&
    user_group_id !== undefined;
  if (idOnly) {
    problems.push(
      'current_token is missing: delete --from deletes by token and does not look ids up (`ugs delete --id <user_group_id>` deletes one group by its id)',
    );
  }
  const current_token = idOnly ? '' : (currentTokenField(fields, problems) ?? '');
  // Checked as rotate checks it, though not kept: a delete has no name to record.
  groupText(fields, 'name', false, problems);
  if (problems.length > 0) return undefined;
  const result: DeleteRow = { row, line, current_token };
  if (user_group_id !== undefined) result.user_group_id = user_group_id;
  return result;
}

/** Statuses of a results record whose token is the group's current one. */
const CURRENT_TOKEN_STATUSES = new Set(['created', 'found', 'rotated']);

/**
 * A row of ugs's own results (`get --from --output`, `rotate --from --output`): the last record's
 * token is the current token. Any other last status has no token to delete (a delete's own
 * records carry none).
 */
function deleteRowFromResults(record: RowFields): RowFields | string {
  const status = typeof record.status === 'string' ? record.status : String(record.status);
  if (!CURRENT_TOKEN_STATUSES.has(status)) {
    return message`its last status in the results is "${status}", not created, found or rotated: it has no current token to delete`;
  }
  const noToken = wholeTokenProblem(record);
  if (noToken !== undefined) return noToken;
  const fields: RowFields = { current_token: record.token };
  if (record.user_group_id !== undefined && record.user_group_id !== null) {
    fields.user_group_id = record.user_group_id;
  }
  return fields;
}
