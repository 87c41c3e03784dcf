/** Text measured and wrapped by the columns a terminal gives it (wide characters, colour codes). */
import { escapeControls } from '../platform/io.js';

export interface Piece {
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
export function displayWidth(text: string): number {
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

/**
 * Rows as lines of columns padded to their widest cell (by display width), two spaces apart; the
 * last cell is not padded and no line ends in spaces. Cells are shown with controls escaped, here
 * rather than by each caller: a name or URL read from a file must not move the cursor or fake a
 * row, and escaping an escaped cell changes nothing. So a cell cannot carry styling: style the
 * padded lines instead.
 */
export function padColumns(table: readonly (readonly string[])[]): string[] {
  const rows = table.map((row) => row.map(escapeControls));
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, displayWidth(cell));
    });
  }
  return rows.map((row) =>
    row
      .map((cell, i) =>
        i === row.length - 1 ? cell : cell + ' '.repeat((widths[i] ?? 0) - displayWidth(cell)),
      )
      .join('  ')
      .trimEnd(),
  );
}
