/** The problems of a bulk input, listed as `row N (line L): ...`: the first 20, then a count. */
import { UsageError } from '../errors.js';

/** How many problems are listed before "and K more". */
export const MAX_LISTED_ERRORS = 20;

/** Every problem of the input, reported at once by `throwIfAny`. */
export class ErrorList {
  private readonly listed: string[] = [];
  private more = 0;
  /** The hint of the report, when one problem knows a better one than "fix the rows". */
  hint: string | undefined;

  add(row: number | undefined, line: number, problem: string): void {
    if (this.listed.length >= MAX_LISTED_ERRORS) {
      this.more++;
      return;
    }
    this.listed.push(
      row === undefined
        ? `line ${line} (the header): ${problem}`
        : `row ${row} (line ${line}): ${problem}`,
    );
  }

  get empty(): boolean {
    return this.listed.length === 0;
  }

  throwIfAny(): void {
    if (this.listed.length === 0) return;
    const total = this.listed.length + this.more;
    const lines = this.more > 0 ? [...this.listed, `and ${this.more} more`] : this.listed;
    throw new UsageError(
      `--from: ${total} ${total === 1 ? 'problem' : 'problems'} in the input, nothing was sent:\n  ${lines.join('\n  ')}`,
      { hint: this.hint ?? 'fix the rows listed and run again' },
    );
  }
}
