/**
 * Every line ugs writes goes through here: results (a table, the raw JSON body, or one field),
 * messages and notes on stderr, and `error:`/`hint:` lines. The data is collected once by a
 * command, then shown. Colour and table borders are decoration for a terminal; the libraries that
 * draw them are loaded only when a table or colour is actually wanted.
 */
import { detectCi, errorCommand, maskSecret, maskTokensIn } from './ci.js';
import { ApiError, UgsError } from './errors.js';
import { colorEnabled, escapeControls, type IO, writeLine } from './io.js';
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

const plainStyle: Style = {
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
 * Past these sizes cli-table3 is far from linear (8,000 rows took 0.8 s, one 300,000-character
 * wide-character value minutes), so big answers are drawn by `renderPlainTable`, which gives the
 * same box in one pass.
 */
const TABLE_LIBRARY_MAX_ROWS = 200;
const TABLE_LIBRARY_MAX_CELL = 2000;

export async function renderTable(rows: readonly TableRow[], style: Style): Promise<string> {
  const cells = rows.map(([field, value, decorate]): [string, string] => {
    // Escape first, then decorate: escaping a styled value would print its colour codes as text.
    const text = escapeControls(value);
    return [style.cyan(escapeControls(field)), decorate ? decorate(text) : text];
  });
  const small =
    cells.length <= TABLE_LIBRARY_MAX_ROWS &&
    cells.every(
      ([k, v]) => k.length <= TABLE_LIBRARY_MAX_CELL && v.length <= TABLE_LIBRARY_MAX_CELL,
    );
  if (!small) return renderPlainTable(cells);
  const { Table } = await import('./vendor/table.js');
  // cli-table3 colours head and border by itself, even into a pipe: colour is ours to decide.
  // Field names down the left say what each row is; a header row would only repeat that.
  const table = new Table({
    style: { head: [], border: [] },
    // No rule between rows: a short table reads better without one.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    wordWrap: false,
  });
  for (const cell of cells) table.push(cell);
  return table.toString();
}

/** cli-table3's two-column box (as configured above), drawn in time linear in the text. */
function renderPlainTable(cells: readonly (readonly [string, string])[]): string {
  const widths = cells.map(([k, v]) => [displayWidth(k), displayWidth(v)] as const);
  const keyWidth = Math.max(0, ...widths.map(([k]) => k));
  const valueWidth = Math.max(0, ...widths.map(([, v]) => v));
  const rule = (left: string, mid: string, right: string) =>
    `${left}${'─'.repeat(keyWidth + 2)}${mid}${'─'.repeat(valueWidth + 2)}${right}`;
  const lines = [rule('┌', '┬', '┐')];
  cells.forEach(([k, v], i) => {
    const [kw, vw] = widths[i] as readonly [number, number];
    lines.push(`│ ${k}${' '.repeat(keyWidth - kw)} │ ${v}${' '.repeat(valueWidth - vw)} │`);
  });
  lines.push(rule('└', '┴', '┘'));
  return lines.join('\n');
}

/**
 * Columns a terminal gives to text, in one pass: colour codes take none, combining marks and
 * zero-width characters none, East Asian wide and fullwidth characters and emoji two.
 */
function displayWidth(text: string): number {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: colour codes are what is removed
  const visible = text.includes('\u001b') ? text.replace(/\u001b\[[0-9;]*m/g, '') : text;
  let width = 0;
  for (const char of visible) {
    const code = char.codePointAt(0) as number;
    if (code < 0x300) width += 1;
    else if (ZERO_WIDTH.test(char)) width += 0;
    else if (isWide(code) || EMOJI.test(char)) width += 2;
    else width += 1;
  }
  return width;
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
): Promise<string> {
  const rows = orderedFields(record, order).map((field): TableRow => {
    const value = record[field];
    return value === null ? [field, formatValue(value), style.dim] : [field, formatValue(value)];
  });
  return renderTable(rows, style);
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
function renderField(record: ResultRecord, name: string): string {
  if (!Object.hasOwn(record.fields, name)) {
    throw new ApiError(`the answer's ${record.name} has no field ${quote(name)}`, {
      hint: `fields in this answer: ${listFields(orderedFields(record.fields, record.order))}`,
    });
  }
  return escapeControls(formatValue(record.fields[name]));
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
  preferences: Pick<Preferences, 'noColor'>,
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
      writeLine(io.stdout, renderField(output.record, output.format.name));
      return;
    case 'table': {
      const style = await styleFor(io, preferences, 'stdout');
      for (const line of output.headline(style)) writeLine(io.stdout, line);
      writeLine(
        io.stdout,
        await renderRecordTable(output.record.fields, style, output.record.order),
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
  writeLine(io.stdout, await renderTable(tableRows, style));
}

/** A message for the person, on stderr whatever the output format: stdout is for results. */
export function printLine(io: IO, text: string): void {
  writeLine(io.stderr, text);
}

/** A message in the colour of success or of a warning (when colour is on). */
export async function printMessage(
  io: IO,
  preferences: Pick<Preferences, 'noColor'>,
  text: string,
  tone: 'success' | 'warning',
): Promise<void> {
  const style = await styleFor(io, preferences, 'stderr');
  printLine(io, tone === 'success' ? style.green(text) : style.yellow(text));
}

/** A `note:` the service client reports, e.g. a redirect it followed. */
export function printNote(io: IO, text: string): void {
  printLine(io, `note: ${text}`);
}

/** `note:` in the warning colour, then the text. */
export async function printWarningNote(
  io: IO,
  preferences: Pick<Preferences, 'noColor'>,
  text: string,
): Promise<void> {
  const style = await styleFor(io, preferences, 'stderr');
  writeLine(io.stderr, `${style.yellow('note:')} ${text}`);
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
    writeLine(io.stderr, errorCommand(ci, text));
  }
  if (!preferences.debug) return;
  for (let current: unknown = report.error; current instanceof Error; current = current.cause) {
    writeLine(io.stderr, current.stack ?? String(current));
  }
}

/** After commander's own usage message. */
export function printUsageHint(io: IO): void {
  writeLine(io.stderr, 'hint: see `ugs --help` or `ugs <command> --help`');
}
