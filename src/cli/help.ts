/** Help text laid out for a terminal: the `Examples:` section of every command's help. */
import { displayWidth, wrapText } from '../output/text.js';

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
