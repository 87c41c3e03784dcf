/**
 * ENOSPC under `--output`, for real: the results file of a bulk `rotate --from` on a small tmpfs
 * that fills up during the run, against the built binary and the emulator. At the first record
 * that cannot be written no new row starts; rotations whose record was lost are exit 5, named,
 * with `--resume` as the way back; after space is freed, `--resume` settles them, and every group
 * ends rotated exactly once with its token in the file.
 *
 * Mounting needs root (CAP_SYS_ADMIN). Under CI it must work: a CI that cannot mount fails here
 * rather than skipping the attack; elsewhere the test is skipped with the reason.
 * (The same cases with a fake file system run everywhere: test/bulk/outcomes.test.ts.)
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from 'vitest';
import { describeRun, makeSandbox, runUgs, type Service, serviceForTest } from '../kit/index.js';

const API_TOKEN = 'api_full_disk_output_7c2e';
const PAGE = 4096;
const PAGES = 256;

function mountTmpfs(dir: string): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${PAGES * 4}k,mode=0700`, 'tmpfs', dir], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

interface Rec {
  row: number;
  user_group_id: string | null;
  status: string;
  token: string | null;
  settled_by?: string;
}

/** Every whole record of the file (a line torn by the full disk is skipped, as --resume does). */
function records(path: string): Rec[] {
  const recs: Rec[] = [];
  for (const line of readFileSync(path, 'utf8').split('\n')) {
    try {
      recs.push(JSON.parse(line) as Rec);
    } catch {
      // the torn line
    }
  }
  return recs;
}

const cleanup: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('a full disk under --output (tmpfs; root only)', () => {
  test('rotate --from: exit 5 naming the rotated rows not recorded; --resume after freeing space settles them, each rotated once', async (context) => {
    const sandbox = makeSandbox();
    const disk = join(sandbox.root, 'disk');
    if (!mountTmpfs(disk)) {
      if (process.env.CI) throw new Error('CI must be able to mount a tmpfs for this attack');
      context.skip('cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
      return;
    }
    cleanup.push(() => {
      execFileSync('umount', [disk], { stdio: 'ignore' });
    });
    const service: Service = await serviceForTest([API_TOKEN]);
    cleanup.push(() => service.close());

    const count = 800;
    const lines: string[] = [];
    for (let i = 1; i <= count; i++) {
      const group = await service.seed(`fd-${i}`, `Full Disk ${i}`);
      lines.push(
        JSON.stringify({
          current_token: group.token,
          user_group_id: `fd-${i}`,
          name: `Full Disk ${i}`,
        }),
      );
    }
    const input = join(sandbox.root, 'tokens.ndjson');
    writeFileSync(input, `${lines.join('\n')}\n`);
    // Leave about 10 pages: room for the first journal batch and some results, not for all.
    const filler = join(disk, 'filler');
    writeFileSync(filler, Buffer.alloc((PAGES - 10) * PAGE));
    const out = join(disk, 'rotated.ndjson');
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN };
    const args = ['rotate', '--from', input, '--output', out, '--yes', '--concurrency', '4'];

    const full = await runUgs(args, { sandbox, env, timeoutMs: 120_000 });
    const context1 = describeRun(full);
    expect(full.code, context1).toBe(5);
    expect(full.stderr, context1).not.toMatch(/unexpected/i);
    expect(full.stderr, context1).toMatch(
      /^error: could not write the results to .*rotated\.ndjson \(no space left on the device \(ENOSPC\)\): rows? [\d, ]+(and \d+ more )?(was|were) rotated/m,
    );
    expect(full.stderr, context1).toMatch(
      /^hint: free space, then run the same command with --resume/m,
    );
    const posts = () => service.requests.filter((r) => r.method === 'POST').length;
    const sentFirst = posts();
    // No new row after the first lost record: far fewer than all rows were sent.
    expect(sentFirst, context1).toBeLessThan(count);

    rmSync(filler);
    // --timeout 2: the first run has ended, but its lost records leave the rows `sending`, so
    // --resume first waits that long after them for requests that might still be on their way.
    const resumed = await runUgs([...args, '--resume', '--timeout', '2'], {
      sandbox,
      env,
      timeoutMs: 120_000,
    });
    expect(resumed.code, describeRun(resumed)).toBe(0);
    const last = new Map<number, Rec>();
    for (const rec of records(out)) if (rec.status !== 'sending') last.set(rec.row, rec);
    expect(last.size).toBe(count);
    let settled = 0;
    for (const [row, rec] of last) {
      expect(rec.status, `row ${row}`).toBe('rotated');
      expect(rec.token, `row ${row}`).toBe((await service.group(`fd-${row}`)).token);
      if (rec.settled_by === 'get') settled++;
    }
    expect(settled, 'the lost records were settled by reading the groups back').toBeGreaterThan(0);
    // Exactly once: every rotation the service saw succeeded (a second one would send a dead token).
    const refused = service.answers.filter((a) => a.status === 404).length;
    expect(refused).toBe(0);
  }, 240_000);
});
