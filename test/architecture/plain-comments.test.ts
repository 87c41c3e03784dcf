/**
 * Comments and test titles say what the code does and why, in words a reader without the project's
 * tracker understands: a pointer to a tracker item and its numbered points tells that reader
 * nothing, and it goes stale as soon as the tracker moves. This scans every source, test and script file.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const SCANNED = ['src', 'test', 'bin', 'scripts', '.ci'];
const CODE_FILE = /\.(?:[cm]?[jt]s|sh)$/;

/** An issue number (with or without `#`) or a numbered point: a pointer into the tracker. */
const TRACKER_REFERENCE = /\b(?:issue\s*#?\d+|points?\s+\d+(?:\s+and\s+\d+)?)\b/i;

function* codeFiles(dir: string): Generator<string> {
  for (const entry of readdirSync(dir)) {
    if (entry === 'node_modules' || entry === 'dist') continue;
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) yield* codeFiles(path);
    else if (CODE_FILE.test(entry) || dir.endsWith('.ci')) yield path;
  }
}

function trackerReferences(): string[] {
  const found: string[] = [];
  for (const top of SCANNED) {
    let files: string[];
    try {
      files = [...codeFiles(join(ROOT, top))];
    } catch {
      continue;
    }
    for (const file of files) {
      readFileSync(file, 'utf8')
        .split('\n')
        .forEach((line, index) => {
          if (TRACKER_REFERENCE.test(line)) {
            found.push(`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`);
          }
        });
    }
  }
  return found;
}

describe('comments and test titles', () => {
  it('the pattern catches the ways a tracker item is written, and not ordinary prose', () => {
    for (const line of [
      // Assembled from parts, so that this file does not hold what it looks for.
      ` * The typo guard (${'issue'} 23, ${'point'} 4): an id never seen`,
      `it('${'Issue'} #7: prompts', () => {`,
      `// ${'points'} 2 and 3 of the hardening round`,
    ]) {
      expect(line).toMatch(TRACKER_REFERENCE);
    }
    for (const line of [
      '// the code point U+E0041 is shown escaped',
      '// an issue with the proxy: 4 retries',
      'const checkpoint = 3;',
    ]) {
      expect(line).not.toMatch(TRACKER_REFERENCE);
    }
  });

  it('name no tracker item anywhere in src, test, bin, scripts or .ci', () => {
    expect(trackerReferences()).toEqual([]);
  });
});
