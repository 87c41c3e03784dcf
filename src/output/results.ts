/**
 * Results on stdout: a table, the raw JSON body, or one field. The data is collected once by a
 * command, then shown. Colour and table borders are decoration for a terminal; the libraries that
 * draw them are loaded only when a table or colour is actually wanted.
 */

import { ApiError, CiMarkerError, UgsError } from '../errors.js';
import type { JsonObject } from '../input/parse.js';
import { escapeControls, writeLine } from '../platform/io.js';
import { compactJson, prettyJson } from '../text/json-text.js';
import { message } from '../text/message.js';
import { hasCiMarker } from './ci.js';
import { printLine } from './messages.js';
import type { Output } from './output.js';
import type { Style } from './style.js';
import { displayWidth, type Piece, wrapText } from './text.js';

export type OutputFormat = { kind: 'table' } | { kind: 'json' } | { kind: 'field'; name: string };

/** One value as text: strings raw, `null` as such, everything else as compact JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return value;
  if (value === undefined) return '';
  // Not JSON.stringify: a value from the wire may nest 100,000 levels deep.
  return compactJson(value);
}

/** `order`'s fields first (those present), then the others as sent. */
function orderedFields(record: JsonObject, order: readonly string[] = []): string[] {
  const known = order.filter((field) => Object.hasOwn(record, field));
  const unknown = Object.keys(record).filter((field) => !order.includes(field));
  return [...known, ...unknown];
}

/** A table row: field, value, and an optional decoration applied after escaping the value. */
type TableRow = readonly [field: string, value: string, decorate?: (text: string) => string];

/**
 * How a field/value table is drawn. `lines`: `key<TAB>value`, one field a line, for pipes and
 * files (as `gh` does), nothing to strip before `cut -f2`. `box`: a two-column box fitted to
 * `columns` (long values wrap inside their cell); when even that cannot fit, `key: value` lines.
 * `ascii` draws the box with `+-|` for terminals that cannot show box characters.
 */
export type TableLayout = { kind: 'lines' } | { kind: 'box'; columns: number; ascii: boolean };

/** A box without a width limit: for callers that draw a table for themselves. */
const UNLIMITED_BOX: TableLayout = { kind: 'box', columns: Number.POSITIVE_INFINITY, ascii: false };

/** The layout for a table on this run's stdout. */
function tableLayout(out: Output): TableLayout {
  if (!out.stdoutIsTTY) return { kind: 'lines' };
  return { kind: 'box', columns: out.stdoutColumns(), ascii: !out.unicode };
}

/**
 * Fields whose values are never broken across lines: a token copied from a terminal must come
 * out whole. Their rows make the box wide enough, or the table falls back to `key: value` lines.
 */
const UNBREAKABLE_FIELD = /token/i;

/** Below this, a value column is too narrow to read: `key: value` lines instead. */
const MIN_VALUE_COLUMNS = 20;

/** `│ key │ value │`: the columns taken by borders and padding. */
const BOX_OVERHEAD = 7;

const UNICODE_BORDERS = { h: '─', v: '│', tl: '┌', tm: '┬', tr: '┐', bl: '└', bm: '┴', br: '┘' };
const ASCII_BORDERS = { h: '-', v: '|', tl: '+', tm: '+', tr: '+', bl: '+', bm: '+', br: '+' };

/**
 * cli-table3 is far from linear: for each line of a cell it measures the cell's whole text once per
 * character (to shorten it for a debug label), so a cell costs about lines x characters^2 (8,000
 * rows took 0.8 s, one 300,000-character wide-character value minutes, one 2,000-character value
 * wrapped at 80 columns 2 s). Past this budget, or this many lines, `drawBox` draws the same box in
 * time linear in the text. The budget is about 10 ms of cli-table3's time (50 for wide
 * characters): a value of 1,000 characters on one line, or of 400 wrapped at 80 columns.
 */
const TABLE_LIBRARY_MAX_COST = 1_000_000;
const TABLE_LIBRARY_MAX_LINES = 200;

interface Cell {
  key: string;
  keyWidth: number;
  /** Escaped, not yet decorated. */
  value: string;
  valueWidth: number;
  breakable: boolean;
  decorate: ((text: string) => string) | undefined;
}

/** A row of the box, ready to draw: key and value lines decorated, with their display widths. */
interface BoxRow {
  key: Piece;
  lines: Piece[];
}

/**
 * A field/value table in the given layout. A box that fits its width is drawn by cli-table3 (its
 * columns fixed by `colWidths`), a big one by `drawBox` in time linear in the text, wrapping
 * included; both draw the same characters.
 */
export async function renderTable(
  rows: readonly TableRow[],
  style: Style,
  layout: TableLayout = UNLIMITED_BOX,
): Promise<string> {
  const cells = rows.map(([field, value, decorate]): Cell => {
    // Escape first, then decorate: escaping a styled value would print its colour codes as text.
    const key = escapeControls(field);
    const text = escapeControls(value);
    return {
      key,
      keyWidth: displayWidth(key),
      value: text,
      valueWidth: displayWidth(text),
      breakable: !UNBREAKABLE_FIELD.test(field),
      decorate,
    };
  });
  const paint = (cell: Cell, text: string) => (cell.decorate ? cell.decorate(text) : text);
  if (layout.kind === 'lines') {
    return cells.map((cell) => `${style.cyan(cell.key)}\t${paint(cell, cell.value)}`).join('\n');
  }
  const keyWidth = Math.max(0, ...cells.map((cell) => cell.keyWidth));
  const widest = Math.max(0, ...cells.map((cell) => cell.valueWidth));
  const unbreakable = Math.max(0, ...cells.map((cell) => (cell.breakable ? 0 : cell.valueWidth)));
  const room = layout.columns - BOX_OVERHEAD - keyWidth;
  if (!(room >= widest || (room >= unbreakable && room >= MIN_VALUE_COLUMNS))) {
    return keyValueLines(cells, style, layout.columns, paint);
  }
  const valueWidth = Math.min(widest, room);
  // The value lines are wrapped here, not by cli-table3: its word wrap cuts a word longer than the
  // cell with '…', and its wrap at any character counts UTF-16 units (a wide character takes two
  // columns) and splits colour codes. An unbreakable value always fits: the layout checked that.
  const boxRows = cells.map(
    (cell): BoxRow => ({
      key: { text: style.cyan(cell.key), width: cell.keyWidth },
      lines: (cell.valueWidth <= valueWidth
        ? [{ text: cell.value, width: cell.valueWidth }]
        : wrapText(cell.value, valueWidth, valueWidth)
      ).map((piece) => ({ text: paint(cell, piece.text), width: piece.width })),
    }),
  );
  let lines = 0;
  let cost = 0;
  for (const row of boxRows) {
    const valueLength = row.lines.reduce((sum, line) => sum + line.text.length + 1, 0);
    lines += row.lines.length;
    cost += row.lines.length * (row.key.text.length ** 2 + valueLength ** 2);
  }
  const small = lines <= TABLE_LIBRARY_MAX_LINES && cost <= TABLE_LIBRARY_MAX_COST;
  const drawn = small ? await drawWithLibrary(boxRows, keyWidth, valueWidth, layout.ascii) : '';
  return drawn || drawBox(boxRows, keyWidth, valueWidth, layout.ascii);
}

/**
 * The box by cli-table3, or '' when cli-table3 measures a text differently from the terminal
 * widths used here (a zero-width space, say): its fixed columns would then cut that text.
 */
async function drawWithLibrary(
  rows: readonly BoxRow[],
  keyWidth: number,
  valueWidth: number,
  ascii: boolean,
): Promise<string> {
  const { Table, cellWidth } = await import('../vendor/table.js');
  const measuredAlike = rows.every(
    (row) =>
      cellWidth(row.key.text) === row.key.width &&
      row.lines.every((line) => cellWidth(line.text) === line.width),
  );
  if (!measuredAlike) return '';
  const b = ascii ? ASCII_BORDERS : UNICODE_BORDERS;
  const table = new Table({
    // Padding of one space on each side is included in cli-table3's column widths.
    colWidths: [keyWidth + 2, valueWidth + 2],
    // The lines come wrapped to fit (see renderTable); each is one line of the cell.
    wordWrap: false,
    // cli-table3 colours head and border by itself, even into a pipe: colour is ours to decide.
    style: { head: [], border: [] },
    chars: {
      top: b.h,
      'top-mid': b.tm,
      'top-left': b.tl,
      'top-right': b.tr,
      bottom: b.h,
      'bottom-mid': b.bm,
      'bottom-left': b.bl,
      'bottom-right': b.br,
      left: b.v,
      middle: b.v,
      right: b.v,
      // No rule between rows: a short table reads better without one.
      mid: '',
      'left-mid': '',
      'mid-mid': '',
      'right-mid': '',
    },
  });
  // Field names down the left say what each row is; a header row would only repeat that.
  for (const row of rows) table.push([row.key.text, row.lines.map((line) => line.text).join('\n')]);
  return table.toString();
}

/** cli-table3's box as configured in `drawWithLibrary`, drawn in time linear in the text. */
function drawBox(
  rows: readonly BoxRow[],
  keyWidth: number,
  valueWidth: number,
  ascii: boolean,
): string {
  const b = ascii ? ASCII_BORDERS : UNICODE_BORDERS;
  const rule = (left: string, mid: string, right: string) =>
    `${left}${b.h.repeat(keyWidth + 2)}${mid}${b.h.repeat(valueWidth + 2)}${right}`;
  const lines = [rule(b.tl, b.tm, b.tr)];
  const blankKey = ' '.repeat(keyWidth);
  for (const row of rows) {
    const key = `${row.key.text}${' '.repeat(keyWidth - row.key.width)}`;
    row.lines.forEach((line, i) => {
      const pad = ' '.repeat(Math.max(0, valueWidth - line.width));
      lines.push(`${b.v} ${i === 0 ? key : blankKey} ${b.v} ${line.text}${pad} ${b.v}`);
    });
  }
  lines.push(rule(b.bl, b.bm, b.br));
  return lines.join('\n');
}

/**
 * The narrow layout: `key: value`, a long value continued on lines indented by two spaces; an
 * unbreakable value (a token) stays whole on its line even when the terminal is narrower.
 */
function keyValueLines(
  cells: readonly Cell[],
  style: Style,
  columns: number,
  paint: (cell: Cell, text: string) => string,
): string {
  const lines: string[] = [];
  for (const cell of cells) {
    const lead = `${style.cyan(cell.key)}: `;
    const leadWidth = cell.keyWidth + 2;
    if (!cell.breakable || leadWidth + cell.valueWidth <= columns) {
      lines.push(`${lead}${paint(cell, cell.value)}`);
      continue;
    }
    const first = columns - leadWidth;
    if (first >= MIN_VALUE_COLUMNS) {
      const pieces = wrapText(cell.value, first, columns - 2);
      pieces.forEach((piece, i) => {
        lines.push(`${i === 0 ? lead : '  '}${paint(cell, piece.text)}`);
      });
    } else {
      // A key as wide as the terminal: the key (wrapped too) and then its value below it.
      for (const piece of wrapText(`${cell.key}:`, columns, columns)) {
        lines.push(style.cyan(piece.text));
      }
      for (const piece of wrapText(cell.value, columns - 2, columns - 2)) {
        lines.push(`  ${paint(cell, piece.text)}`);
      }
    }
  }
  return lines.join('\n');
}

/** One row per field of `record`, `order`'s fields first; `null` dimmed. */
export async function renderRecordTable(
  record: JsonObject,
  style: Style,
  order: readonly string[] = [],
  layout?: TableLayout,
): Promise<string> {
  const rows = orderedFields(record, order).map((field): TableRow => {
    const value = record[field];
    return value === null ? [field, formatValue(value), style.dim] : [field, formatValue(value)];
  });
  return renderTable(rows, style, layout);
}

/**
 * `--json`: exactly the body the server sent, re-indented from its text (its numbers as sent,
 * however deep it nests), controls inside strings as `\u` escapes, and nothing else on stdout.
 */
function renderJson(body: unknown): string {
  return prettyJson(body);
}

/**
 * `--field`: a script's way to take one value; a missing field must not look like an empty one.
 * The value is escaped like every other server-controlled text: a token or id holds no control
 * characters, and one that does (a newline, an ESC) is the server's mischief, which `$(...)` would
 * otherwise carry into a terminal or split into two lines.
 */
/**
 * One field of a record as `--field` prints it: the value as text, control characters escaped;
 * a field the record lacks is exit 1 naming the fields it has.
 */
export function renderField(record: ResultRecord, name: string, out: Output): string {
  if (!Object.hasOwn(record.fields, name)) {
    throw new ApiError(message`the answer's ${record.name} has no field "${name}"`, {
      hint: `fields in this answer: ${listFields(orderedFields(record.fields, record.order))}`,
    });
  }
  const text = escapeControls(formatValue(record.fields[name]));
  // Printed escaped, `$(ugs ... --field x)` would capture another value than the service's;
  // printed raw, the runner would obey it. --json carries it JSON-escaped: the same value.
  if (out.underCiRunner && hasCiMarker(text)) {
    throw new CiMarkerError(
      message`the answer's ${record.name} field "${name}" holds text that the CI runner would run as a workflow command; ugs does not print it as a bare value`,
      { hint: 'use --json instead: it carries the value with the marker JSON-escaped' },
    );
  }
  return text;
}

/** Field names for a hint: escaped, and not all 60,000 of them when a server sends that many. */
function listFields(fields: readonly string[]): string {
  const shown = fields.slice(0, 20).map(escapeControls).join(', ');
  return fields.length > 20 ? `${shown}, ... (${fields.length} in all)` : shown;
}

/** The object in an answer that the table and `--field` show, e.g. the `user_group`. */
export interface ResultRecord {
  /** Its key in the answer, for messages: "the answer's user_group has no field ...". */
  name: string;
  fields: JsonObject;
  /** Fields shown first, in this order; the rest follow as sent. */
  order?: readonly string[];
}

interface ResultOutput {
  format: OutputFormat;
  /** The whole response body (for `--json`). */
  body: JsonObject;
  record: ResultRecord;
  /** Lines shown above the table, e.g. "Created user group acme". Not shown with --json/--field. */
  headline: (style: Style) => string[];
}

export async function printResult(out: Output, output: ResultOutput): Promise<void> {
  // Under a CI runner, every token in the answer is masked before any of it is written.
  const token = output.record.fields.token;
  if (typeof token === 'string') out.maskSecret(token);
  // The token as the headline shows it, to keep it out of a log (pipe) or whole (terminal).
  const shownToken = typeof token === 'string' ? escapeControls(token) : '';
  out.maskTokensIn(output.body);
  out.maskTokensIn(output.record.fields);
  switch (output.format.kind) {
    case 'json':
      writeLine(out.stdout, renderJson(output.body));
      return;
    case 'field':
      writeLine(out.stdout, renderField(output.record, output.format.name, out));
      return;
    case 'table': {
      const style = await out.style('stdout');
      const layout = tableLayout(out);
      if (layout.kind === 'lines') {
        // Into a pipe stdout carries only `key<TAB>value` lines; the headline is a message for
        // the person, so it goes to stderr, except a line that repeats the token (stdout has
        // it, and a log must not get a copy).
        const stderrStyle = await out.style('stderr');
        for (const line of output.headline(stderrStyle)) {
          if (shownToken === '' || !line.includes(shownToken)) {
            printLine(out, line);
          }
        }
      } else if (layout.kind === 'box') {
        // Fitted to the terminal like the table; a line with the token is never broken.
        for (const line of output.headline(style)) {
          if (shownToken !== '' && line.includes(shownToken)) writeLine(out.stdout, line);
          else
            for (const piece of wrapText(line, layout.columns, layout.columns)) {
              writeLine(out.stdout, piece.text);
            }
        }
      }
      writeLine(
        out.stdout,
        await renderRecordTable(output.record.fields, style, output.record.order, layout),
      );
      return;
    }
  }
}

/**
 * Runs a service call; with `--json`, a JSON error body from the service is also printed on
 * stdout, so scripts can read the service's own words.
 */
export async function withJsonErrorBody<T>(
  out: Output,
  format: OutputFormat,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (format.kind === 'json' && error instanceof UgsError && error.body !== undefined) {
      out.maskTokensIn(error.body);
      writeLine(out.stdout, renderJson(error.body));
    }
    throw error;
  }
}

/** A value of ours (not a server body) as `--json` output. */
export function printJson(out: Output, value: unknown): void {
  writeLine(out.stdout, renderJson(value));
}

/** A field/value table on stdout (e.g. `ugs status`); a missing value shows as a dim `(none)`. */
export async function printFieldTable(
  out: Output,
  rows: readonly (readonly [field: string, text: string | null])[],
): Promise<void> {
  const style = await out.style('stdout');
  // Dimmed by the table after escaping, so the colour codes are not shown as text.
  const tableRows = rows.map(
    ([field, text]): TableRow => (text === null ? [field, '(none)', style.dim] : [field, text]),
  );
  writeLine(out.stdout, await renderTable(tableRows, style, tableLayout(out)));
}
