/**
 * All output is shaped here: the data is collected once by a command, then shown as a table, as
 * the raw JSON body, or as one field. Colour and table borders are decoration for a terminal; the
 * libraries that draw them are loaded only when a table or colour is actually wanted.
 */
import { ApiError } from './errors.js';
import { colorEnabled, escapeControls, type IO, writeLine } from './io.js';
import { compactJson, prettyJson } from './json-text.js';
import type { JsonObject } from './parse.js';
import type { UserGroup } from './service.js';

export type OutputFormat = { kind: 'table' } | { kind: 'json' } | { kind: 'field'; name: string };

/** Documented fields first, in the order a person reads them; anything else after, as sent. */
const KNOWN_FIELDS = ['provided_id', 'name', 'team_id', 'token', 'environment', 'properties'];

export interface Style {
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

export async function styleFor(io: IO, stream: 'stdout' | 'stderr'): Promise<Style> {
  if (!colorEnabled(io, stream)) return plainStyle;
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
  // Not JSON.stringify: a value from the wire may nest 100,000 levels deep (issue 8.3).
  return compactJson(value);
}

export function orderedFields(group: JsonObject): string[] {
  const known = KNOWN_FIELDS.filter((field) => Object.hasOwn(group, field));
  const unknown = Object.keys(group).filter((field) => !KNOWN_FIELDS.includes(field));
  return [...known, ...unknown];
}

/** A table row: field, value, and an optional decoration applied after escaping the value. */
export type TableRow = readonly [field: string, value: string, decorate?: (text: string) => string];

export async function renderTable(rows: readonly TableRow[], style: Style): Promise<string> {
  const { Table } = await import('./vendor/table.js');
  // cli-table3 colours head and border by itself, even into a pipe: colour is ours to decide.
  // Field names down the left say what each row is; a header row would only repeat that.
  const table = new Table({
    style: { head: [], border: [] },
    // No rule between rows: a short table reads better without one.
    chars: { mid: '', 'left-mid': '', 'mid-mid': '', 'right-mid': '' },
    wordWrap: false,
  });
  // Escape first, then decorate: escaping a styled value would print its colour codes as text.
  for (const [field, value, decorate] of rows) {
    const text = escapeControls(value);
    table.push([style.cyan(escapeControls(field)), decorate ? decorate(text) : text]);
  }
  return table.toString();
}

export async function renderUserGroupTable(group: UserGroup, style: Style): Promise<string> {
  const rows = orderedFields(group).map((field): TableRow => {
    const value = group[field];
    return value === null ? [field, formatValue(value), style.dim] : [field, formatValue(value)];
  });
  return renderTable(rows, style);
}

/**
 * `--json`: exactly the body the server sent, re-indented from its text (its numbers as sent,
 * however deep it nests), controls inside strings as `\u` escapes, and nothing else on stdout.
 */
export function renderJson(body: unknown): string {
  return prettyJson(body);
}

/** `--field`: a script's way to take one value; a missing field must not look like an empty one. */
export function renderField(group: UserGroup, name: string): string {
  if (!Object.hasOwn(group, name)) {
    throw new ApiError(`the answer's user_group has no field "${name}"`, {
      hint: `fields in this answer: ${orderedFields(group).join(', ')}`,
    });
  }
  return formatValue(group[name]);
}

export interface ResultOutput {
  format: OutputFormat;
  /** The whole response body (for `--json`). */
  body: JsonObject;
  userGroup: UserGroup;
  /** Lines shown above the table, e.g. "Created user group acme". Not shown with --json/--field. */
  headline: (style: Style) => string[];
}

export async function printResult(io: IO, output: ResultOutput): Promise<void> {
  switch (output.format.kind) {
    case 'json':
      writeLine(io.stdout, renderJson(output.body));
      return;
    case 'field':
      writeLine(io.stdout, renderField(output.userGroup, output.format.name));
      return;
    case 'table': {
      const style = await styleFor(io, 'stdout');
      for (const line of output.headline(style)) writeLine(io.stdout, line);
      writeLine(io.stdout, await renderUserGroupTable(output.userGroup, style));
      return;
    }
  }
}
