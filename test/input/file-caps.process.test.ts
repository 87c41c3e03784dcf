/**
 * Every file a flag points at is read with the 1 MiB cap on the bytes actually read, whatever the
 * file is: devices, fifos and /dev/stdin report a size of 0 (or nothing useful) to stat.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { expectFailure, runShell, runUgs, tempDir, UGS_SHELL } from '../kit/index.js';

const get = ['get', '--id', 'acme', '--name', 'Acme'];
const env = { UGS_API_TOKEN: 'api-token-for-caps', UGS_BASE_URL: 'https://127.0.0.1:9' };

/** A fifo with a writer that never stops (until the test ends). */
function endlessFifo(): { path: string; stop: () => void } {
  const path = join(tempDir('fifo'), 'endless');
  const writer = spawn('sh', ['-c', `mkfifo '${path}' && exec yes > '${path}'`], {
    stdio: 'ignore',
  });
  return { path, stop: () => writer.kill('SIGKILL') };
}

async function waitForFile(path: string): Promise<void> {
  const { existsSync } = await import('node:fs');
  for (let i = 0; i < 100 && !existsSync(path); i++) await new Promise((r) => setTimeout(r, 20));
}

describe('JSON flags read files with the 1 MiB cap', () => {
  for (const flag of ['--properties', '--mapping-json']) {
    it(`${flag} @/dev/zero`, async () => {
      const result = await runUgs([...get, flag, '@/dev/zero'], { env });
      const { error } = expectFailure(result, 2);
      expect(error).toMatch(/larger than 1 MiB/);
    });
    it(`${flag} @/dev/stdin on an endless pipe`, async () => {
      // A real pipe (`yes |`): the harness's stdin is a socket, which /dev/stdin cannot open.
      const args = [...get, flag, '@/dev/stdin'].map((arg) => `'${arg}'`).join(' ');
      const child = await runShell(`yes | ${UGS_SHELL} ${args}`, { env });
      expect(child.code, child.stderr).toBe(2);
      expect(child.stderr).toMatch(/^error: .*@\/dev\/stdin: file is larger than 1 MiB/);
    });
    it(`${flag} @fifo with an endless writer`, async () => {
      const fifo = endlessFifo();
      try {
        await waitForFile(fifo.path);
        const result = await runUgs([...get, flag, `@${fifo.path}`], { env });
        expect(expectFailure(result, 2).error).toMatch(/larger than 1 MiB/);
      } finally {
        fifo.stop();
      }
    });
  }
});

describe('--ca-file is read with the same cap', () => {
  it('--ca-file /dev/zero', async () => {
    const result = await runUgs([...get, '--ca-file', '/dev/zero'], { env });
    expect(expectFailure(result, 2).error).toMatch(/--ca-file.*larger than 1 MiB/);
  });
  it('UGS_CA_FILE=/dev/zero', async () => {
    const result = await runUgs(get, { env: { ...env, UGS_CA_FILE: '/dev/zero' } });
    expect(expectFailure(result, 2).error).toMatch(/larger than 1 MiB/);
  });
});
