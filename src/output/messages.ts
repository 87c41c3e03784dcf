/**
 * Messages for the person, on stderr whatever the output format (stdout is for results): notes,
 * warnings, success lines, and the one `error:`/`hint:` report.
 */

import { writeLine } from '../platform/io.js';
import { errorCommand, writeCiCommand } from './ci.js';
import type { Output } from './output.js';
import { displayWidth } from './text.js';

/**
 * A message for the person, on stderr whatever the output format: stdout is for results.
 * `--quiet` silences every such note, warning and progress line; errors go through `printError`.
 */
export function printLine(out: Output, text: string): void {
  if (out.quiet) return;
  writeLine(out.stderr, out.stderrIsTTY ? fitMessage(text, out.stderrColumns()) : text);
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
  out: Output,
  text: string,
  tone: 'success' | 'warning',
): Promise<void> {
  const style = await out.style('stderr');
  printLine(out, tone === 'success' ? style.green(text) : style.yellow(text));
}

/** A `note:` the service client reports, e.g. a redirect it followed. */
export function printNote(out: Output, text: string): void {
  printLine(out, `note: ${text}`);
}

/** `note:` in the warning colour, then the text. */
export async function printWarningNote(out: Output, text: string): Promise<void> {
  const style = await out.style('stderr');
  printLine(out, `${style.yellow('note:')} ${text}`);
}

/**
 * `error: <message>` and `hint: <hint>` on stderr; with `--debug`, the stack of the error and of
 * each cause.
 */
export async function printError(
  out: Output,
  report: { message: string; hint: string | undefined; error: unknown },
): Promise<void> {
  const style = await out.style('stderr');
  writeLine(out.stderr, `${style.red('error:')} ${report.message}`);
  if (report.hint) writeLine(out.stderr, `${style.dim('hint:')} ${report.hint}`);
  const ci = out.ci;
  if (ci !== undefined) {
    // An annotation on the run's page, with the hint as its second line.
    const text = report.hint ? `${report.message}\n${report.hint}` : report.message;
    writeCiCommand(out.stderr, errorCommand(ci, text));
  }
  if (!out.debug) return;
  for (let current: unknown = report.error; current instanceof Error; current = current.cause) {
    writeLine(out.stderr, current.stack ?? String(current));
  }
}
