/**
 * A bulk run's records for a person at a terminal (stdout a terminal, no `--output`): one
 * readable line per row, not NDJSON, and never a whole token on the screen, where it would stay
 * in the scrollback and in screen shares. Into a pipe the records stay NDJSON (scripts parse
 * them); `--output` files are records too.
 */

import type { Style } from '../output/style.js';
import { displayWidth } from '../output/text.js';
import { escapeControls } from '../platform/io.js';
import { message } from '../text/message.js';
import type { BulkRecord, RecordStatus } from './records.js';

/** Ids wider than this are not padded to: one long id must not push every line to the right. */
const MAX_ID_COLUMN = 32;
/** The widest status a line shows (`mismatch`). */
const STATUS_WIDTH = 8;
/** Characters of a token a line shows: enough to tell tokens apart, too few to use one. */
const TOKEN_TAIL = 4;
/** A token shorter than this shows no characters at all: its last 4 would be most of it. */
const MIN_TOKEN_FOR_TAIL = 12;

const SUCCESS: readonly RecordStatus[] = ['created', 'found', 'rotated'];
const FAILURE: readonly RecordStatus[] = ['failed', 'mismatch', 'stale', 'unknown'];

export class RowLines {
  private headed = false;
  /** Whether a line showed part of a token (the closing note says where whole ones are). */
  shownTokens = false;
  private readonly rowWidth: number;
  private readonly idWidth: number;

  constructor(
    /** The input's rows, and its widest `user_group_id`: the widths of the first columns. */
    { rowCount, widestId }: { rowCount: number; widestId: number },
    private readonly style: Style,
    /** `…` at a UTF-8 terminal, `...` elsewhere. */
    private readonly ellipsis: string,
  ) {
    this.rowWidth = Math.max('ROW'.length, String(rowCount).length);
    this.idWidth = Math.max('USER_GROUP_ID'.length, Math.min(widestId, MAX_ID_COLUMN));
  }

  /** The lines for these records (the column names before the first), each with its newline. */
  text(records: readonly BulkRecord[]): string {
    let text = '';
    for (const record of records) {
      if (record.status === 'sending') continue; // a journal entry, not an outcome
      if (!this.headed) {
        this.headed = true;
        text += `${this.style.dim(this.columns('ROW', 'USER_GROUP_ID', 'STATUS', 'TOKEN'))}\n`;
      }
      text += `${this.line(record)}\n`;
    }
    return text;
  }

  private line(record: BulkRecord): string {
    const id = record.user_group_id === null ? '-' : escapeControls(record.user_group_id);
    const status = this.colour(record.status, record.status.padEnd(STATUS_WIDTH));
    const line = this.columns(String(record.row), id, status, this.tokenTail(record.token), true);
    const why = this.why(record);
    return why === '' ? line.trimEnd() : `${line}  ${why}`;
  }

  private columns(row: string, id: string, status: string, token: string, padded = false): string {
    const idPad = ' '.repeat(Math.max(0, this.idWidth - displayWidth(id)));
    const statusText = padded ? status : status.padEnd(STATUS_WIDTH);
    return `${row.padStart(this.rowWidth)}  ${id}${idPad}  ${statusText}  ${token.padEnd(TOKEN_TAIL + this.ellipsis.length)}`;
  }

  private tokenTail(token: string | null): string {
    if (token === null || token === '') return '-';
    this.shownTokens = true;
    return token.length < MIN_TOKEN_FOR_TAIL
      ? this.ellipsis
      : message`${this.ellipsis}${token.slice(-TOKEN_TAIL)}`;
  }

  /** What a row that did not succeed says; a skipped row only that it was not sent (the summary says why). */
  private why(record: BulkRecord): string {
    if (record.status === 'skipped') return 'not sent';
    if (record.error === null) return '';
    return escapeControls(record.error);
  }

  private colour(status: RecordStatus, text: string): string {
    if (SUCCESS.includes(status)) return this.style.green(text);
    if (FAILURE.includes(status)) return this.style.red(text);
    if (status === 'skipped') return this.style.yellow(text);
    return text;
  }
}
