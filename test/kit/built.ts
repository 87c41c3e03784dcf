// Vitest global setup: many tests run the built binary, so a missing build fails the run at once,
// loudly, instead of as hundreds of confusing failures (or skips).
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export default function assertBuilt(): void {
  const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', '..');
  for (const file of [join(root, 'bin', 'ugs.js'), join(root, 'dist', 'main.cjs')]) {
    if (!existsSync(file)) {
      throw new Error(
        `${file} does not exist: the tests run the built binary; run \`npm run build\` first`,
      );
    }
  }
}
