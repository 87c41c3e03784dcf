/**
 * "Did you mean ...?" for a mistyped name (a command, a profile). Commander has the same
 * algorithm, but does not export it, and its choice cannot be steered: `ugs create` got "did you
 * mean rotate?", the one command that destroys something. Here a caller can weigh candidates.
 */

/** Further than this many edits, a guess is noise. */
const MAX_DISTANCE = 3;
/** Below this share of letters in common, a guess is noise (commander's threshold). */
const MIN_SIMILARITY = 0.4;

/**
 * Optimal string alignment distance (Damerau–Levenshtein without repeated edits of a substring):
 * insertions, deletions, substitutions and swaps of two neighbours each cost one.
 */
export function editDistance(a: string, b: string): number {
  const rows: number[][] = [];
  for (let i = 0; i <= a.length; i++) rows.push([i]);
  const first = rows[0] as number[];
  for (let j = 1; j <= b.length; j++) first[j] = j;
  for (let i = 1; i <= a.length; i++) {
    const row = rows[i] as number[];
    const above = rows[i - 1] as number[];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let best = Math.min(
        (above[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (above[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, (rows[i - 2]?.[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (rows[a.length] as number[])[b.length] as number;
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
