/**
 * Messages that cannot forget to escape. Every value a message shows may come from a server, a
 * file or a typo (an ESC, a CSI, a newline that fakes a second line), so escaping belongs to the
 * message itself, not to each value at each call site:
 *
 *   message`Removed profile "${name}" from ${path}`
 *
 * escapes control characters in every interpolated value, and writes a value placed between
 * double quotes in the template as the inside of a JSON string (its own `"` and `\` escaped too),
 * which is what `quote` gives. Escaping outside quotes is idempotent, so a message may hold
 * another message.
 */
import { escapeControls, unicodeEscape } from '../platform/io.js';

/**
 * A string as a JSON string literal, made safe for a terminal: controls escaped, and U+2028/2029
 * (they break lines in many terminals and editors; JSON leaves them raw) and U+FFFD (shown as its
 * code, so "the bytes were not UTF-8" is visible rather than a lookalike glyph) as `\u` escapes.
 */
export function quote(text: string): string {
  return escapeControls(JSON.stringify(text)).replace(/[\u2028\u2029\ufffd]/g, unicodeEscape);
}

function shown(value: unknown): string {
  return typeof value === 'string' ? value : String(value);
}

export function message(strings: TemplateStringsArray, ...values: readonly unknown[]): string {
  let out = strings[0] ?? '';
  for (let i = 0; i < values.length; i++) {
    const before = strings[i] ?? '';
    const after = strings[i + 1] ?? '';
    const text = shown(values[i]);
    out +=
      before.endsWith('"') && after.startsWith('"')
        ? quote(text).slice(1, -1)
        : escapeControls(text);
    out += after;
  }
  return out;
}
