/**
 * The config store's files under attack: parse errors that must not quote the file,
 * directory modes that are not ours to change, symlinks and FIFOs in place of the file or its
 * lock, locks left by a dead or reused pid, and temp files left by a killed write.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { beforeEach, describe, expect, it } from 'vitest';
import { CONFIG_FILE_NAME, confOptions, FileConfigStore } from '../../src/config/config.js';
import { ConfigError } from '../../src/errors.js';
import { processStartTime } from '../../src/fs/file-lock.js';
import { findJsonSyntaxError } from '../../src/text/json-lexer.js';
import { liveProcess, tempDir } from '../kit/binary.js';
import { withTimersStopped } from '../kit/clock.js';
import { rejection } from '../kit/fakes.js';

const linux = process.platform === 'linux';
const posix = process.platform !== 'win32';

let base: string;
let dir: string;
let file: string;

beforeEach(() => {
  base = tempDir('config-files');
  dir = join(base, 'ugs');
  file = join(dir, CONFIG_FILE_NAME);
});

const A = { baseUrl: 'https://a.example', apiToken: 'token-a-1111' };
const B = { baseUrl: 'https://b.example', apiToken: 'token-b-2222' };

function writeConfig(data: unknown): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const text = JSON.stringify(data);
  writeFileSync(file, text, { mode: 0o600 });
  return text;
}

function mode(path: string): number {
  return statSync(path).mode & 0o7777;
}

function thrownBy(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error('expected an error');
}

describe('a config file that is not valid JSON', () => {
  const secret = 'sk_live_SECRET_TOKEN_1234567890';
  // Each case: the text, and where the error is (a substring it starts at, or the end).
  it.each<[string, string, string | null]>([
    [
      'a bare word where a value belongs',
      `{\n  "profiles": {"d": {"apiToken": ${secret}}}\n}`,
      'sk_live',
    ],
    [
      'a control character inside the token',
      `{"profiles": {"d": {"apiToken": "${secret}\u0007x"}}}`,
      '\u0007',
    ],
    ['a cut-off file', `{"profiles": {"d": {"apiToken": "${secret}`, null],
    ['a missing comma', `{"profiles": {"d": {"apiToken": "x" "${secret}"}}}`, ` "${secret}`],
    ['trailing data', `{"profiles": {}}\n\n  ${secret}`, secret],
    ['an empty file', '', null],
  ])('(%s) names the file, line and column, and quotes nothing', (_label, text, at) => {
    mkdirSync(dir, { mode: 0o700 });
    writeFileSync(file, text);
    let offset = at === null ? text.length : text.indexOf(at);
    if (at?.startsWith(' ')) offset += 1;
    const before = text.slice(0, offset).split('\n');
    const line = before.length;
    const column = (before.at(-1) ?? '').length + 1;
    const error = thrownBy(() => new FileConfigStore(dir).readProfile('d'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).exitCode).toBe(2);
    const message = (error as Error).message;
    expect(message).toContain(file);
    expect(message).toContain(`at line ${line}, column ${column}`);
    expect(message).not.toMatch(/SECRET|sk_live|TOKEN/);
    expect(message).not.toContain('"');
    expect([...message].some((c) => c.charCodeAt(0) < 0x20)).toBe(false);
    expect(`${(error as ConfigError).hint}`).not.toMatch(/SECRET/);
  });

  it('the scanner agrees with JSON.parse on where a document is broken (a few hundred cases)', () => {
    const valid =
      '{"a": [1, -2.5e3, true, false, null, "x\\"\\u00e9\\n"], "b": {"c": {}}, "d": []}';
    for (let cut = 0; cut < valid.length; cut++) {
      for (const junk of ['', '}', ',', 'x', '"', ':']) {
        const text = valid.slice(0, cut) + junk + valid.slice(cut + 1);
        let parsed = true;
        try {
          JSON.parse(text);
        } catch {
          parsed = false;
        }
        if (parsed) continue;
        const found = findJsonSyntaxError(text);
        const position = /at position (\d+)/.exec(
          (() => {
            try {
              JSON.parse(text);
              return '';
            } catch (e) {
              return (e as Error).message;
            }
          })(),
        );
        if (position) expect(found.offset, text).toBe(Number(position[1]));
        expect(found.reason).not.toBe('not valid JSON');
      }
    }
  });
});

describe.skipIf(!posix)('the config directory', () => {
  it('is created 0700 when missing', async () => {
    await new FileConfigStore(dir).updateProfile('default', () => A);
    expect(mode(dir)).toBe(0o700);
    expect(mode(file)).toBe(0o600);
  });

  it.each<[string, number, boolean]>([
    ['a sticky world-writable directory (like /tmp)', 0o1777, true],
    ['a setgid group-writable project folder', 0o2775, true],
    ['a 0755 directory', 0o755, false],
  ])('%s keeps its mode; a warning if others can write there', async (_label, dirMode, warns) => {
    mkdirSync(dir);
    chmodSync(dir, dirMode);
    const warnings: string[] = [];
    const store = new FileConfigStore(dir, { warn: (m) => warnings.push(m) });
    await store.updateProfile('a', () => A);
    await store.updateProfile('b', () => B);
    expect(mode(dir)).toBe(dirMode);
    expect(mode(file)).toBe(0o600);
    expect(warnings).toHaveLength(warns ? 1 : 0);
    if (warns) expect(warnings[0]).toMatch(/^warning: config directory .* is writable by/);
  });
});

describe.skipIf(!posix)('symlinks and special files are never followed', () => {
  it('a symlinked config.json: read and write refused with exit 2, the target untouched', async () => {
    mkdirSync(dir, { mode: 0o700 });
    const victim = join(base, 'someone-elses-file');
    writeFileSync(victim, JSON.stringify({ profiles: { default: A } }));
    symlinkSync(victim, file);
    const before = readFileSync(victim, 'utf8');
    const store = new FileConfigStore(dir);

    const readError = thrownBy(() => store.readProfile('default'));
    expect(readError).toBeInstanceOf(ConfigError);
    expect((readError as ConfigError).exitCode).toBe(2);
    expect((readError as Error).message).toContain(file);
    expect((readError as Error).message).toMatch(/symbolic link/);

    const writeError = await rejection(store.updateProfile('default', () => B));
    expect(writeError).toBeInstanceOf(ConfigError);
    expect((writeError as Error).message).toMatch(/symbolic link/);
    expect(readFileSync(victim, 'utf8')).toBe(before);
    expect(readdirSync(dir).sort()).toEqual([CONFIG_FILE_NAME]);
  });

  it('a dangling symlink is refused too (it would create the target)', async () => {
    mkdirSync(dir, { mode: 0o700 });
    const target = join(base, 'planted');
    symlinkSync(target, file);
    const error = await rejection(new FileConfigStore(dir).updateProfile('default', () => A));
    expect(error).toBeInstanceOf(ConfigError);
    expect(existsSync(target)).toBe(false);
  });

  it('a symlinked lock is refused naming the lock, its target untouched', async () => {
    writeConfig({ profiles: {} });
    const target = join(base, 'lock-target');
    writeFileSync(target, 'keep');
    symlinkSync(target, `${file}.lock`);
    const error = await rejection(new FileConfigStore(dir).updateProfile('default', () => A));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(`${file}.lock`);
    expect((error as Error).message).toMatch(/symbolic link/);
    expect(readFileSync(target, 'utf8')).toBe('keep');
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: {} });
  });

  it('a FIFO in place of config.json is "not a regular file", exit 2, and never blocks', () => {
    mkdirSync(dir, { mode: 0o700 });
    execFileSync('mkfifo', [file]);
    const error = thrownBy(() => new FileConfigStore(dir).readProfile('default'));
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toContain(file);
    expect((error as Error).message).toMatch(/not a regular file/);
  });
});

describe('stale locks', () => {
  it('a lock naming this very process (a previous incarnation) is taken over at once', async () => {
    writeConfig({ profiles: {} });
    writeFileSync(`${file}.lock`, `${process.pid}\n`);
    // At once: with the clock frozen, waiting for the lock's holder (or out its 5 s) never ends.
    await withTimersStopped(
      'taking over a lock of this process',
      () => new FileConfigStore(dir, { lockTimeoutMs: 5_000 }).updateProfile('default', () => A),
      ['Date'],
    );
    expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { default: A } });
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it.skipIf(!linux)(
    'a lock naming a live pid with another start time (pid reuse) is stale',
    async () => {
      const pid = await liveProcess();
      writeConfig({ profiles: {} });
      writeFileSync(`${file}.lock`, `${pid}\nabcdef0123456789\n1\n`);
      await new FileConfigStore(dir, { lockTimeoutMs: 5_000 }).updateProfile('default', () => A);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { default: A } });
    },
  );

  it.skipIf(!linux)(
    'an old pid-only lock naming a live process that is not ugs is stale',
    async () => {
      const pid = await liveProcess();
      writeConfig({ profiles: {} });
      writeFileSync(`${file}.lock`, `${pid}`);
      await new FileConfigStore(dir, { lockTimeoutMs: 5_000 }).updateProfile('default', () => A);
      expect(JSON.parse(readFileSync(file, 'utf8'))).toEqual({ profiles: { default: A } });
    },
  );

  it.skipIf(!linux)('a lock of a live process with its own start time is respected', async () => {
    const pid = await liveProcess();
    const start = processStartTime(pid);
    expect(start).toMatch(/^\d+$/);
    writeConfig({ profiles: { default: A } });
    writeFileSync(`${file}.lock`, `${pid}\nabcdef0123456789\n${start}\n`);
    const error = await rejection(
      new FileConfigStore(dir, { lockTimeoutMs: 100 }).updateProfile('default', () => B),
    );
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toMatch(
      new RegExp(`locked by another ugs process \\(pid ${pid}\\)`),
    );
    expect(readFileSync(`${file}.lock`, 'utf8')).toContain(String(pid));
  });

  it('many updates in one process racing over a stale lock lose no profile', async () => {
    writeConfig({ profiles: {} });
    writeFileSync(`${file}.lock`, '2147483646\n');
    const names = Array.from({ length: 12 }, (_, i) => `p${i}`);
    await Promise.all(
      names.map((name) =>
        new FileConfigStore(dir, { lockTimeoutMs: 10_000 }).updateProfile(name, () => A),
      ),
    );
    const saved = JSON.parse(readFileSync(file, 'utf8')).profiles;
    expect(Object.keys(saved).sort()).toEqual([...names].sort());
    expect(readdirSync(dir)).toEqual([CONFIG_FILE_NAME]);
  });
});

describe('temp files of an interrupted write', () => {
  it('are removed on the next write: only our patterns, only regular files, only that directory', async () => {
    writeConfig({ profiles: { default: A } });
    const ours = [
      `${CONFIG_FILE_NAME}.tmp-4242-abcdefabcdef`, // this module's
      `${CONFIG_FILE_NAME}.tmp-1732000000a1b2c3`, // atomically's (what Conf used to leave)
    ];
    for (const name of ours)
      writeFileSync(join(dir, name), '{"profiles": {"default": {"apiToken": "old');
    const notOurs = [
      `${CONFIG_FILE_NAME}.tmp-notes.txt`,
      'other.json.tmp-4242-abcdefabcdef',
      'keep.me',
    ];
    for (const name of notOurs) writeFileSync(join(dir, name), 'x');
    mkdirSync(join(dir, `${CONFIG_FILE_NAME}.tmp-1-abcdefabcdef`)); // a directory: left alone
    const outside = join(base, `${CONFIG_FILE_NAME}.tmp-9-abcdefabcdef`);
    writeFileSync(outside, 'x');
    if (posix) symlinkSync(outside, join(dir, `${CONFIG_FILE_NAME}.tmp-2-abcdefabcdef`));

    await new FileConfigStore(dir).updateProfile('default', () => undefined);

    const left = readdirSync(dir).sort();
    for (const name of ours) expect(left).not.toContain(name);
    for (const name of notOurs) expect(left).toContain(name);
    expect(left).toContain(`${CONFIG_FILE_NAME}.tmp-1-abcdefabcdef`);
    if (posix) expect(left).toContain(`${CONFIG_FILE_NAME}.tmp-2-abcdefabcdef`);
    expect(existsSync(outside)).toBe(true);
    expect(readFileSync(file, 'utf8')).not.toContain('token-a');
  });
});

describe('the read path, which does without Conf, and Conf (which owns the schema and writes)', () => {
  const field = fc.oneof(
    fc.constant(undefined),
    fc.string({ maxLength: 8 }),
    fc.constant('keyring'),
    fc.integer(),
    fc.boolean(),
    fc.constant(null),
    fc.constant([]),
    fc.constant({}),
  );
  const profile = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.record(
        {
          baseUrl: field,
          apiToken: field,
          apiPath: field,
          tokenStore: field,
          production: field,
          extra: field,
        },
        { requiredKeys: [] },
      ),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(fc.constant(null), fc.string({ maxLength: 4 }), fc.constant([1])),
    },
  );
  const profiles = fc.oneof(
    {
      weight: 4,
      arbitrary: fc.dictionary(fc.string({ minLength: 1, maxLength: 6 }), profile, { maxKeys: 3 }),
    },
    {
      weight: 1,
      arbitrary: fc.oneof(fc.constant(null), fc.constant([]), fc.string({ maxLength: 4 })),
    },
  );
  const file = fc.oneof(
    {
      weight: 6,
      // defaultProfile: `ugs profile use`'s choice, which both must accept or refuse alike.
      arbitrary: fc.record({ profiles, defaultProfile: field, other: field }, { requiredKeys: [] }),
    },
    { weight: 1, arbitrary: fc.oneof(fc.constant([]), fc.constant(null), fc.constant('text')) },
  );

  it('accept and refuse the same files, and read the same profiles', async () => {
    const { Conf } = await import('../../src/vendor/conf.js');
    fc.assert(
      fc.property(file, (data) => {
        const text = writeConfig(data);
        const written: unknown = data;
        const names =
          isObject(written) && isObject(written.profiles) ? Object.keys(written.profiles) : [];
        let read: unknown[] | undefined;
        try {
          const store = new FileConfigStore(dir);
          read = ['default', ...names].map((name) => store.readProfile(name));
        } catch (error) {
          expect(error).toBeInstanceOf(ConfigError);
        }
        let confRead: unknown[] | undefined;
        try {
          const conf = new Conf<{ profiles: Record<string, unknown> }>(confOptions(dir));
          const all = conf.get('profiles');
          confRead = ['default', ...names].map((name) =>
            Object.hasOwn(all, name) ? all[name] : undefined,
          );
        } catch {
          confRead = undefined;
        }
        expect(read, `${text}: the reader and Conf disagree`).toEqual(confRead);
      }),
      { numRuns: 300 },
    );
    // 300 files, a Conf (and its schema compiled) for each: seconds of CPU, many more on a
    // loaded runner, so the default 20 s bound is not this test's.
  }, 90_000);
});

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
