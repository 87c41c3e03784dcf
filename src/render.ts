/**
 * Every line ugs writes goes through here: results (a table, the raw JSON body, or one field),
 * messages and notes on stderr, and `error:`/`hint:` lines. The data is collected once by a
 * command, then shown. Colour and table borders are decoration for a terminal; the libraries that
 * draw them are loaded only when a table or colour is actually wanted.
 */
import {
  detectCi,
  errorCommand,
  hasCiMarker,
  maskSecret,
  maskTokensIn,
  underCiRunner,
  writeCiCommand,
} from './ci.js';
import { ApiError, CiMarkerError, UgsError } from './errors.js';
import {
  colorEnabled,
  escapeControls,
  type IO,
  stderrColumns,
  stdoutColumns,
  unicodeTerminal,
  writeLine,
} from './io.js';
import { compactJson, prettyJson } from './json-text.js';
import { type JsonObject, quote } from './parse.js';
import type { Preferences } from './settings.js';

export type OutputFormat = { kind: 'table' } | { kind: 'json' } | { kind: 'field'; name: string };

interface Style {
  bold(text: string): string;
  dim(text: string): string;
  green(text: string): string;
  yellow(text: string): string;
  red(text: string): string;
  cyan(text: string): string;
}

export const plainStyle: Style = {
  bold: (t) => t,
  dim: (t) => t,
  green: (t) => t,
  yellow: (t) => t,
  red: (t) => t,
  cyan: (t) => t,
};

async function styleFor(
  io: IO,
  preferences: Pick<Preferences, 'noColor'>,
  stream: 'stdout' | 'stderr',
): Promise<Style> {
  if (!colorEnabled(io, preferences.noColor, stream)) return plainStyle;
  const { Chalk } = await import('./vendor/chalk.js');
  const chalk = new Chalk({ level: 1 });
  return {
    bold: (t) => chalk.bold(t),
    dim: (t) => chalk.dim(t),
    green: (t) => chalk.green(t),
    yellow: (t) => chalk.yellow(t),
    red: (t) => chalk.red(t),
    cyan: (t) => chalk.cyan(t),
  };
}

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
function tableLayout(io: Pick<IO, 'stdout' | 'stdoutIsTTY' | 'env'>): TableLayout {
  if (!io.stdoutIsTTY) return { kind: 'lines' };
  return { kind: 'box', columns: stdoutColumns(io), ascii: !unicodeTerminal(io.env) };
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
  const { Table, cellWidth } = await import('./vendor/table.js');
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

interface Piece {
  text: string;
  width: number;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are units of their own
const UNITS = /\u001b\[[0-9;]*m|[\s\S]/gu;

/** After these a line may break: spaces, and JSON's `,` and `:`. */
const BREAK_AFTER = new Set([' ', ',', ':', '/', '-']);

/**
 * Greedy wrapping by display width: the first line gets `firstWidth` columns, the others
 * `restWidth`. A line breaks after the last space or punctuation that fits, or mid-word when a
 * word is longer than a line. Each character is looked at a bounded number of times.
 */
export function wrapText(text: string, firstWidth: number, restWidth: number): Piece[] {
  // Colour codes are kept whole and take no room (a terminal keeps the colour across lines).
  const chars = text.includes('\u001b') ? (text.match(UNITS) ?? []) : Array.from(text);
  const widths = chars.map((unit) => (unit.startsWith('\u001b') ? 0 : charWidth(unit)));
  const pieces: Piece[] = [];
  let start = 0;
  while (start < chars.length) {
    // A continuation line does not start with the space it was broken at.
    if (pieces.length > 0) {
      while (start < chars.length && chars[start] === ' ') start++;
      if (start === chars.length) break;
    }
    const limit = Math.max(1, pieces.length === 0 ? firstWidth : restWidth);
    let width = 0;
    let end = start;
    let lastBreak = -1;
    while (end < chars.length && width + (widths[end] as number) <= limit) {
      width += widths[end] as number;
      if (BREAK_AFTER.has(chars[end] as string)) lastBreak = end + 1;
      end++;
    }
    // A character wider than the whole line still has to go somewhere.
    if (end === start) end = start + 1;
    // Mid-word: go back to the last break, unless the word ends exactly at the edge.
    if (end < chars.length && chars[end] !== ' ' && lastBreak > start) end = lastBreak;
    let lineEnd = end;
    while (lineEnd > start + 1 && chars[lineEnd - 1] === ' ') lineEnd--;
    const slice = chars.slice(start, lineEnd);
    let sliceWidth = 0;
    for (let i = start; i < lineEnd; i++) sliceWidth += widths[i] as number;
    pieces.push({ text: slice.join(''), width: sliceWidth });
    start = end;
  }
  return pieces.length === 0 ? [{ text: '', width: 0 }] : pieces;
}

/**
 * Columns a terminal gives to text, in one pass: colour codes take none, combining marks and
 * zero-width characters none, East Asian wide and fullwidth characters and emoji two.
 */
function displayWidth(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what is removed
  const visible = text.includes('\u001b') ? text.replace(/\u001b\[[0-9;]*m/g, '') : text;
  let width = 0;
  for (const char of visible) width += charWidth(char);
  return width;
}

function charWidth(char: string): number {
  const code = char.codePointAt(0) as number;
  if (code < 0x300) return 1;
  // The numeric ranges first: CJK text would otherwise pay for two regex tests per character.
  if (isWide(code)) return 2;
  if (ZERO_WIDTH.test(char)) return 0;
  return EMOJI.test(char) ? 2 : 1;
}

const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const EMOJI = /^\p{Extended_Pictographic}$/u;

/** East Asian Wide (W) and Fullwidth (F) blocks, as terminals draw them. */
function isWide(code: number): boolean {
  return (
    (code >= 0x1100 && code <= 0x115f) ||
    (code >= 0x2e80 && code <= 0x303e) ||
    (code >= 0x3041 && code <= 0x33ff) ||
    (code >= 0x3400 && code <= 0x4dbf) ||
    (code >= 0x4e00 && code <= 0x9fff) ||
    (code >= 0xa000 && code <= 0xa4cf) ||
    (code >= 0xa960 && code <= 0xa97f) ||
    (code >= 0xac00 && code <= 0xd7a3) ||
    (code >= 0xf900 && code <= 0xfaff) ||
    (code >= 0xfe30 && code <= 0xfe4f) ||
    (code >= 0xff00 && code <= 0xff60) ||
    (code >= 0xffe0 && code <= 0xffe6) ||
    (code >= 0x1f300 && code <= 0x1f64f) ||
    (code >= 0x1f900 && code <= 0x1f9ff) ||
    (code >= 0x20000 && code <= 0x3fffd)
  );
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
function renderField(record: ResultRecord, name: string, io: Pick<IO, 'env'>): string {
  if (!Object.hasOwn(record.fields, name)) {
    throw new ApiError(`the answer's ${record.name} has no field ${quote(name)}`, {
      hint: `fields in this answer: ${listFields(orderedFields(record.fields, record.order))}`,
    });
  }
  const text = escapeControls(formatValue(record.fields[name]));
  // Printed escaped, `$(ugs ... --field x)` would capture another value than the service's;
  // printed raw, the runner would obey it. --json carries it JSON-escaped: the same value.
  if (underCiRunner(io.env) && hasCiMarker(text)) {
    throw new CiMarkerError(
      `the answer's ${record.name} field ${quote(name)} holds text that the CI runner would run as a workflow command; ugs does not print it as a bare value`,
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

export async function printResult(
  io: IO,
  preferences: Pick<Preferences, 'noColor' | 'quiet'>,
  output: ResultOutput,
): Promise<void> {
  // Under a CI runner, every token in the answer is masked before any of it is written.
  const token = output.record.fields.token;
  if (typeof token === 'string') maskSecret(io, token);
  maskTokensIn(io, output.body);
  maskTokensIn(io, output.record.fields);
  switch (output.format.kind) {
    case 'json':
      writeLine(io.stdout, renderJson(output.body));
      return;
    case 'field':
      writeLine(io.stdout, renderField(output.record, output.format.name, io));
      return;
    case 'table': {
      const style = await styleFor(io, preferences, 'stdout');
      const layout = tableLayout(io);
      if (layout.kind === 'lines') {
        // Into a pipe stdout carries only `key<TAB>value` lines; the headline is a message for
        // the person, so it goes to stderr, except a line that repeats the token (stdout has
        // it, and a log must not get a copy).
        const stderrStyle = await styleFor(io, preferences, 'stderr');
        const shownToken = typeof token === 'string' ? escapeControls(token) : '';
        for (const line of output.headline(stderrStyle)) {
          if (shownToken === '' || !line.includes(shownToken)) {
            printLine(io, preferences, line);
          }
        }
      } else if (layout.kind === 'box') {
        // Fitted to the terminal like the table; a line with the token is never broken.
        const shownToken = typeof token === 'string' ? escapeControls(token) : '';
        for (const line of output.headline(style)) {
          if (shownToken !== '' && line.includes(shownToken)) writeLine(io.stdout, line);
          else
            for (const piece of wrapText(line, layout.columns, layout.columns)) {
              writeLine(io.stdout, piece.text);
            }
        }
      }
      writeLine(
        io.stdout,
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
  io: IO,
  format: OutputFormat,
  call: () => Promise<T>,
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (format.kind === 'json' && error instanceof UgsError && error.body !== undefined) {
      maskTokensIn(io, error.body);
      writeLine(io.stdout, renderJson(error.body));
    }
    throw error;
  }
}

/** A value of ours (not a server body) as `--json` output. */
export function printJson(io: IO, value: unknown): void {
  writeLine(io.stdout, renderJson(value));
}

/** A field/value table on stdout (e.g. `ugs status`); a missing value shows as a dim `(none)`. */
export async function printFieldTable(
  io: IO,
  preferences: Pick<Preferences, 'noColor'>,
  rows: readonly (readonly [field: string, text: string | null])[],
): Promise<void> {
  const style = await styleFor(io, preferences, 'stdout');
  // Dimmed by the table after escaping, so the colour codes are not shown as text.
  const tableRows = rows.map(
    ([field, text]): TableRow => (text === null ? [field, '(none)', style.dim] : [field, text]),
  );
  writeLine(io.stdout, await renderTable(tableRows, style, tableLayout(io)));
}

/**
 * A message for the person, on stderr whatever the output format: stdout is for results.
 * `--quiet` silences every such note, warning and progress line; errors go through `printError`.
 */
export function printLine(io: IO, preferences: Pick<Preferences, 'quiet'>, text: string): void {
  if (preferences.quiet) return;
  writeLine(io.stderr, io.stderrIsTTY ? fitMessage(text, stderrColumns(io)) : text);
}

/**
 * A message at a terminal, broken at spaces to fit its width. A word longer than a line (a path,
 * a URL, a token) stays whole, so it still copies as one; into a log, lines are left as they are.
 */
export function fitMessage(text: string, columns: number): string {
  return text
    .split('\n')
    .map((paragraph) => {
      if (displayWidth(paragraph) <= columns) return paragraph;
      const lines: string[] = [];
      let line: string | undefined;
      let width = 0;
      for (const word of paragraph.split(' ')) {
        const wordWidth = displayWidth(word);
        if (line === undefined) {
          line = word;
          width = wordWidth;
        } else if (width + 1 + wordWidth <= columns) {
          line += ` ${word}`;
          width += 1 + wordWidth;
        } else {
          lines.push(line);
          line = word;
          width = wordWidth;
        }
      }
      if (line !== undefined) lines.push(line);
      return lines.join('\n');
    })
    .join('\n');
}

/** A message in the colour of success or of a warning (when colour is on). */
export async function printMessage(
  io: IO,
  preferences: Pick<Preferences, 'noColor' | 'quiet'>,
  text: string,
  tone: 'success' | 'warning',
): Promise<void> {
  const style = await styleFor(io, preferences, 'stderr');
  printLine(io, preferences, tone === 'success' ? style.green(text) : style.yellow(text));
}

/** A `note:` the service client reports, e.g. a redirect it followed. */
export function printNote(io: IO, preferences: Pick<Preferences, 'quiet'>, text: string): void {
  printLine(io, preferences, `note: ${text}`);
}

/** `note:` in the warning colour, then the text. */
export async function printWarningNote(
  io: IO,
  preferences: Pick<Preferences, 'noColor' | 'quiet'>,
  text: string,
): Promise<void> {
  const style = await styleFor(io, preferences, 'stderr');
  printLine(io, preferences, `${style.yellow('note:')} ${text}`);
}

/**
 * `error: <message>` and `hint: <hint>` on stderr; with `--debug`, the stack of the error and of
 * each cause.
 */
export async function printError(
  io: IO,
  preferences: Pick<Preferences, 'noColor' | 'debug'>,
  report: { message: string; hint: string | undefined; error: unknown },
): Promise<void> {
  const style = await styleFor(io, preferences, 'stderr');
  writeLine(io.stderr, `${style.red('error:')} ${report.message}`);
  if (report.hint) writeLine(io.stderr, `${style.dim('hint:')} ${report.hint}`);
  const ci = detectCi(io.env);
  if (ci !== undefined) {
    // An annotation on the run's page, with the hint as its second line.
    const text = report.hint ? `${report.message}\n${report.hint}` : report.message;
    writeCiCommand(io.stderr, errorCommand(ci, text));
  }
  if (!preferences.debug) return;
  for (let current: unknown = report.error; current instanceof Error; current = current.cause) {
    writeLine(io.stderr, current.stack ?? String(current));
  }
}

/**
 * The `Examples:` section of a help text, fitted to `width` columns: a trailing `# comment` that
 * does not fit goes on its own line above its command, and a command longer than a line is
 * continued with ` \\` at a space outside quotes, so every line still pastes into a shell.
 */
export function formatExamples(examples: readonly string[], width = 80): string {
  const lines = ['Examples:'];
  for (const example of examples) {
    if (displayWidth(`  $ ${example}`) <= width) {
      lines.push(`  $ ${example}`);
      continue;
    }
    const commented = /^(.*?)\s{2,}#\s+(.*)$/.exec(example);
    const command = commented?.[1] ?? example;
    if (commented?.[2] !== undefined) {
      for (const piece of wrapText(commented[2], width - 4, width - 4)) {
        lines.push(`  # ${piece.text}`);
      }
    }
    lines.push(...continueCommand(command, width));
  }
  return lines.join('\n');
}

const SHELL_OPERATOR = /^(\||\|\||&&|;|<|>|>>|2>&1)$/;

/** `  $ words...`, broken at spaces outside quotes into ` \\`-continued lines of `width`. */
function continueCommand(command: string, width: number): string[] {
  const words: string[] = [];
  let word = '';
  let quote: string | undefined;
  for (const char of command) {
    if (quote !== undefined) {
      if (char === quote) quote = undefined;
    } else if (char === '"' || char === "'") {
      quote = char;
    } else if (char === ' ') {
      if (word !== '') words.push(word);
      word = '';
      continue;
    }
    word += char;
  }
  if (word !== '') words.push(word);
  // `--field token` stays together on one line: a flag and its value read as one.
  const units: string[] = [];
  for (const next of words) {
    const last = units.at(-1);
    const joins =
      last !== undefined &&
      /^--?[\w-]+$/.test(last) &&
      !next.startsWith('-') &&
      !SHELL_OPERATOR.test(next);
    if (joins) units[units.length - 1] = `${last} ${next}`;
    else units.push(next);
  }
  const lines: string[] = [];
  let line = '  $';
  for (const next of units) {
    // Room for " word" and, unless it is the last word, the " \\" that continues the line.
    if (line.trim() !== '$' && line.trim() !== '' && displayWidth(`${line} ${next} \\`) > width) {
      lines.push(`${line} \\`);
      line = '      ';
      line += next;
      continue;
    }
    line += line.endsWith(' ') ? next : ` ${next}`;
  }
  lines.push(line);
  return lines;
}
