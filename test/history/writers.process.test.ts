/**
 * The token history with several writers at once: two bulk runs and a single get,
 * separate processes appending to one history.ndjson, leave whole lines only: one event per
 * answered row, each a JSON object on a line of its own, and no whole token anywhere. Also the
 * file planted as a symlink or FIFO by someone else is refused (a warning, the run succeeds).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readRecords } from '../kit/bulk.js';
import {
  customerEnv,
  describeRun,
  makeSandbox,
  runUgs,
  tempDir,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();

/** Rows per bulk run: the runs overlap with each other and with the get. */
const ROWS = 300;

describe('history writers at once', () => {
  it('two bulk runs and a get: no torn lines, one event per answered row', async () => {
    const sb = makeSandbox();
    const env = customerEnv(emulator);
    const inputs = ['a', 'b'].map((prefix) => {
      const path = join(sb.root, `${prefix}.csv`);
      let text = 'user_group_id,name\n';
      for (let i = 1; i <= ROWS; i++) text += `w${prefix}-${i},Group ${i}\n`;
      writeFileSync(path, text);
      return path;
    });
    const outputs = ['a', 'b'].map((prefix) => join(sb.root, `${prefix}-out.ndjson`));
    const runs = await Promise.all([
      runUgs(['get', '--from', inputs[0] as string, '--output', outputs[0] as string], {
        sandbox: sb,
        env,
      }),
      runUgs(['get', '--from', inputs[1] as string, '--output', outputs[1] as string], {
        sandbox: sb,
        env,
      }),
      runUgs(['get', '--id', 'w-single', '--name', 'Single', '--field', 'token'], {
        sandbox: sb,
        env,
      }),
    ]);
    for (const run of runs) expect(run.code, describeRun(run)).toBe(0);

    const text = readFileSync(join(sb.configDir, 'history.ndjson'), 'utf8');
    expect(text.endsWith('\n')).toBe(true);
    const lines = text.slice(0, -1).split('\n');
    const events = lines.map((line) => JSON.parse(line) as { user_group_id: string });
    expect(events).toHaveLength(2 * ROWS + 1);
    expect(new Set(events.map((event) => event.user_group_id)).size).toBe(2 * ROWS + 1);

    const tokens = [
      (runs[2]?.stdout ?? '').trim(),
      ...outputs.flatMap((path) =>
        readRecords<{ token: string }>(path).map((record) => record.token),
      ),
    ];
    expect(tokens).toHaveLength(2 * ROWS + 1);
    for (const token of tokens) expect(text.includes(token)).toBe(false);
  });

  it('a history file planted as a symlink or a FIFO is not followed or opened: one warning', async () => {
    const env = customerEnv(emulator);
    for (const plant of ['symlink', 'fifo'] as const) {
      const sb = makeSandbox();
      mkdirSync(sb.configDir, { mode: 0o700 });
      const history = join(sb.configDir, 'history.ndjson');
      const victim = join(tempDir('victim'), 'victim.txt');
      writeFileSync(victim, 'untouched\n');
      if (plant === 'symlink') symlinkSync(victim, history);
      else execFileSync('mkfifo', [history]);
      const run = await runUgs(['get', '--id', `w-${plant}`, '--name', 'P', '--json'], {
        sandbox: sb,
        env,
      });
      expect(run.code, describeRun(run)).toBe(0);
      expect(run.stderr).toMatch(/^warning: the token history was not written/m);
      expect(readFileSync(victim, 'utf8')).toBe('untouched\n');
    }
  });
});
