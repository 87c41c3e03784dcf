/**
 * Messages for the person, on stderr whatever the output format (stdout is for results): notes,
 * warnings, success lines, and the one `error:`/`hint:` report.
 */
import { detectCi, errorCommand, writeCiCommand } from '../ci.js';
import { type IO, stderrColumns, writeLine } from '../io.js';
import type { Preferences } from '../settings.js';
import { styleFor } from './style.js';
import { displayWidth } from './text.js';

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
