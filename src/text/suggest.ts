/**
 * "Did you mean ...?" for a mistyped name (a command, a profile). Commander has the same
 * algorithm, but does not export it, and its choice cannot be steered: `ugs create` got "did you
 * mean rotate?", the one command that destroys something. Here a caller can weigh candidates.
 */

/** Further than this many edits, a guess is noise. */
const MAX_DISTANCE = 3;
/** Below this share of letters in common, a guess is noise (commander's threshold). */
const MIN_SIMILARITY = 0.4;

/** Rows of the distance table, reused by every call (a bulk typo check makes 200,000 of them). */
let rows: [Int32Array, Int32Array, Int32Array] = [
  new Int32Array(64),
  new Int32Array(64),
  new Int32Array(64),
];

/**
 * Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring):
 * insertions, deletions, substitutions and swaps of two neighbours each cost one; or `max + 1` as
 * soon as it is known to exceed `max`. Compared by UTF-16 units (a character outside the BMP
 * counts as two), with no allocation per call: the history's typo guard makes many of them.
 */
export function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  const n = a.length;
  const m = b.length;
  if (Math.abs(n - m) > max) return max + 1;
  if (rows[0].length <= m)
    rows = [new Int32Array(m + 1), new Int32Array(m + 1), new Int32Array(m + 1)];
  let [before, previous, current] = rows;
  for (let j = 0; j <= m; j++) previous[j] = j;
  for (let i = 1; i <= n; i++) {
    current[0] = i;
    let best = i;
    const x = a.charCodeAt(i - 1);
    for (let j = 1; j <= m; j++) {
      const y = b.charCodeAt(j - 1);
      let value = Math.min(
        (previous[j] as number) + 1,
        (current[j - 1] as number) + 1,
        (previous[j - 1] as number) + (x === y ? 0 : 1),
      );
      if (i > 1 && j > 1 && x === b.charCodeAt(j - 2) && a.charCodeAt(i - 2) === y) {
        value = Math.min(value, (before[j - 2] as number) + 1);
      }
      current[j] = value;
      if (value < best) best = value;
    }
    if (best > max) return max + 1;
    const spare = before;
    before = previous;
    previous = current;
    current = spare;
  }
  return previous[m] as number;
}

/** A candidate: the word typed is compared with `name`; `suggest` is what to offer (default `name`). */
export interface Candidate {
  name: string;
  suggest?: string;
  /** Offered only when no candidate that changes nothing is as close (see `suggestNames`). */
  changesData?: boolean;
}

/**
 * What to offer for `word`: the suggestions of the closest candidates (case ignored), sorted and
 * without repeats; empty when none is close. A candidate that changes data is dropped when one
 * that changes nothing is at least as close: a typo never leads to the harmful guess by a tie.
 */
export function suggestNames(word: string, candidates: readonly (Candidate | string)[]): string[] {
  const typed = word.toLowerCase();
  let best = MAX_DISTANCE;
  let closest: Candidate[] = [];
  for (const entry of candidates) {
    const candidate = typeof entry === 'string' ? { name: entry } : entry;
    const name = candidate.name.toLowerCase();
    if (name.length <= 1) continue;
    const distance = editDistance(typed, name);
    const length = Math.max(typed.length, name.length);
    if ((length - distance) / length <= MIN_SIMILARITY) continue;
    if (distance < best) {
      best = distance;
      closest = [candidate];
    } else if (distance === best) {
      closest.push(candidate);
    }
  }
  const harmless = closest.filter((candidate) => candidate.changesData !== true);
  const chosen = harmless.length > 0 ? harmless : closest;
  return [...new Set(chosen.map((candidate) => candidate.suggest ?? candidate.name))].sort();
}

/** `a`, `a or b`, `a, b or c`: for a hint. */
export function orList(names: readonly string[]): string {
  if (names.length <= 1) return names.join('');
  return `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`;
}
