/**
 * Colour, as src/platform/io.ts colorEnabled documents it: NO_COLOR (non-empty), FORCE_COLOR=0 and
 * --no-color turn it off everywhere; any other FORCE_COLOR turns it on even into a pipe; otherwise
 * only a terminal gets colour (and a pipe is never one here).
 */
import { describe, expect, it } from 'vitest';
import {
  ANSI,
  CSI,
  closedPort,
  describeRun,
  makeSandbox,
  type RunResult,
  runMain,
  type Sandbox,
  type Service,
  serviceWithProfile,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-color-test-7890uvwx';

function setup(): Promise<{ sb: Sandbox; service: Service }> {
  return serviceWithProfile(API_TOKEN);
}

function expectPlain(result: RunResult, label: string): void {
  expect(result.stdout, `${label}: stdout\n${describeRun(result)}`).not.toMatch(ANSI);
  expect(result.stderr, `${label}: stderr\n${describeRun(result)}`).not.toMatch(ANSI);
}

describe('colour (main in-process)', () => {
  it('a pipe gets no colour by default, and NO_COLOR / FORCE_COLOR=0 / --no-color keep it off', async () => {
    const { sb } = await setup();
    const get = ['get', '--id', 'acme', '--name', 'Acme'];
    const cases: [string, string[], Record<string, string>][] = [
      ['default', get, {}],
      ['NO_COLOR=1', get, { NO_COLOR: '1' }],
      ['NO_COLOR=1 FORCE_COLOR=1', get, { NO_COLOR: '1', FORCE_COLOR: '1' }],
      ['FORCE_COLOR=0', get, { FORCE_COLOR: '0' }],
      ['--no-color FORCE_COLOR=1', ['--no-color', ...get], { FORCE_COLOR: '1' }],
      ['FORCE_COLOR=1 get ... --no-color', [...get, '--no-color'], { FORCE_COLOR: '1' }],
      ['status FORCE_COLOR=1 NO_COLOR=1', ['status'], { FORCE_COLOR: '1', NO_COLOR: '1' }],
      ['status --no-color FORCE_COLOR=1', ['status', '--no-color'], { FORCE_COLOR: '1' }],
    ];
    const results = await Promise.all(
      cases.map(([, args, env]) => runMain(args, { sandbox: sb, env })),
    );
    results.forEach((result, i) => {
      const label = cases[i]?.[0] ?? '';
      expect(result.code, `${label}\n${describeRun(result)}`).toBe(0);
      expectPlain(result, label);
    });
    // The output is there (key<TAB>value lines into a pipe), just not coloured.
    expect(results[0]?.stdout).toMatch(/^provided_id\tacme$/m);
  });

  it('FORCE_COLOR=1 without NO_COLOR colours the table output and the headline', async () => {
    const { sb, service } = await setup();
    const [forced, emptyNoColor] = await Promise.all([
      runMain(['get', '--id', 'acme', '--name', 'Acme'], {
        sandbox: sb,
        env: { FORCE_COLOR: '1' },
      }),
      // An empty NO_COLOR is not set (no-color.org).
      runMain(['status'], { sandbox: sb, env: { FORCE_COLOR: '1', NO_COLOR: '' } }),
    ]);
    expect(forced.code, describeRun(forced)).toBe(0);
    expect(forced.stdout).toMatch(CSI);
    // Into a pipe the headline is a message on stderr, coloured all the same.
    expect(forced.stderr).toContain('\u001b[32mCreated user group acme\u001b[39m');
    // Colour decorates but does not change the values.
    expect(forced.stdout).toContain((await service.group('acme')).token);
    expect(emptyNoColor.code, describeRun(emptyNoColor)).toBe(0);
    expect(emptyNoColor.stdout).toMatch(CSI);
  });

  it('FORCE_COLOR=1 never colours machine output (--json, --field)', async () => {
    const { sb, service } = await setup();
    const env = { FORCE_COLOR: '1' };
    const [json, field, statusJson] = await Promise.all([
      runMain(['get', '--id', 'acme', '--name', 'Acme', '--json'], { sandbox: sb, env }),
      runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], { sandbox: sb, env }),
      runMain(['status', '--json'], { sandbox: sb, env }),
    ]);
    for (const result of [json, field, statusJson]) {
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout).not.toMatch(ANSI);
    }
    expect(JSON.parse(json.stdout).user_group.token).toBe((await service.group('acme')).token);
    expect(field.stdout).toBe(`${(await service.group('acme')).token}\n`);
  });

  it('error messages: coloured with FORCE_COLOR=1, plain with NO_COLOR or --no-color', async () => {
    const sb = makeSandbox();
    const port = await closedPort();
    writeConfig(sb, {
      profiles: { default: { baseUrl: `http://127.0.0.1:${port}`, apiToken: API_TOKEN } },
    });
    const get = ['get', '--id', 'a', '--name', 'A'];
    const [forced, noColor, flag] = await Promise.all([
      runMain(get, { sandbox: sb, env: { FORCE_COLOR: '1' } }),
      runMain(get, { sandbox: sb, env: { FORCE_COLOR: '1', NO_COLOR: '1' } }),
      runMain([...get, '--no-color'], { sandbox: sb, env: { FORCE_COLOR: '1' } }),
    ]);
    expect(forced.code, describeRun(forced)).toBe(4);
    expect(forced.stderr).toMatch(CSI);
    expect(noColor.code, describeRun(noColor)).toBe(4);
    expectPlain(noColor, 'NO_COLOR=1');
    expect(noColor.stderr).toMatch(/^error: /m);
    expect(flag.code, describeRun(flag)).toBe(4);
    expectPlain(flag, '--no-color');
    expect(flag.stderr).toMatch(/^error: /m);
  });
});
