/**
 * V8's `--liftoff-only` (baseline WebAssembly code only) suits the commands that send one request
 * and not the emulator: bin/ugs.js sets it at process start for `get` and `rotate`, before undici
 * compiles its WebAssembly HTTP parser, and loading undici changes no process-wide setting.
 *
 * The built binary runs with a `--require` probe that logs every `v8.setFlagsFromString` call
 * (with the file that made it) and every WebAssembly compilation, in order.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import {
  BIN,
  call,
  describeRun,
  makeSandbox,
  runUgs,
  type Sandbox,
  serveUgs,
  serviceForTest,
  writeConfig,
} from '../kit/index.js';

// loadUndici() runs in this process: a call to setFlagsFromString from it is recorded here.
const setFlagsFromString = vi.hoisted(() => vi.fn());
vi.mock('node:v8', async (original) => ({
  ...(await original<typeof import('node:v8')>()),
  setFlagsFromString,
}));

const API_TOKEN = 'apitoken-liftoff-test-3141abcd';

const PROBE = `'use strict';
const v8 = require('node:v8');
const { appendFileSync } = require('node:fs');
const log = (line) => appendFileSync(process.env.UGS_TEST_PROBE_LOG, line + '\\n');
const setFlags = v8.setFlagsFromString;
v8.setFlagsFromString = (flags) => {
  const caller = (new Error().stack.split('\\n')[2] || '').match(/\\(?([^():]+\\.[cm]?js):/);
  log('flags ' + flags + ' from ' + (caller ? caller[1] : '?'));
  setFlags(flags);
};
const wasm = (name) => (original) => new Proxy(original, {
  construct: (target, args, newTarget) => (log('wasm ' + name), Reflect.construct(target, args, newTarget)),
  apply: (target, self, args) => (log('wasm ' + name), Reflect.apply(target, self, args)),
});
for (const name of ['Module', 'compile', 'instantiate', 'compileStreaming', 'instantiateStreaming']) {
  if (WebAssembly[name]) WebAssembly[name] = wasm(name)(WebAssembly[name]);
}
`;

interface Probe {
  env: Record<string, string>;
  /** The probe's log lines so far. */
  lines(): string[];
}

function probe(sandbox: Sandbox): Probe {
  const script = join(sandbox.root, 'probe.cjs');
  const log = join(sandbox.root, 'probe.log');
  writeFileSync(script, PROBE);
  writeFileSync(log, '');
  return {
    env: { NODE_OPTIONS: `--require ${script}`, UGS_TEST_PROBE_LOG: log },
    lines: () => readFileSync(log, 'utf8').split('\n').filter(Boolean),
  };
}

/** Asserts the one flag line came from bin/ugs.js and preceded every WebAssembly compilation. */
function expectLiftoffFromBinFirst(lines: string[]): void {
  const flags = lines.filter((line) => line.startsWith('flags '));
  expect(flags).toEqual([`flags --liftoff-only from ${BIN}`]);
  expect(lines[0], lines.join('\n')).toBe(flags[0]);
  // The run compiled undici's parser, so the order above means something.
  expect(lines.some((line) => line.startsWith('wasm '))).toBe(true);
}

describe('--liftoff-only', () => {
  it.each([
    ['get', ['get', '--id', 'acme', '--name', 'Acme Corp']],
    ['-p work get', ['-p', 'work', 'get', '--id', 'acme', '--name', 'Acme Corp']],
    ['--timeout 9 get', ['--timeout', '9', 'get', '--id', 'acme', '--name', 'Acme Corp']],
    [
      '--api-path /api/user get',
      ['--api-path', '/api/user', 'get', '--id', 'acme', '--name', 'Acme Corp'],
    ],
  ])('is set by bin/ugs.js before undici compiles anything: %s', async (_label, args) => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    const profile = { baseUrl: service.url, apiToken: API_TOKEN };
    writeConfig(sb, { profiles: { default: profile, work: profile } });
    const p = probe(sb);
    const result = await runUgs(args, { sandbox: sb, env: p.env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests).toHaveLength(1);
    expectLiftoffFromBinFirst(p.lines());
  });

  it('is set by bin/ugs.js before undici compiles anything: rotate', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const oldToken = (await service.seed('acme', 'Acme Corp')).token;
    const p = probe(sb);
    const result = await runUgs(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      env: p.env,
      stdin: `${oldToken}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests).toHaveLength(1);
    expectLiftoffFromBinFirst(p.lines());
  });

  it('is set by bin/ugs.js before undici compiles anything: get --from (a bulk run)', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
    const rows = join(sb.root, 'rows.ndjson');
    writeFileSync(rows, '{"user_group_id":"acme","name":"Acme Corp"}\n');
    const p = probe(sb);
    const result = await runUgs(['get', '--from', rows], { sandbox: sb, env: p.env });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests).toHaveLength(1);
    expectLiftoffFromBinFirst(p.lines());
  });

  it('is not set for serve, which answers many requests', async () => {
    const sb = makeSandbox();
    const p = probe(sb);
    const serve = await serveUgs([], { sandbox: sb, env: p.env });
    expect((await call(serve.url)).status).toBe(401);
    await serve.stop();
    expect(p.lines().filter((line) => line.startsWith('flags '))).toEqual([]);
  });

  it('is not set as a side effect of loading undici', async () => {
    const { loadUndici } = await import('../../src/transport/undici.js');
    await loadUndici();
    expect(setFlagsFromString).not.toHaveBeenCalled();
  });
});
