import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './run.js';

describe('a reader that stops early (ugs ... | head -1)', () => {
  it('ends quietly: no EPIPE stack trace on stderr', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'bin', 'ugs.js'), 'help', 'get'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Close our end of stdout before ugs writes its help, as `head` does after its lines.
    child.stdout.destroy();
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(code).toBe(0);
  });
});
