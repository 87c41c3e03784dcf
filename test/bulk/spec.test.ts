import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const src = join(import.meta.dirname, '../../src');
const read = (path: string) => readFileSync(join(src, path), 'utf8');

/** Static, non-type imports of a source file. */
function runtimeImports(text: string): string[] {
  return [...text.matchAll(/^import (?!type )[^;]*? from '([^']+)';/gms)].map(
    (m) => m[1] as string,
  );
}

describe('bulk is driven by each operation’s spec', () => {
  it('no file of src/bulk names an operation or its command', () => {
    for (const file of readdirSync(join(src, 'bulk'))) {
      const text = read(join('bulk', file));
      expect(text.match(/'(get|rotate)'/g) ?? [], file).toEqual([]);
    }
  });

  it('a single-row command loads nothing of src/bulk: the bulk flags import no bulk code', () => {
    for (const file of [
      'cli/bulk-flags.ts',
      'input/bulk-options.ts',
      'operations/get-user/command.ts',
      'operations/rotate-token/command.ts',
    ]) {
      const bulk = runtimeImports(read(file)).filter((path) =>
        /\/bulk\/|^\.\/bulk\.js$/.test(path),
      );
      expect(bulk, file).toEqual([]);
    }
  });
});
