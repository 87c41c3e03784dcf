/**
 * The one factory of what commands need (src/context): every member made on first use and then
 * kept, the settings checked when first read, and `doctor`, `completion` and `serve` handed the
 * same factory as every other command.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createDeps } from '../../src/commands/default-factory.js';
import type { SystemInfo } from '../../src/context/factory.js';
import { UsageError } from '../../src/errors.js';
import { buildProgram } from '../../src/main.js';
import type { DoctorNetwork } from '../../src/transport/network.js';
import { tempDir } from '../kit/binary.js';
import { makeDeps, makeIO, rejection, testSystem } from '../kit/fakes.js';

const system: SystemInfo = { ...testSystem, homedir: '/nonexistent-home' };

describe('createDeps', () => {
  it('checks nothing and makes nothing until a member is used, then keeps it', () => {
    const io = makeIO({ env: { UGS_API_PATH: 'no-slash', UGS_CONFIG_DIR: '/nonexistent-ugs' } });
    // An invalid global option does not stop the factory from being made: serve never reads it.
    const deps = createDeps(io, { debug: true, quiet: true }, system, []);
    expect(deps.preferences).toEqual({ debug: true, noColor: false, noInput: false, quiet: true });
    expect(deps.output.quiet).toBe(true);
    expect(() => deps.settings).toThrow(UsageError);
    expect(() => deps.settings).toThrow(/UGS_API_PATH must start with "\/"/);
    expect(deps.config).toBe(deps.config);
    expect(deps.config.path).toBe(join('/nonexistent-ugs', 'config.json'));
    expect(deps.prompter).toBe(deps.prompter);
    expect(deps.credentialStore).toBe(deps.credentialStore);
    expect(deps.progress).toBe(deps.progress);
    expect(deps.tracer).toBe(deps.tracer);
    expect(deps.network).toBe(deps.network);
    expect(deps.now()).toBeInstanceOf(Date);
    expect(io.stdout.text + io.stderr.text).toBe('');
  });

  it('settings read once are the same object for the whole run', () => {
    const deps = createDeps(makeIO(), { timeout: '5', profile: 'work' }, system, []);
    expect(deps.settings).toBe(deps.settings);
    expect(deps.settings).toMatchObject({ profile: 'work', timeoutMs: 5000 });
  });

  it("the emulator's failure to start comes from its own module, loaded by the call", async () => {
    const deps = createDeps(makeIO(), {}, system, []);
    const error = await rejection(
      deps.startEmulator({ host: '127.0.0.1', port: 0, apiTokens: [], faults: [], dataFile: '/' }),
    );
    expect((error as Error).name).toBe('EmulatorStartError');
  });
});

describe('doctor, completion and serve take the one factory', () => {
  /** The program with its real commands and `run`s, every command given `deps`. */
  function program(deps: ReturnType<typeof makeDeps>) {
    return buildProgram(deps.io, () => deps);
  }

  it("doctor uses the factory's network probe and clock", async () => {
    const calls: string[] = [];
    const network: DoctorNetwork = {
      lookup: async (host) => {
        calls.push(`lookup ${host}`);
        return ['192.0.2.1'];
      },
      connect: async (host, port) => {
        calls.push(`connect ${host}:${port}`);
      },
      tls: async () => ({
        protocol: 'TLSv1.3',
        issuer: 'Test CA',
        validTo: new Date('2026-03-02T00:00:00Z'),
        authorized: true,
        authorizationError: undefined,
      }),
      now: () => 0,
    };
    const deps = makeDeps({
      io: makeIO({ env: { LANG: 'C.UTF-8' } }),
      network,
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    await program(deps).parseAsync(['doctor'], { from: 'user' });
    expect(calls).toEqual(['lookup ugs.example.com', 'connect ugs.example.com:443']);
    expect(deps.io.stdout.text).toMatch(/certificate expires in 60 days/);
  });

  it("serve starts the factory's emulator and stops on the factory's shutdown signal", async () => {
    const started: unknown[] = [];
    const deps = makeDeps({
      startEmulator: async (options) => {
        started.push(options.port);
        return { url: 'http://127.0.0.1:4999', apiTokens: [], close: async () => {} };
      },
      system: { waitForShutdown: async () => 'SIGTERM' },
    });
    await program(deps).parseAsync(['serve', '--port', '0'], { from: 'user' });
    expect(started).toEqual([0]);
    expect(deps.io.stdout.text).toMatch(/^ugs emulator listening on http:\/\/127\.0\.0\.1:4999/);
    expect(deps.io.stderr.text).toBe('ugs emulator stopped (SIGTERM)\n');
  });

  it("completion lists the profiles of the config file where the factory's system says", async () => {
    const home = tempDir('factory-home');
    mkdirSync(join(home, '.config', 'ugs'), { recursive: true });
    writeFileSync(
      join(home, '.config', 'ugs', 'config.json'),
      JSON.stringify({ profiles: { staging: {}, work: {} } }),
    );
    const deps = makeDeps({ system: { homedir: home } });
    await program(deps).parseAsync(['completion', '__complete', '--', 'status', '--profile', ''], {
      from: 'user',
    });
    expect(deps.io.stdout.text).toBe('nofiles\nstaging\nwork\n');
  });
});
