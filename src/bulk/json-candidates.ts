/** NDJSON and JSON array inputs as row candidates: each row's JSON text, not yet parsed. */
import { UsageError } from '../errors.js';
import { JsonLexer } from '../text/json-lexer.js';
import { MAX_ROW_CHARS, type RowCandidate, rowTooLarge } from './row-candidates.js';

/** One JSON text per line; blank lines are not rows. */
export async function* ndjsonCandidates(
  chunks: AsyncIterable<string>,
): AsyncGenerator<RowCandidate[]> {
  let pending = '';
  let line = 0;
  let row = 0;
  const take = (text: string): RowCandidate | undefined => {
    line++;
    const body = text.endsWith('\r') ? text.slice(0, -1) : text;
    if (body.trim() === '') return undefined;
    row++;
    return { row, line, kind: 'json', text: body };
  };
  for await (const chunk of chunks) {
    const batch: RowCandidate[] = [];
    let start = 0;
    let at = chunk.indexOf('\n');
    while (at !== -1) {
      const candidate = take(pending + chunk.slice(start, at));
      pending = '';
      if (candidate) batch.push(candidate);
      start = at + 1;
      at = chunk.indexOf('\n', start);
    }
    pending += chunk.slice(start);
    if (batch.length > 0) yield batch;
    if (pending.length > MAX_ROW_CHARS) throw rowTooLarge(line + 1);
  }
  const last = pending === '' ? undefined : take(pending);
  if (last) yield [last];
}

/**
 * The elements of one top-level JSON array, each as its own text, without parsing the whole
 * array (which would hold it all in memory). The lexer reads only the structure, chunk by chunk:
 * a row is checked when it is parsed on its own, so a broken row is that row's problem, reported
 * with the others, not the file's. An element that is not an object ends the read, as the file
 * is then not a list of rows at all.
 */
export async function* jsonArrayCandidates(
  chunks: AsyncIterable<string>,
): AsyncGenerator<RowCandidate[]> {
  const lexer = new JsonLexer('', { checked: false });
  let state: 'before' | 'inside' | 'after' = 'before';
  let expectElement = true;
  let line = 1;
  let row = 0;
  let element = '';
  let elementLine = 0;
  const unexpected = (what: string) =>
    new UsageError(`--from: not a JSON array of objects: ${what} at line ${line}`, {
      hint: 'a .json input is one array: [{"user_group_id": "...", ...}, ...]',
    });
  for await (const chunk of chunks) {
    lexer.continueWith(chunk);
    const batch: RowCandidate[] = [];
    // Inside an element (the array is depth 1): where its text starts in this chunk.
    let pieceStart = lexer.depth > 1 ? 0 : -1;
    // Lines are counted up to a token only when one needs its line: most tokens are in rows.
    let counted = 0;
    const countLines = (to: number) => {
      for (let at = chunk.indexOf('\n', counted); at !== -1 && at < to; ) {
        line++;
        at = chunk.indexOf('\n', at + 1);
      }
      counted = to;
    };
    for (;;) {
      if (pieceStart !== -1) {
        // A row's text, to its closing bracket (of either kind) back at the array's level.
        if (lexer.skipTo(1) === 'end') break;
        element += chunk.slice(pieceStart, lexer.end);
        row++;
        batch.push({ row, line: elementLine, kind: 'json', text: element });
        element = '';
        pieceStart = -1;
      }
      const kind = lexer.next();
      if (kind === 'end') break;
      countLines(lexer.start);
      if (state === 'before' && kind === '[') {
        state = 'inside';
      } else if (state !== 'inside') {
        throw unexpected(state === 'before' ? 'it does not start with "["' : 'text after "]"');
      } else if (kind === ']') {
        if (expectElement && row > 0) throw unexpected('"," before "]"');
        state = 'after';
      } else if (kind === ',') {
        if (expectElement) throw unexpected('"," without a row before it');
        expectElement = true;
      } else if (kind === '{') {
        if (!expectElement) throw unexpected('a missing ","');
        pieceStart = lexer.start;
        elementLine = line;
        expectElement = false;
      } else {
        throw unexpected(`row ${row + 1} is not a JSON object`);
      }
    }
    countLines(chunk.length);
    if (batch.length > 0) yield batch;
    if (pieceStart !== -1) {
      element += chunk.slice(pieceStart);
      if (element.length > MAX_ROW_CHARS) throw rowTooLarge(elementLine);
    }
  }
  if (state === 'before') throw unexpected('no "["');
  if (state === 'inside') throw unexpected('the input ends before "]"');
}
