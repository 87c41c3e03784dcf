/**
 * The Windows lane (`npm run test:windows`): ugs for Windows under Wine, against `ugs serve` on
 * Linux (the built binary, a real process on 127.0.0.1). The built bin/ugs.js runs under the
 * registry's node.exe; the single executable dist/bin/ugs-win-x64.exe runs alone. What Wine
 * cannot show (ACLs, SmartScreen, PowerShell 5.1's argument passing) is in docs/dev/TESTING.md.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { lastByRow, readRecords } from '../kit/bulk.js';
import {
  describeRun,
  type EnvChanges,
  makeSandbox,
  PACKAGE_VERSION,
  type RunResult,
  type Sandbox,
  type ServeProcess,
  STACK_LINE,
  serveUgs,
  tableToken,
} from '../kit/index.js';
import {
  runWindows,
  startWindows,
  type WineRunOptions,
  windowsPath,
  wine,
  wineAppData,
} from '../kit/wine.js';

const HEX64 = /^[0-9a-f]{64}$/;

let emulator: ServeProcess;

beforeAll(async () => {
  emulator = await serveUgs(['--debug']);
});

afterAll(async () => {
  await emulator?.stop();
  rmSync(join(wineAppData(), 'ugs'), { recursive: true, force: true });
});

function uniqueId(prefix: string): string {
  return `${prefix}-${randomUUID().slice(0, 8)}`;
}

function expectExit(result: RunResult, code: number): void {
  expect(result.code, describeRun(result)).toBe(code);
  if (!result.args.includes('--debug')) {
    expect(result.stderr, describeRun(result)).not.toMatch(STACK_LINE);
  }
}

/** The environment that points ugs at `server` with its Customer API token. */
function serviceEnv(server: ServeProcess): EnvChanges {
  return { UGS_BASE_URL: server.url, UGS_API_TOKEN: server.tokenFor('Customer') };
}

async function ugs(
  args: readonly string[],
  code: number,
  options: WineRunOptions = {},
): Promise<RunResult> {
  const result = await runWindows(args, options);
  expectExit(result, code);
  return result;
}

async function fieldToken(id: string, options: WineRunOptions): Promise<string> {
  const result = await ugs(['get', '--id', id, '--name', id, '--field', 'token'], 0, options);
  expect(result.stdout, describeRun(result)).toMatch(/^[0-9a-f]{64}\n$/);
  return result.stdout.trim();
}

/** Every `rotated id="..."` line of a `ugs serve --debug` log, counted by group id. */
function rotationsIn(log: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const [, id] of log.matchAll(/\brotated id="([^"]+)"/g)) {
    if (id !== undefined) counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  return counts;
}

interface Rec {
  row: number;
  user_group_id: string | null;
  name: string | null;
  status: string;
  token: string | null;
  error: string | null;
}

describe('ugs under node.exe (Wine) against ugs serve on Linux', () => {
  it('login (verified) into %APPDATA%, status, get, rotate, history, whois, doctor, logout', async () => {
    // No UGS_CONFIG_DIR: the config goes where a Windows user's does.
    const options: WineRunOptions = { defaultConfigDir: true, sandbox: makeSandbox() };
    const apiToken = emulator.tokenFor('Customer');
    const configPath = join(wineAppData(), 'ugs', 'Config', 'config.json');
    rmSync(dirname(configPath), { recursive: true, force: true });

    const login = await ugs(['login', '--base-url', emulator.url, '--with-token'], 0, {
      ...options,
      stdin: `${apiToken}\r\n`,
    });
    expect(login.stderr).toContain('the service accepted the token');
    expect(login.stderr).toMatch(/C:\\users\\[^\\]+\\AppData\\Roaming\\ugs\\Config\\config\.json/);
    // Wine, as Windows, reports every folder as mode 0777: that says nothing there, and
    // %APPDATA% is in the user's profile.
    expect(login.stderr).not.toMatch(/writable by|outside your user profile/);
    expect(login.stdout + login.stderr).not.toContain(apiToken);
    expect(JSON.parse(readFileSync(configPath, 'utf8'))).toEqual({
      profiles: { default: { baseUrl: emulator.url, apiToken } },
    });

    const status = await ugs(['status', '--json'], 0, options);
    expect(JSON.parse(status.stdout)).toMatchObject({ profile: 'default' });
    expect(status.stdout).not.toContain(apiToken);

    const id = uniqueId('win');
    const created = await ugs(
      ['get', '--id', id, '--name', 'Acme', '--property', 'plan=pro'],
      0,
      options,
    );
    expect(created.stderr).toContain(`Created user group ${id}`);
    const token = tableToken(created.stdout) ?? '';
    expect(token, describeRun(created)).toMatch(HEX64);
    const found = await ugs(
      ['get', '--id', id, '--name', 'Acme', '--property', 'plan=pro', '--json'],
      0,
      options,
    );
    expect(JSON.parse(found.stdout)).toMatchObject({
      new_user_group: false,
      user_group: { token, properties: { plan: 'pro' } },
    });

    const rotated = await ugs(['rotate', '--current-token-stdin', '--yes', '--field', 'token'], 0, {
      ...options,
      stdin: token,
    });
    const newToken = rotated.stdout.trim();
    expect(newToken).toMatch(HEX64);
    expect(newToken).not.toBe(token);
    const refused = await ugs(['rotate', '--current-token-stdin', '--yes'], 1, {
      ...options,
      stdin: token,
    });
    expect(refused.stderr).not.toContain(token);
    expect(await fieldToken(id, options)).toBe(newToken);

    const history = await ugs(['history', '--id', id], 0, options);
    const events = history.stdout.trim().split('\n');
    const kinds = events.map((line) => line.split('\t')[4]);
    // Newest first: the first event is the creation, and the rotation is there.
    expect(kinds.at(-1)).toBe('created');
    expect(kinds).toContain('rotated');
    expect(history.stdout).not.toContain(token);

    const whois = await ugs(['whois', '-'], 0, { ...options, stdin: token });
    expect(whois.stdout).toContain(`belonged to user group "${id}"`);
    expect(whois.stdout).toMatch(/\brotated\b/);

    const doctor = await ugs(['doctor', '--probe'], 0, options);
    expect(doctor.stdout).toMatch(/config file\s+C:\\users\\/);
    expect(doctor.stdout).toMatch(/TCP connect\s+127\.0\.0\.1:/);
    expect(doctor.stdout + doctor.stderr).not.toContain(apiToken);

    await ugs(['logout'], 0, options);
    expect(readFileSync(configPath, 'utf8')).not.toContain(apiToken);
    const none = await ugs(['get', '--id', id, '--name', 'Acme'], 3, options);
    expect(none.stderr).toMatch(/^hint: .*ugs login/m);
  });

  it('rotate exits 5 when the answer is lost after the commit; get --field token recovers the new token', async () => {
    const sandbox = makeSandbox();
    const dataFile = join(sandbox.root, 'state.json');
    const id = uniqueId('lost');
    const apiToken = `win-${randomUUID()}`;
    const serve = (extra: string[] = []) =>
      serveUgs(['--data', dataFile, '--api-token', `${apiToken}:Customer`, ...extra]);
    const env = (server: ServeProcess) => ({ UGS_BASE_URL: server.url, UGS_API_TOKEN: apiToken });

    const first = await serve();
    const token = await fieldToken(id, { sandbox, env: env(first) }).finally(() => first.stop());

    // The rotation is saved, then the connection is reset: ugs cannot know, and says so.
    const faulty = await serve(['--fault', 'commit-reset:1']);
    let lost: RunResult;
    try {
      lost = await ugs(['rotate', '--current-token-stdin', '--yes', '--timeout', '10'], 5, {
        sandbox,
        env: env(faulty),
        stdin: token,
      });
    } finally {
      await faulty.stop();
    }
    expect(lost.stderr).toMatch(/^error: .*may or may not/m);
    expect(lost.stderr).toMatch(/^hint: .*--field token/m);
    expect(lost.stdout + lost.stderr).not.toContain(token);

    // The recovery the hint gives: read the group's token; it is the rotated one, and works.
    const again = await serve();
    try {
      const current = await fieldToken(id, { sandbox, env: env(again) });
      expect(current).not.toBe(token);
      await ugs(['rotate', '--current-token-stdin', '--yes'], 0, {
        sandbox,
        env: env(again),
        stdin: current,
      });
    } finally {
      await again.stop();
    }
  });

  it('profiles: --profile, -p, UGS_PROFILE and profile use pick the saved profile', async () => {
    const sandbox = makeSandbox();
    const customer = emulator.tokenFor('Customer');
    const testing = emulator.tokenFor('Testing');
    await ugs(['login', '--base-url', emulator.url, '--with-token'], 0, {
      sandbox,
      stdin: customer,
    });
    await ugs(['login', '--profile', 'testing', '--base-url', emulator.url, '--with-token'], 0, {
      sandbox,
      stdin: testing,
    });
    const id = uniqueId('prof');
    const [asCustomer, asTesting, byEnv] = await Promise.all([
      fieldToken(id, { sandbox }),
      fieldToken(id, { sandbox, env: { UGS_PROFILE: 'testing' } }),
      ugs(['status', '--json', '-p', 'testing'], 0, { sandbox }),
    ]);
    expect(asTesting).not.toBe(asCustomer);
    expect(JSON.parse(byEnv.stdout)).toMatchObject({ profile: 'testing' });

    await ugs(['profile', 'use', 'testing'], 0, { sandbox });
    expect(await fieldToken(id, { sandbox })).toBe(asTesting);
    const list = await ugs(['profile', 'list'], 0, { sandbox });
    expect(list.stdout).toMatch(/^\*\s+testing\s/m);
    expect(list.stdout).not.toContain(testing);
  });

  it('bulk: get --from a CRLF CSV and rotate --from with --output, by Windows paths', async () => {
    const sandbox = makeSandbox();
    const env = serviceEnv(emulator);
    const prefix = uniqueId('bulk');
    const groups = join(sandbox.root, 'groups.csv');
    writeFileSync(
      groups,
      `user_group_id,name\r\n${[1, 2, 3].map((i) => `${prefix}-${i},Group ${i}`).join('\r\n')}\r\n`,
    );
    const created = join(sandbox.root, 'created.ndjson');
    const get = await ugs(
      ['get', '--from', windowsPath(groups), '--output', windowsPath(created)],
      0,
      {
        sandbox,
        env,
      },
    );
    // Z:\ is outside the user's profile: the results take that folder's ACL, which ugs says.
    expect(get.stderr).toMatch(/^warning: --output .* is outside your user profile/m);
    const records = lastByRow(readRecords<Rec>(created));
    expect([...records.values()].map((rec) => rec.status)).toEqual([
      'created',
      'created',
      'created',
    ]);

    const rotateInput = join(sandbox.root, 'rotate.ndjson');
    writeFileSync(
      rotateInput,
      [...records.values()]
        .map(
          (rec) =>
            `${JSON.stringify({ current_token: rec.token, user_group_id: rec.user_group_id, name: rec.name })}\n`,
        )
        .join(''),
    );
    const rotatedCsv = join(sandbox.root, 'rotated.csv');
    const rotate = await ugs(
      ['rotate', '--from', windowsPath(rotateInput), '--output', windowsPath(rotatedCsv), '--yes'],
      0,
      { sandbox, env },
    );
    for (const rec of records.values())
      expect(rotate.stdout + rotate.stderr).not.toContain(rec.token);
    const csv = readFileSync(rotatedCsv, 'utf8');
    const [header, ...rows] = csv.trim().split(/\r?\n/);
    expect(header).toContain('status');
    const rotatedRows = rows.filter((row) => row.includes(',rotated,'));
    expect(rotatedRows, csv).toHaveLength(3);
    for (const rec of records.values()) {
      const current = await fieldToken(rec.user_group_id ?? '', { sandbox, env });
      expect(current).not.toBe(rec.token);
      expect(csv).toContain(current);
    }
  });

  it('kill mid bulk rotate, then --resume: every row rotated exactly once', async () => {
    const sandbox = makeSandbox();
    const dataFile = join(sandbox.root, 'state.json');
    const apiToken = `win-${randomUUID()}`;
    const serve = (extra: string[] = []) =>
      serveUgs(['--data', dataFile, '--api-token', `${apiToken}:Customer`, ...extra]);
    const env = (server: ServeProcess) => ({ UGS_BASE_URL: server.url, UGS_API_TOKEN: apiToken });
    const count = 6;
    const prefix = uniqueId('kill');
    const groups = join(sandbox.root, 'groups.ndjson');
    writeFileSync(
      groups,
      Array.from(
        { length: count },
        (_, i) => `${JSON.stringify({ user_group_id: `${prefix}-${i}`, name: `G${i}` })}\n`,
      ).join(''),
    );
    const created = join(sandbox.root, 'created.ndjson');
    const quick = await serve();
    await ugs(['get', '--from', windowsPath(groups), '--output', windowsPath(created)], 0, {
      sandbox,
      env: env(quick),
    }).finally(() => quick.stop());
    const before = new Map(
      [...lastByRow(readRecords<Rec>(created)).values()].map((rec) => [
        rec.user_group_id,
        rec.token,
      ]),
    );
    const input = join(sandbox.root, 'rotate.ndjson');
    writeFileSync(
      input,
      [...before]
        .map(
          ([id, token]) =>
            `${JSON.stringify({ current_token: token, user_group_id: id, name: `G${id?.split('-').at(-1)}` })}\n`,
        )
        .join(''),
    );

    // Every answer delayed 2 s: the kill lands while three rotations are on their way.
    const slow = await serve(['--debug', '--fault', 'slow:1']);
    const out = join(sandbox.root, 'rotated.ndjson');
    const args = [
      'rotate',
      '--from',
      windowsPath(input),
      '--output',
      windowsPath(out),
      '--yes',
      '--concurrency',
      '3',
    ];
    try {
      const { child, result } = startWindows(args, { sandbox, env: env(slow) });
      for (let i = 0; i < 3000; i++) {
        if (existsSync(out) && readFileSync(out, 'utf8').split('"sending"').length > 3) break;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      // As TerminateProcess would: no exit handler, no flush.
      child.kill('SIGKILL');
      const killed = await result;
      expect(killed.signal, describeRun(killed)).toBe('SIGKILL');
      // --timeout 5: the read-backs are delayed 2 s too; --resume first waits that long after the
      // killed run's last `sending` record.
      await ugs([...args, '--resume', '--timeout', '5'], 0, { sandbox, env: env(slow) });
    } finally {
      await slow.stop();
    }
    const rotations = rotationsIn(slow.stderr());
    const last = lastByRow(readRecords<Rec>(out));
    expect(last.size).toBe(count);
    for (const rec of last.values()) {
      expect(rec.status, `row ${rec.row}: ${rec.error}`).toBe('rotated');
      expect(rotations.get(rec.user_group_id ?? ''), `row ${rec.row}`).toBe(1);
      expect(rec.token).not.toBe(before.get(rec.user_group_id));
    }
  });

  it('completion powershell prints a script that registers the completer', async () => {
    const result = await ugs(['completion', 'powershell'], 0);
    expect(result.stdout).toContain('Register-ArgumentCompleter -Native -CommandName ugs');
  });
});

describe('the single executable dist/bin/ugs-win-x64.exe under Wine', () => {
  const exe: Pick<WineRunOptions, 'via'> = { via: 'exe' };

  it('carries no Authenticode signature (node.exe had one), and the credential store module is beside it', () => {
    expect(securityDirectory(readFileSync(wine.nodeExe)).size).toBeGreaterThan(0);
    expect(securityDirectory(readFileSync(wine.binary))).toEqual({ offset: 0, size: 0 });
    const modules = join(dirname(wine.binary), 'node_modules', '@napi-rs');
    expect(existsSync(join(modules, 'keyring', 'index.js'))).toBe(true);
    expect(existsSync(join(modules, 'keyring-win32-x64-msvc', 'keyring.win32-x64-msvc.node'))).toBe(
      true,
    );
  });

  it('--version, login (verified) and get', async () => {
    const sandbox: Sandbox = makeSandbox();
    const version = await ugs(['--version'], 0, { ...exe, sandbox });
    expect(version.stdout).toBe(`${PACKAGE_VERSION}\n`);
    const apiToken = emulator.tokenFor('Customer');
    const login = await ugs(['login', '--base-url', emulator.url, '--with-token'], 0, {
      ...exe,
      sandbox,
      stdin: apiToken,
    });
    expect(login.stderr).toContain('the service accepted the token');
    const id = uniqueId('exe');
    const token = await fieldToken(id, { ...exe, sandbox });
    // The same group as node.exe's ugs sees.
    expect(await fieldToken(id, { sandbox })).toBe(token);
  });

  it('login --secure-storage loads the Windows credential store module from beside it', async () => {
    const sandbox = makeSandbox();
    const result = await runWindows(
      [
        '--debug',
        'login',
        '--no-verify',
        '--secure-storage',
        '--base-url',
        emulator.url,
        '--with-token',
      ],
      { ...exe, sandbox, stdin: emulator.tokenFor('Testing') },
    );
    if (result.code === 0) {
      expect(result.stderr).toContain('Windows Credential Manager');
      return;
    }
    // Wine 8 has no bcryptprimitives.dll, which the binding (Rust's standard library) imports:
    // Windows' loader error names the binding found beside the executable.
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toMatch(
      /Module not found\.\s+\S*\\dist\\bin\\node_modules\\@napi-rs\\keyring-win32-x64-msvc\\keyring\.win32-x64-msvc\.node/,
    );
    expect(result.stdout + result.stderr).not.toContain(emulator.tokenFor('Testing'));
  });
});

/**
 * The certificate table entry of a PE file's optional header (data directory 4): its file
 * offset and size, both 0 when the file carries no Authenticode signature.
 */
function securityDirectory(pe: Buffer): { offset: number; size: number } {
  const header = pe.readUInt32LE(0x3c);
  expect(pe.toString('latin1', header, header + 4)).toBe('PE\0\0');
  const optional = header + 24;
  const magic = pe.readUInt16LE(optional);
  // PE32+ (64-bit) keeps its data directories 112 bytes in, PE32 96.
  const directories = optional + (magic === 0x20b ? 112 : 96);
  const entry = directories + 4 * 8;
  return { offset: pe.readUInt32LE(entry), size: pe.readUInt32LE(entry + 4) };
}
