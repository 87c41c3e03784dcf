/**
 * The config file under pressure: its modes, two `ugs login` runs at the same moment, a config
 * directory that cannot be written (read-only, under a file, on a full disk), and the files and
 * streams that `--properties` is pointed at.
 *
 * These tests usually run as root in containers, and root ignores permission bits: a chmod 0500
 * directory or a chmod 0000 file stops nobody. So where permissions are the point, the binary is
 * run as the unprivileged user `nobody` (spawn's uid/gid) when the suite runs as root, and as the
 * current user otherwise. A full disk is a small tmpfs, mounted only where that is allowed (and
 * always under CI). Runs are in-process (`runMain`) unless they need a process: another uid, a
 * stdin closed at /dev/null, a named pipe, and the logins that race between two processes.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import {
  describeRun,
  expectFailure,
  makeSandbox,
  NOBODY,
  okBody,
  type RunOptions,
  type RunResult,
  runMain,
  runUgs,
  type Sandbox,
  sendJson,
  skipOutsideCi,
  startServer,
  startUgsWorker,
  tempDir,
  unprivileged,
  userGroup,
} from '../kit/index.js';

const BASE_URL = 'https://ugs.example.com';

function mode(path: string): number {
  return statSync(path).mode & 0o777;
}

/** ugs in-process, or the binary where the run needs a process (another uid, /dev/null stdin). */
function ugs(args: readonly string[], options: RunOptions = {}): Promise<RunResult> {
  if (options.uid !== undefined || options.stdin === null) return runUgs(args, options);
  const { sandbox, env, stdin, timeoutMs } = options;
  return runMain(args, {
    ...(sandbox !== undefined && { sandbox }),
    ...(env !== undefined && { env }),
    ...(stdin !== undefined && { stdin }),
    ...(timeoutMs !== undefined && { timeoutMs }),
  });
}

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

function login(
  sandbox: Sandbox,
  token: string,
  profile = 'default',
  extra: { uid?: number; gid?: number; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RunResult> {
  return ugs(loginArgs(profile), { sandbox, stdin: `${token}\n`, ...extra });
}

function writeJson(path: string, data: unknown, fileMode: number): string {
  const text = `${JSON.stringify(data, null, 2)}\n`;
  writeFileSync(path, text, { mode: fileMode });
  chmodSync(path, fileMode); // the umask may have narrowed it
  return text;
}

describe('file and directory modes', () => {
  test('a new config: directory 0700, file 0600, nothing else left in the directory', async () => {
    const sandbox = makeSandbox();
    const result = await login(sandbox, 'api_modes_token_1234');
    expect(result.code, describeRun(result)).toBe(0);
    expect(mode(sandbox.configDir)).toBe(0o700);
    expect(mode(sandbox.configPath)).toBe(0o600);
    expect(readdirSync(sandbox.configDir)).toEqual(['config.json']);
  });

  test('an existing 0644 file is tightened to 0600; its existing 0755 directory keeps its mode; data kept', async () => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o755 });
    chmodSync(sandbox.configDir, 0o755);
    writeJson(
      sandbox.configPath,
      {
        profiles: { other: { baseUrl: 'https://other.example.com', apiToken: 'keep-me-1234' } },
        x: 1,
      },
      0o644,
    );
    expect(mode(sandbox.configPath)).toBe(0o644);

    const result = await login(sandbox, 'api_modes_token_5678');
    expect(result.code, describeRun(result)).toBe(0);
    expect(mode(sandbox.configPath)).toBe(0o600);
    // A directory ugs did not create is not ugs's to chmod; 0755 is not writable by
    // others, so there is no warning either.
    expect(mode(sandbox.configDir)).toBe(0o755);
    expect(result.stderr).not.toMatch(/warning: config directory/);
    expect(JSON.parse(readFileSync(sandbox.configPath, 'utf8'))).toEqual({
      profiles: {
        other: { baseUrl: 'https://other.example.com', apiToken: 'keep-me-1234' },
        default: { baseUrl: BASE_URL, apiToken: 'api_modes_token_5678' },
      },
      x: 1,
    });

    // logout rewrites the file too: loosened again in between, it comes back 0600.
    chmodSync(sandbox.configPath, 0o644);
    const logout = await ugs(['logout'], { sandbox });
    expect(logout.code, describeRun(logout)).toBe(0);
    expect(mode(sandbox.configPath)).toBe(0o600);
    expect(readdirSync(sandbox.configDir)).toEqual(['config.json']);
  });
});

describe('two logins at the same moment', () => {
  test('50 pairs of `login --profile a` / `--profile b`: both profiles survive every time', async () => {
    // Two processes of the built bundle, each running one login of every pair: the file lock is
    // taken between processes, as between two `ugs` runs, and both start each round in the same
    // tick (closer together than two Node starts would be), for two Node starts in all. Rounds
    // run five at a time, each in its own sandbox, so that one round's fsyncs overlap another's.
    const racers = await Promise.all([startUgsWorker(), startUgsWorker()]);
    const lost: string[] = [];
    const round = async (i: number) => {
      const sandbox = makeSandbox();
      // A third of the rounds update a file that already holds a third profile, which must
      // survive as well; the others race to create the directory and the file, some of them
      // three directory levels deep.
      const existing = i % 3 === 0;
      const dir = i % 3 === 2 ? join(sandbox.configDir, 'deeper', 'still') : sandbox.configDir;
      const file = join(dir, 'config.json');
      if (existing) {
        mkdirSync(dir, { mode: 0o700 });
        writeJson(file, { profiles: { c: { baseUrl: BASE_URL } } }, 0o600);
      }
      const env = { UGS_CONFIG_DIR: dir };
      const [a, b] = await Promise.all(
        racers.map((racer, n) => {
          const profile = n === 0 ? 'a' : 'b';
          return racer.run(loginArgs(profile), {
            sandbox,
            env,
            stdin: `api_race_${profile}_${i}_token\n`,
          });
        }),
      );
      if (a === undefined || b === undefined) throw new Error('two racers');
      expect(a.code, describeRun(a)).toBe(0);
      expect(b.code, describeRun(b)).toBe(0);
      const profiles = JSON.parse(readFileSync(file, 'utf8')).profiles;
      const want: Record<string, unknown> = {
        a: { baseUrl: BASE_URL, apiToken: `api_race_a_${i}_token` },
        b: { baseUrl: BASE_URL, apiToken: `api_race_b_${i}_token` },
        ...(existing && { c: { baseUrl: BASE_URL } }),
      };
      if (JSON.stringify(profiles) !== JSON.stringify({ ...profiles, ...want })) {
        lost.push(`round ${i}: ${JSON.stringify(profiles)}`);
      }
      expect(Object.keys(profiles).sort()).toEqual(Object.keys(want).sort());
      expect(readdirSync(dir)).toEqual(['config.json']);
      expect(mode(file)).toBe(0o600);
      expect(mode(dir)).toBe(0o700);
    };
    try {
      for (let first = 0; first < 50; first += 5) {
        await Promise.all([0, 1, 2, 3, 4].map((n) => round(first + n)));
      }
    } finally {
      await Promise.all(racers.map((racer) => racer.close()));
    }
    expect(lost).toEqual([]);
  }, 60_000);
});

describe('profile use and profile remove of one name at the same moment', () => {
  test('60 pairs of `profile use staging` / `profile remove staging`: the default always names a saved profile or none', async () => {
    // Two processes of the built bundle, as for the logins above. `use` looks at the profiles,
    // then takes the lock to write; a `remove` that wrote in between must not leave it writing
    // a default that names the profile just removed.
    const racers = await Promise.all([startUgsWorker(), startUgsWorker()]);
    const broken: string[] = [];
    const outcomes = { usedFirst: 0, removedFirst: 0 };
    const round = async (i: number) => {
      const sandbox = makeSandbox();
      mkdirSync(sandbox.configDir, { mode: 0o700 });
      writeJson(
        sandbox.configPath,
        { profiles: { default: { baseUrl: BASE_URL }, staging: { baseUrl: BASE_URL } } },
        0o600,
      );
      const [use, remove] = await Promise.all([
        racers[0]?.run(['profile', 'use', 'staging'], { sandbox }),
        racers[1]?.run(['profile', 'remove', 'staging', '--yes'], { sandbox }),
      ]);
      if (use === undefined || remove === undefined) throw new Error('two racers');
      expect(remove.code, describeRun(remove)).toBe(0);
      // use either came first (and remove then cleared the default) or saw staging gone.
      if (use.code === 0) outcomes.usedFirst++;
      else {
        expect(expectFailure(use, 2).error).toBe('no saved profile "staging" (ugs profile use)');
        outcomes.removedFirst++;
      }
      const config = JSON.parse(readFileSync(sandbox.configPath, 'utf8'));
      expect(Object.keys(config.profiles)).toEqual(['default']);
      if (config.defaultProfile !== undefined && !(config.defaultProfile in config.profiles)) {
        broken.push(`round ${i}: defaultProfile ${config.defaultProfile}, use exit ${use.code}`);
      }
    };
    try {
      for (let first = 0; first < 60; first += 5) {
        await Promise.all([0, 1, 2, 3, 4].map((n) => round(first + n)));
      }
    } finally {
      await Promise.all(racers.map((racer) => racer.close()));
    }
    expect(broken).toEqual([]);
    // Every round ended in one of the two orders, and nothing else.
    expect(outcomes.usedFirst + outcomes.removedFirst).toBe(60);
  }, 60_000);
});

describe('a config directory that cannot be written: exit 2, a clear message, old file intact', () => {
  /** An existing config whose bytes must not change. */
  function existingConfig(sandbox: Sandbox): string {
    mkdirSync(sandbox.configDir, { recursive: true, mode: 0o700 });
    return writeJson(
      sandbox.configPath,
      { profiles: { default: { baseUrl: 'https://old.example.com', apiToken: 'old-token-9999' } } },
      0o600,
    );
  }

  test('a read-only directory (chmod 0500; run as nobody when we are root)', async () => {
    const sandbox = makeSandbox();
    const before = existingConfig(sandbox);
    const user = unprivileged(sandbox);
    if (user.uid !== undefined) chownSync(sandbox.configDir, NOBODY, NOBODY);
    if (user.uid !== undefined) chownSync(sandbox.configPath, NOBODY, NOBODY);
    chmodSync(sandbox.configDir, 0o500);
    try {
      const result = await login(sandbox, 'api_new_token_0000', 'default', user);
      const { error, hint } = expectFailure(result, 2);
      expect(error).toMatch(
        /^cannot write config .*config\.json(\.lock)?: permission denied \(EACCES\)$/,
      );
      expect(hint).toMatch(/writable/);
      expect(readFileSync(sandbox.configPath, 'utf8')).toBe(before);
      expect(readdirSync(sandbox.configDir)).toEqual(['config.json']);
      // Reading still works: the profile is intact and usable.
      const status = await ugs(['status', '--json'], { sandbox, ...user });
      expect(status.code, describeRun(status)).toBe(0);
      expect(JSON.parse(status.stdout).baseUrl).toBe('https://old.example.com');
    } finally {
      chmodSync(sandbox.configDir, 0o700);
    }
  });

  test('a read-only file in a writable directory is replaced atomically (rename), not refused', async () => {
    // Documenting behaviour: the write is temp file + rename, so the file's own mode does not
    // matter, only the directory's. The result is still 0600.
    const sandbox = makeSandbox();
    existingConfig(sandbox);
    chmodSync(sandbox.configPath, 0o400);
    const result = await login(sandbox, 'api_new_token_1111');
    expect(result.code, describeRun(result)).toBe(0);
    expect(mode(sandbox.configPath)).toBe(0o600);
  });

  test('UGS_CONFIG_DIR under a regular file (ENOTDIR)', async () => {
    const sandbox = makeSandbox();
    const file = join(sandbox.root, 'a-file');
    writeFileSync(file, 'not a directory');
    const result = await login(sandbox, 'api_new_token_2222', 'default', {
      env: { UGS_CONFIG_DIR: join(file, 'ugs') },
    });
    const { error } = expectFailure(result, 2);
    // login reads the profile first, so the read reports it.
    expect(error).toMatch(
      /^cannot (read|write) config .*a-file\/ugs\/?.*: a parent is not a directory \(ENOTDIR\)$/,
    );
    expect(readFileSync(file, 'utf8')).toBe('not a directory');
  });

  test('UGS_CONFIG_DIR inside /proc (no writes there, even for root): fails, never spins', async () => {
    const sandbox = makeSandbox();
    const result = await login(sandbox, 'api_new_token_3333', 'default', {
      env: { UGS_CONFIG_DIR: '/proc/ugs-hardening-test' },
      timeoutMs: 5_000,
    });
    const { error } = expectFailure(result, 2);
    expect(error).toMatch(/^cannot write config \/proc\/ugs-hardening-test: .*ENOENT/);
  });

  test('a full disk (a tiny tmpfs; skipped where mounting is not allowed, failed under CI)', async (context) => {
    const sandbox = makeSandbox();
    mkdirSync(sandbox.configDir, { mode: 0o700 });
    try {
      execFileSync(
        'mount',
        ['-t', 'tmpfs', '-o', 'size=16k,mode=0700', 'tmpfs', sandbox.configDir],
        {
          stdio: 'ignore',
        },
      );
    } catch {
      skipOutsideCi(context, 'cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)');
    }
    try {
      const before = existingConfig(sandbox);
      // Four pages of 4 KiB: the config takes one; leave `free` pages.
      for (const free of [0, 1]) {
        const filler = join(sandbox.configDir, 'filler');
        writeFileSync(filler, Buffer.alloc((3 - free) * 4096));
        const result = await login(sandbox, 'api_new_token_4444');
        const { error, hint } = expectFailure(result, 2);
        expect(error).toMatch(/^cannot write config .*: no space left on device \(ENOSPC\)$/);
        expect(hint).toMatch(/disk is not full/);
        expect(readFileSync(sandbox.configPath, 'utf8')).toBe(before);
        // Neither the lock nor a temp file is left behind to block or litter.
        expect(readdirSync(sandbox.configDir).sort()).toEqual(['config.json', 'filler']);
      }
    } finally {
      execFileSync('umount', [sandbox.configDir], { stdio: 'ignore' });
    }
  });
});

describe('--properties and stdin sources that cannot be used: exit 2, nothing sent, no hang', () => {
  const GET = ['get', '--id', 'acme', '--name', 'Acme Corp'];

  async function withServer(work: (baseUrl: string) => Promise<RunResult[]>): Promise<RunResult[]> {
    const server = await startServer(({ res }) => sendJson(res, 200, okBody()));
    try {
      const results = await work(server.url);
      expect(server.requests, 'no request may be sent after a usage error').toHaveLength(0);
      return results;
    } finally {
      await server.close();
    }
  }

  const env = { UGS_API_TOKEN: 'api_properties_token_77' };

  test.concurrent('@file: missing, a directory, 10 MiB', async () => {
    const dir = tempDir('props');
    const big = join(dir, 'big.json');
    writeFileSync(big, `{"pad": "${'x'.repeat(10 * 1024 * 1024)}"}`);
    const [missing, directory, huge] = await withServer((url) =>
      Promise.all(
        [join(dir, 'nope.json'), dir, big].map((path) =>
          ugs([...GET, '--base-url', url, '--properties', `@${path}`], { env }),
        ),
      ),
    );
    expect(expectFailure(missing as RunResult, 2).error).toMatch(
      /--properties @.*nope\.json: .*no such file/,
    );
    expect(expectFailure(directory as RunResult, 2).error).toMatch(/is a directory/);
    expect(expectFailure(huge as RunResult, 2).error).toMatch(/larger than 1 MiB/);
  });

  test.concurrent('@file that cannot be read (mode 0000; as nobody when we are root)', async () => {
    const sandbox = makeSandbox();
    const user = unprivileged(sandbox);
    const file = join(sandbox.root, 'secret-props.json');
    writeFileSync(file, '{"plan": "pro"}');
    chmodSync(file, 0o000);
    const [result] = await withServer((url) =>
      Promise.all([
        ugs([...GET, '--base-url', url, '--properties', `@${file}`], { sandbox, env, ...user }),
      ]),
    );
    expect(expectFailure(result as RunResult, 2).error).toMatch(
      /--properties @.*secret-props\.json: cannot read the file \(permission denied\)/,
    );
  });

  test.concurrent('stdin empty, closed (/dev/null), blank or 10 MiB for `--properties -`', async () => {
    const results = await withServer((url) =>
      Promise.all(
        ['', null, '  \n\t\n', `{"pad": "${'x'.repeat(10 * 1024 * 1024)}"}`].map((stdin) =>
          ugs([...GET, '--base-url', url, '--properties', '-'], {
            env,
            stdin,
            timeoutMs: 10_000,
          }),
        ),
      ),
    );
    const [empty, closed, blank, huge] = results as [RunResult, RunResult, RunResult, RunResult];
    for (const result of [empty, closed, blank]) {
      expect(expectFailure(result, 2).error).toMatch(/--properties -: stdin was empty/);
    }
    expect(expectFailure(huge, 2).error).toMatch(/stdin is larger than 1 MiB/);
  });

  test.concurrent('--with-token and --current-token-stdin with nothing on stdin', async () => {
    const sandbox = makeSandbox();
    const results = await withServer((url) =>
      Promise.all([
        ugs(['login', '--with-token', '--base-url', url], { sandbox, stdin: '' }),
        ugs(['login', '--with-token', '--base-url', url], { sandbox, stdin: null }),
        ugs(['rotate', '--yes', '--current-token-stdin', '--base-url', url], {
          env,
          stdin: '\n',
        }),
        ugs(['rotate', '--yes', '--current-token-stdin', '--base-url', url], {
          env,
          stdin: null,
        }),
      ]),
    );
    for (const result of results) expect(expectFailure(result, 2).error).toMatch(/stdin was empty/);
    expect(() => statSync(sandbox.configPath)).toThrow();
  });

  test.concurrent('a named pipe works as @file (process substitution, `@<(cmd)`)', async () => {
    const dir = tempDir('fifo');
    const fifo = join(dir, 'props.fifo');
    execFileSync('mkfifo', [fifo]);
    const server = await startServer(({ res }) =>
      sendJson(res, 200, okBody({ user_group: userGroup({ provided_id: 'acme' }) })),
    );
    try {
      const run = runUgs([...GET, '--base-url', server.url, '--properties', `@${fifo}`, '--json'], {
        env,
        timeoutMs: 10_000,
      });
      // Opening a FIFO for writing waits for a reader: ugs must open it and read to the end.
      const written = writeFile(fifo, '{"plan": "pro"}');
      const result = await run.finally(() => {
        // Release the writer if ugs never opened the pipe, so no thread waits forever.
        closeSync(openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK));
      });
      await written;
      expect(result.code, describeRun(result)).toBe(0);
      expect(JSON.parse(server.requests[0]?.body ?? '{}').properties).toEqual({ plan: 'pro' });
    } finally {
      await server.close();
    }
  });
});
