/**
 * The files ugs and the emulator write: the config, its lock, the emulator's data file
 * and its lock, attacked with a nearly full disk (short writes, ENOSPC), hostile symlinks and
 * directory modes, reused pids, racing takeovers of a stale lock, leftover temp files, and a
 * corrupt config holding a token.
 *
 * A nearly full disk is a small tmpfs: mounting one needs root (CAP_SYS_ADMIN); elsewhere those
 * tests are skipped with the reason. Files owned by "another user" need root to chown.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { processStartTime } from '../../src/fs/file-lock.js';
import {
  describeRun,
  expectFailure,
  getUser,
  IS_ROOT,
  makeSandbox,
  type RunningEmulator,
  type RunResult,
  runMain,
  runUgs,
  type Sandbox,
  serveUgs,
  skipOutsideCi,
  startEmulator,
  tempDir,
  withTimersStopped,
} from '../kit/index.js';

const BASE_URL = 'https://ugs.example.com';
const PAGE = 4096;
const NOBODY = 65534;

// These tests are about the config file: the token is saved without asking a service.
const loginArgs = (profile: string) => [
  'login',
  '--no-verify',
  '--with-token',
  '--base-url',
  BASE_URL,
  '--profile',
  profile,
];

/** In-process: what is checked here is files, exit codes and output, not the process. */
function login(sandbox: Sandbox, token: string, profile = 'default'): Promise<RunResult> {
  return runMain(loginArgs(profile), { sandbox, stdin: `${token}\n` });
}

/** The built binary, for logins that must be separate processes (racing for the lock). */
function loginProcess(sandbox: Sandbox, token: string, profile: string): Promise<RunResult> {
  return runUgs(loginArgs(profile), { sandbox, stdin: `${token}\n` });
}

function mode(path: string): number {
  return statSync(path).mode & 0o7777;
}

/** A config of two pages: several profiles with long tokens. */
function bigConfig(): string {
  const profiles: Record<string, { baseUrl: string; apiToken: string }> = {};
  for (let i = 0; i < 40; i++) {
    profiles[`team-${i}`] = {
      baseUrl: `https://team-${i}.example.com`,
      apiToken: `api_${String(i).padStart(4, '0')}_${'k'.repeat(80)}`,
    };
  }
  const text = `${JSON.stringify({ profiles }, null, 2)}\n`;
  expect(text.length).toBeGreaterThan(PAGE);
  expect(text.length).toBeLessThan(2 * PAGE);
  return text;
}

/** Mounts a tmpfs of `pages` pages on `dir`; false where that is not allowed. */
function mountTmpfs(dir: string, pages: number): boolean {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${pages * 4}k,mode=0700`, 'tmpfs', dir], {
      stdio: 'ignore',
    });
    return true;
  } catch {
    return false;
  }
}

function unmount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'ignore' });
}

/** Fills the tmpfs on `dir` (`pages` pages) so that `free` pages are left, besides `used`. */
function fill(dir: string, pages: number, used: number, free: number): void {
  const filler = join(dir, 'filler');
  rmSync(filler, { force: true });
  writeFileSync(filler, Buffer.alloc((pages - used - free) * PAGE));
}

describe('a nearly full disk under the config (tmpfs; root only)', () => {
  test('login and logout: exit 2 with the file byte-identical and nothing left, or a whole new file', async (context) => {
    const sandbox = makeSandbox();
    const PAGES = 16;
    if (!mountTmpfs(sandbox.configDir, PAGES)) {
      skipOutsideCi(context, 'cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
    }
    try {
      const before = bigConfig();
      let failures = 0;
      // 0 free pages: the lock cannot be written; 1: the temp file gets nothing; 2: it gets one
      // page of two (the short write Conf used to rename over the config); 3: it all fits.
      for (const free of [0, 1, 2, 3]) {
        for (const command of ['login', 'logout'] as const) {
          writeFileSync(sandbox.configPath, before, { mode: 0o600 });
          fill(sandbox.configDir, PAGES, 2, free);
          const result =
            command === 'login'
              ? await login(sandbox, 'api_full_disk_token_4444', 'team-1')
              : await runMain(['logout', '--profile', 'team-1'], { sandbox });
          const left = readdirSync(sandbox.configDir).sort();
          expect(left, describeRun(result)).toEqual(['config.json', 'filler']);
          if (result.code === 0) {
            const saved = JSON.parse(readFileSync(sandbox.configPath, 'utf8'));
            expect(Object.keys(saved.profiles)).toHaveLength(40);
            expect(saved.profiles['team-1'].apiToken).toBe(
              command === 'login' ? 'api_full_disk_token_4444' : undefined,
            );
            continue;
          }
          failures++;
          const { error, hint } = expectFailure(result, 2);
          expect(error).toMatch(
            /^cannot write config .*config\.json(\.lock)?: (no space left on device \(ENOSPC\)|short write.*)$/,
          );
          expect(hint).toMatch(/disk is not full/);
          expect(readFileSync(sandbox.configPath, 'utf8'), describeRun(result)).toBe(before);
        }
      }
      expect(
        failures,
        'the disk must really have been too full for some runs',
      ).toBeGreaterThanOrEqual(4);
    } finally {
      unmount(sandbox.configDir);
    }
  });
});

describe('a nearly full disk under the emulator data file (tmpfs; root only)', () => {
  test('a save that fails answers 500 for that request only; the next save after space is freed succeeds; close is quick', async (context) => {
    const dir = join(tempDir('emu-disk'), 'data');
    const PAGES = 16;
    if (!mountTmpfs(dir, PAGES)) {
      skipOutsideCi(context, 'cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
    }
    const dataFile = join(dir, 'state.json');
    const apiTokens = [{ token: 'disk-api-token', environment: 'Customer' as const }];
    let emulator: RunningEmulator | undefined;
    try {
      emulator = await startEmulator({ port: 0, dataFile, apiTokens });
      const url = emulator.url;
      // A state of more than one page.
      for (let i = 0; i < 12; i++) {
        const reply = await getUser(url, 'disk-api-token', {
          user_group_id: `g${i}`,
          name: 'N',
          properties: { pad: 'p'.repeat(400) },
        });
        expect(reply.status).toBe(200);
      }
      const before = readFileSync(dataFile, 'utf8');
      expect(before.length).toBeGreaterThan(PAGE);
      const pages = Math.ceil(before.length / PAGE);
      // Room for part of the next state only: the write is short, then ENOSPC.
      fill(dir, PAGES, pages + 1, 1);
      const failed = await getUser(url, 'disk-api-token', {
        user_group_id: 'big',
        name: 'B',
        properties: { pad: 'q'.repeat(6000) },
      });
      expect(failed.status).toBe(500);
      expect(readFileSync(dataFile, 'utf8')).toBe(before);
      expect(readdirSync(dir).sort()).toEqual(['filler', 'state.json', 'state.json.lock']);

      rmSync(join(dir, 'filler'));
      const next = await getUser(url, 'disk-api-token', { user_group_id: 'after', name: 'A' });
      expect(next.status).toBe(200);
      const saved = readFileSync(dataFile, 'utf8');
      expect(saved).toContain('"after"');
      expect(readdirSync(dir).sort()).toEqual(['state.json', 'state.json.lock']);

      // Quick: without waiting on a timer (drain()'s limit), which a stopped clock makes endless.
      await withTimersStopped(
        'close() after a full disk',
        () => emulator?.close() ?? Promise.resolve(),
      );
      emulator = undefined;
      expect(readdirSync(dir)).toEqual(['state.json']);

      // No room even for the lock: the start fails cleanly, leaving no lock or temp file.
      const size = readFileSync(dataFile).length;
      fill(dir, PAGES, Math.ceil(size / PAGE), 0);
      const attempt = startEmulator({ port: 0, dataFile, apiTokens });
      await expect(attempt).rejects.toThrow(/cannot lock data file .*(ENOSPC|no space)/);
      expect(readdirSync(dir).sort()).toEqual(['filler', 'state.json']);
    } finally {
      await emulator?.close();
      unmount(dir);
    }
  });
});

describe('hostile symlinks and modes', () => {
  test('a config.json symlinked to a file another user owns: login and status exit 2, nothing written through it', async () => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    const victim = join(sandbox.root, 'victim.json');
    const victimText = `${JSON.stringify({ profiles: {} })}\n`;
    writeFileSync(victim, victimText, { mode: 0o666 });
    chmodSync(victim, 0o666);
    if (IS_ROOT) chownSync(victim, NOBODY, NOBODY);
    symlinkSync(victim, sandbox.configPath);

    const result = await login(sandbox, 'api_symlink_token_5555');
    const { error, hint } = expectFailure(result, 2);
    expect(error).toContain(sandbox.configPath);
    expect(error).toMatch(/symbolic link/);
    expect(hint).toBeDefined();
    expect(readFileSync(victim, 'utf8')).toBe(victimText);
    expect(result.stderr).not.toContain('api_symlink_token_5555');

    const status = await runMain(['status', '--json'], { sandbox });
    expect(expectFailure(status, 2).error).toMatch(/symbolic link/);
    // The link itself is left for the user to inspect.
    expect(readdirSync(sandbox.configDir)).toEqual(['config.json']);
  });

  test('a symlinked config.json.lock: exit 2 naming the lock, its target untouched', async () => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    const target = join(sandbox.root, 'lock-target');
    writeFileSync(target, 'precious');
    symlinkSync(target, `${sandbox.configPath}.lock`);
    const result = await login(sandbox, 'api_symlink_token_6666');
    const { error } = expectFailure(result, 2);
    expect(error).toContain(`${sandbox.configPath}.lock`);
    expect(readFileSync(target, 'utf8')).toBe('precious');
    expect(existsSync(sandbox.configPath)).toBe(false);
  });

  test.each<[string, number]>([
    ['a sticky world-writable directory like /tmp', 0o1777],
    ['a setgid group-writable project folder', 0o2775],
  ])(
    'UGS_CONFIG_DIR is %s: its mode is kept, one warning on stderr, the file 0600',
    async (_label, dirMode) => {
      const sandbox = makeSandbox();
      mkdirSync(sandbox.configDir);
      chmodSync(sandbox.configDir, dirMode);
      const result = await login(sandbox, 'api_shared_dir_token_7777');
      expect(result.code, describeRun(result)).toBe(0);
      expect(mode(sandbox.configDir)).toBe(dirMode);
      expect(mode(sandbox.configPath)).toBe(0o600);
      const warnings = result.stderr
        .split('\n')
        .filter((l) => l.startsWith('warning: config directory'));
      expect(warnings, describeRun(result)).toHaveLength(1);
      expect(warnings[0]).toContain(sandbox.configDir);
      expect(result.stderr).not.toContain('api_shared_dir_token_7777');
    },
  );

  test('a missing UGS_CONFIG_DIR is created 0700, without a warning', async () => {
    const sandbox = makeSandbox();
    const result = await login(sandbox, 'api_new_dir_token_8888');
    expect(result.code, describeRun(result)).toBe(0);
    expect(mode(sandbox.configDir)).toBe(0o700);
    expect(result.stderr).not.toMatch(/warning: config directory/);
  });
});

describe('stale locks and reused pids', () => {
  const init = processStartTime(1);

  test.each<[string, () => string]>([
    [
      'pid 1 with a start time that is not its own (a container restart)',
      () => `1\n0123456789abcdef\n${Number(init ?? 0) + 12345}\n`,
    ],
    ['pid 1 in the old pid-only format (pid 1 is not ugs here)', () => '1\n'],
    ['a pid that no longer runs', () => '2147483646\n0123456789abcdef\n42\n'],
  ])('a config lock naming %s does not block login', async (_label, content) => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    const lock = `${sandbox.configPath}.lock`;
    writeFileSync(lock, content());
    // Dated in the future: only what the lock says may make it stale, never its age.
    const future = new Date(Date.now() + 3_600_000);
    utimesSync(lock, future, future);
    // Not the 10 s wait for a live holder: with the clock frozen, that wait would never end.
    const result = await withTimersStopped(
      'login over a stale lock',
      () => login(sandbox, 'api_stale_lock_token_9999'),
      ['Date'],
    );
    expect(result.code, describeRun(result)).toBe(0);
    expect(readdirSync(sandbox.configDir)).toEqual(['config.json']);
  });

  test('a data-file lock naming pid 1 (a container restart) does not block ugs serve --data', async () => {
    const dir = tempDir('serve-lock');
    const dataFile = join(dir, 'state.json');
    writeFileSync(`${dataFile}.lock`, `1\n0123456789abcdef\n${Number(init ?? 0) + 12345}\n`);
    const serve = await serveUgs(['--data', dataFile]);
    expect(serve.url).toMatch(/127\.0\.0\.1:\d+/);
    expect((await serve.stop('SIGTERM')).code, serve.stderr()).toBe(0);
    expect(existsSync(`${dataFile}.lock`)).toBe(false);
  });

  test('eight logins racing over one stale lock: no profile is lost', async () => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    writeFileSync(`${sandbox.configPath}.lock`, '2147483646\n');
    const names = Array.from({ length: 8 }, (_, i) => `racer-${i}`);
    const results = await Promise.all(
      names.map((name) => loginProcess(sandbox, `api_${name}_token`, name)),
    );
    for (const result of results) expect(result.code, describeRun(result)).toBe(0);
    const saved = JSON.parse(readFileSync(sandbox.configPath, 'utf8'));
    expect(Object.keys(saved.profiles).sort()).toEqual([...names].sort());
    expect(readdirSync(sandbox.configDir)).toEqual(['config.json']);
  });
});

describe('leftovers and corrupt files', () => {
  test('temp files left by a killed write (with a token in them) are gone after the next logout', async () => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    writeFileSync(
      sandbox.configPath,
      JSON.stringify({
        profiles: { default: { baseUrl: BASE_URL, apiToken: 'api_live_token_1' } },
      }),
      { mode: 0o600 },
    );
    const orphans = ['config.json.tmp-1732000000a1b2c3', 'config.json.tmp-4242-abcdefabcdef'];
    for (const name of orphans) {
      writeFileSync(
        join(sandbox.configDir, name),
        '{"profiles": {"default": {"apiToken": "api_live_token_1"',
      );
    }
    writeFileSync(join(sandbox.configDir, 'notes.txt'), 'mine');
    const result = await runMain(['logout'], { sandbox });
    expect(result.code, describeRun(result)).toBe(0);
    expect(readdirSync(sandbox.configDir).sort()).toEqual(['config.json', 'notes.txt']);
    expect(readFileSync(sandbox.configPath, 'utf8')).not.toContain('api_live_token_1');
  });

  test('a corrupt config: file, line and column named; none of its content, no control character echoed', async () => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    writeFileSync(
      sandbox.configPath,
      '{\n  "profiles": {\n    "default": {"apiToken": api_SECRET_9f8e7d\u001b[2J\u0007}\n  }\n}\n',
    );
    const result = await runMain(['status'], { sandbox });
    const { error } = expectFailure(result, 2);
    expect(error).toContain(sandbox.configPath);
    expect(error).toMatch(/line 3, column 29/);
    expect(result.stderr).not.toMatch(/SECRET|9f8e7d/);
    expect(result.stderr).not.toContain('\u001b');
    expect(result.stderr).not.toContain('\u0007');
  });
});
