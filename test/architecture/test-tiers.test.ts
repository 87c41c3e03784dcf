/**
 * The fast tier runs src/ in the test process, without a build: a test that starts ugs as a
 * process (the built binary, a shell running it, `ugs serve`) or reads dist/ belongs in a
 * `*.process.test.ts` file, which the `process` project runs after checking the build.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const TEST = join(import.meta.dirname, '..');
/**
 * The kit's ways of starting ugs or reading what the build wrote. A shell alone (`runShell`
 * without `UGS_SHELL`, to see how a printed command splits into words) does not run ugs.
 */
const STARTS_A_PROCESS = /\b(?:runUgs|startUgs|serveUgs|UGS_SHELL|BIN|DIST_MAIN)\b/;

function* fastTestFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) {
      if (entry !== 'kit') yield* fastTestFiles(path);
    } else if (entry.endsWith('.test.ts') && !entry.endsWith('.process.test.ts')) {
      yield path;
    }
  }
}

describe('the fast tier', () => {
  it('the pattern names what starts a process, not words that merely contain it', () => {
    expect("await runUgs(['get'])").toMatch(STARTS_A_PROCESS);
    expect('runShell(UGS_SHELL + " get")').toMatch(STARTS_A_PROCESS);
    expect('const binary = makeBinaryName();').not.toMatch(STARTS_A_PROCESS);
  });

  it('has no test file that starts ugs as a process or reads dist/', () => {
    const offenders = [...fastTestFiles(TEST)]
      .filter((file) => !file.endsWith('test-tiers.test.ts'))
      .filter((file) => STARTS_A_PROCESS.test(readFileSync(file, 'utf8')))
      .map((file) => relative(TEST, file));
    expect(offenders).toEqual([]);
  });
});
