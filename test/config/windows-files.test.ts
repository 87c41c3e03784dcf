/**
 * Files that hold secrets on Windows, where modes mean nothing: main is told it runs on `win32`
 * (the sandbox's home stands for the user's profile). No mode warning; a file made outside the
 * profile (UGS_CONFIG_DIR, --output, --history-file) takes its folder's ACL, which ugs says once.
 */
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  customerEnv,
  describeRun,
  makeSandbox,
  runMain,
  type Sandbox,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();
const OUTSIDE = /outside your user profile/;

async function login(sandbox: Sandbox, env: Record<string, string> = {}) {
  return runMain(['login', '--no-verify', '--base-url', emulator.url, '--with-token'], {
    sandbox,
    env,
    stdin: `${emulator.tokenFor('Customer')}\n`,
    platform: 'win32',
  });
}

describe('the config directory on Windows', () => {
  it('in the profile: no warning that others can write there, whatever mode Node reports', async () => {
    const sandbox = makeSandbox();
    const dir = join(sandbox.home, 'AppData', 'Roaming', 'ugs', 'Config');
    mkdirSync(dir, { recursive: true });
    // What Node reports for every folder under Wine and on Windows: all bits set.
    chmodSync(dir, 0o777);
    const run = await login(sandbox, { UGS_CONFIG_DIR: dir });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr).not.toMatch(/writable by|chmod/);
    expect(run.stderr).not.toMatch(OUTSIDE);
  });

  it('outside the profile (UGS_CONFIG_DIR): one warning that it takes the folder ACL, with icacls', async () => {
    const sandbox = makeSandbox();
    const run = await login(sandbox);
    expect(run.code, describeRun(run)).toBe(0);
    const warnings = run.stderr.split('\n').filter((line) => OUTSIDE.test(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: config directory .* take that folder's permissions/);
    expect(warnings[0]).toContain('icacls');
    expect(run.stderr).not.toMatch(/0600|chmod/);
  });

  it('doctor warns, rather than passes, a config outside the profile', async () => {
    const sandbox = makeSandbox();
    expect((await login(sandbox)).code).toBe(0);
    const run = await runMain(['doctor', '--json'], { sandbox, platform: 'win32' });
    const checks = JSON.parse(run.stdout).checks as { id: string; status: string; fix?: string }[];
    const config = checks.find((check) => check.id === 'config');
    expect(config?.status, run.stdout).toBe('warn');
    expect(config?.fix).toMatch(/icacls/);
  });

  it('doctor passes a config in the profile, and says nothing of modes', async () => {
    const sandbox = makeSandbox();
    const dir = join(sandbox.home, 'AppData', 'Roaming', 'ugs', 'Config');
    expect((await login(sandbox, { UGS_CONFIG_DIR: dir })).code).toBe(0);
    const run = await runMain(['doctor', '--json'], {
      sandbox,
      env: { UGS_CONFIG_DIR: dir },
      platform: 'win32',
    });
    const checks = JSON.parse(run.stdout).checks as { id: string; status: string }[];
    expect(checks.find((check) => check.id === 'config')?.status, run.stdout).toBe('pass');
  });
});

describe('results and history files on Windows', () => {
  function rows(sandbox: Sandbox): string {
    const from = join(sandbox.root, 'groups.csv');
    writeFileSync(from, 'user_group_id,name\nwin-a,A\nwin-b,B\n');
    return from;
  }

  it('--output outside the profile: one warning before the run, and the run goes on', async () => {
    const sandbox = makeSandbox();
    const output = join(sandbox.root, 'results.csv');
    const run = await runMain(
      ['get', '--from', rows(sandbox), '--output', output, '--no-history'],
      {
        sandbox,
        env: customerEnv(emulator),
        platform: 'win32',
      },
    );
    expect(run.code, describeRun(run)).toBe(0);
    const warnings = run.stderr.split('\n').filter((line) => OUTSIDE.test(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: --output .*results\.csv is outside your user profile/);
  });

  it('--output in the profile: no warning', async () => {
    const sandbox = makeSandbox();
    const output = join(sandbox.home, 'results.csv');
    const run = await runMain(
      ['get', '--from', rows(sandbox), '--output', output, '--no-history'],
      {
        sandbox,
        env: customerEnv(emulator),
        platform: 'win32',
      },
    );
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr).not.toMatch(OUTSIDE);
  });

  it('--history-file outside the profile: one warning, however many events are written', async () => {
    const sandbox = makeSandbox();
    const history = join(sandbox.root, 'shared-history.ndjson');
    const run = await runMain(['get', '--from', rows(sandbox), '--history-file', history], {
      sandbox,
      env: customerEnv(emulator),
      platform: 'win32',
    });
    expect(run.code, describeRun(run)).toBe(0);
    const warnings = run.stderr.split('\n').filter((line) => OUTSIDE.test(line));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/^warning: token history .*shared-history\.ndjson is outside/);
  });

  it('on Linux the same files warn of nothing', async () => {
    const sandbox = makeSandbox();
    const run = await runMain(
      ['get', '--from', rows(sandbox), '--output', join(sandbox.root, 'r.csv')],
      { sandbox, env: customerEnv(emulator), platform: 'linux' },
    );
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr).not.toMatch(OUTSIDE);
  });
});
