/** A corrupt config file is reported with its path (exit 2) and never rewritten. */
import { mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  errorLines,
  makeSandbox,
  runMain,
  type Sandbox,
  STACK_LINE,
  serviceForTest,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-config-test-2468abcd';

function writeRaw(sb: Sandbox, text: string): Buffer {
  mkdirSync(sb.configDir, { recursive: true, mode: 0o700 });
  writeFileSync(sb.configPath, text, { mode: 0o600 });
  return readFileSync(sb.configPath);
}

const CORRUPT: [string, string][] = [
  ['truncated JSON', '{"profiles": {"default": {"baseUrl": "https://x'],
  ['not an object', '[1, 2, 3]'],
  ['profiles not an object', '{"profiles": "default"}'],
  ['profile not an object', '{"profiles": {"default": 42}}'],
  ['token not a string', '{"profiles": {"default": {"apiToken": 1234}}}'],
  ['empty file', ''],
];

describe('corrupt config file (main in-process)', () => {
  it.each(CORRUPT)(
    '%s: every command exits 2, names the path, leaves the file byte-identical',
    async (_label, text) => {
      const service = await serviceForTest([API_TOKEN]);
      const sb = makeSandbox();
      const before = writeRaw(sb, text);
      const mtime = statSync(sb.configPath).mtimeMs;

      const commands: [string[], string | undefined][] = [
        [['get', '--id', 'acme', '--name', 'Acme', '--base-url', service.url], undefined],
        [['login', '--base-url', service.url, '--with-token'], API_TOKEN],
        [['status'], undefined],
        [['logout'], undefined],
        [
          ['rotate', '--current-token', 'ugt_12345678', '--yes', '--base-url', service.url],
          undefined,
        ],
      ];
      // Sequential on purpose: each one must leave the file as it found it.
      for (const [args, stdin] of commands) {
        const result = await runMain(args, {
          sandbox: sb,
          ...(stdin === undefined ? {} : { stdin }),
        });
        const label = `ugs ${args.join(' ')}\n${describeRun(result)}`;
        expect(result.code, label).toBe(2);
        expect(errorLines(result.stderr), label).toHaveLength(1);
        expect(errorLines(result.stderr)[0], label).toContain(sb.configPath);
        expect(result.stderr, label).not.toMatch(STACK_LINE);
        expect(result.stderr, label).not.toContain(API_TOKEN);
        expect(readFileSync(sb.configPath).equals(before), `file changed by ${label}`).toBe(true);
      }
      expect(statSync(sb.configPath).mtimeMs).toBe(mtime);
      expect(service.requests).toHaveLength(0);
    },
  );

  it('UGS_API_TOKEN does not bypass a corrupt file silently', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    const before = writeRaw(sb, '{oops');
    const result = await runMain(['get', '--id', 'a', '--name', 'A', '--base-url', service.url], {
      sandbox: sb,
      env: { UGS_API_TOKEN: API_TOKEN },
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain(sb.configPath);
    expect(readFileSync(sb.configPath).equals(before)).toBe(true);
  });

  it('unknown top-level keys survive a login', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const sb = makeSandbox();
    writeRaw(sb, '{"telemetry": false, "profiles": {"old": {"baseUrl": "https://old.example"}}}');
    const result = await runMain(['login', '--base-url', service.url, '--with-token'], {
      sandbox: sb,
      stdin: API_TOKEN,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(JSON.parse(readFileSync(sb.configPath, 'utf8'))).toEqual({
      telemetry: false,
      profiles: {
        old: { baseUrl: 'https://old.example' },
        default: { baseUrl: service.url, apiToken: API_TOKEN },
      },
    });
  });
});
