/**
 * The commander wiring, in-process: argv -> the options each command's `run` receives, for every
 * command, with flag spellings, repeatable flags and the program's global options inherited by
 * every command (before or after its name). Nothing is spawned or sent.
 */
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { type ArgvRow, parseArgv } from '../kit/wiring.js';

/** The globals every command sees when none is given. */
const DEFAULT_GLOBALS = { timeout: '30', input: true, color: true, history: true };

const table = { kind: 'table' } as const;

describe('argv -> the options run receives', () => {
  it.each([
    [['get', '--id', 'a', '--name', 'A'], 'get', { id: 'a', name: 'A', format: table }],
    [['get', '--id=a', '--name=A'], 'get', { id: 'a', name: 'A', format: table }],
    [
      ['get', '--id', 'a', '--name', 'A', '--mapping', 's=d', '--mapping', 't=e'],
      'get',
      { id: 'a', name: 'A', mapping: { s: 'd', t: 'e' }, format: table },
    ],
    [
      ['get', '--id', 'a', '--name', 'A', '--property', 'k=v', '--property', 'n=1', '--json'],
      'get',
      { id: 'a', name: 'A', properties: { k: 'v', n: '1' }, format: { kind: 'json' } },
    ],
    [
      ['get', '--id', 'a', '--name', 'A', '--mapping-json', '{"s":"d"}', '--properties', '{"n":1}'],
      'get',
      { id: 'a', name: 'A', mapping: { s: 'd' }, properties: { n: 1 }, format: table },
    ],
    [
      ['get', '--id', 'a', '--name', 'A', '--field', 'token'],
      'get',
      { id: 'a', name: 'A', format: { kind: 'field', name: 'token' } },
    ],
    [
      ['rotate'],
      'rotate',
      { currentToken: undefined, currentTokenFromStdin: false, yes: false, format: table },
    ],
    [
      ['rotate', '--current-token', ' t0k ', '-y', '--field', 'token'],
      'rotate',
      {
        currentToken: 't0k',
        currentTokenFromStdin: false,
        yes: true,
        format: { kind: 'field', name: 'token' },
      },
    ],
    [
      ['rotate', '--current-token-stdin', '--yes', '--json'],
      'rotate',
      { currentToken: undefined, currentTokenFromStdin: true, yes: true, format: { kind: 'json' } },
    ],
    [['login'], 'login', { withToken: false, secureStorage: false, verify: true }],
    [['login', '--with-token'], 'login', { withToken: true, secureStorage: false, verify: true }],
    [['login', '--no-verify'], 'login', { withToken: false, secureStorage: false, verify: false }],
    [
      ['login', '--secure-storage'],
      'login',
      { withToken: false, secureStorage: true, verify: true },
    ],
    [['logout'], 'logout', {}],
    [['status'], 'status', { json: false }],
    [['status', '--json'], 'status', { json: true }],
    [
      ['serve'],
      'serve',
      {
        host: '127.0.0.1',
        port: 4010,
        dataFile: undefined,
        apiTokens: [],
        faults: [],
        seed: undefined,
        json: false,
        log: false,
        trailingSlash: false,
        dialect: 'interface',
        rateLimit: undefined,
      },
    ],
    [
      // biome-ignore format: one flag and its value per pair reads best here
      ['serve', '--port', '0', '--host', '::1', '--data', 'state.json', '--api-token', 'a:Customer',
        '--api-token', 'b:Testing', '--fault', '500:0.1', '--fault', 'reset:0.2', '--seed', '42',
        '--json', '--trailing-slash'],
      'serve',
      {
        host: '::1',
        port: 0,
        dataFile: 'state.json',
        apiTokens: ['a:Customer', 'b:Testing'],
        faults: ['500:0.1', 'reset:0.2'],
        seed: 42,
        json: true,
        log: false,
        trailingSlash: true,
        dialect: 'interface',
        rateLimit: undefined,
      },
    ],
    [
      ['--debug', 'serve', '--port', '0'],
      'serve',
      {
        host: '127.0.0.1',
        port: 0,
        dataFile: undefined,
        apiTokens: [],
        faults: [],
        seed: undefined,
        json: false,
        log: true,
        trailingSlash: false,
        dialect: 'interface',
        rateLimit: undefined,
      },
    ],
    [['doctor'], 'doctor', { probe: false, json: false, profileSource: 'default' }],
    [
      ['doctor', '--probe', '--json', '-p', 'work'],
      'doctor',
      { probe: true, json: true, profileSource: 'flag' },
    ],
    [['completion', 'zsh'], 'completion', { kind: 'script', shell: 'zsh' }],
    [
      ['completion', '__complete', '--', 'get', '--profile', 'x', '--fo'],
      'completion',
      { kind: 'complete', words: ['get', '--profile', 'x', '--fo'] },
    ],
    [
      ['completion', '__complete', '--new-word', '--', 'get'],
      'completion',
      { kind: 'complete', words: ['get', ''] },
    ],
  ] satisfies readonly ArgvRow[])('%j', async (argv, command, options) => {
    const parsed = await parseArgv(argv);
    expect(parsed.command).toBe(command);
    expect(parsed.options).toEqual(options);
  });

  it('get --properties - reads the object from stdin', async () => {
    const parsed = await parseArgv(
      ['get', '--id', 'a', '--name', 'A', '--properties', '-'],
      '{"x":[1]}',
    );
    expect(parsed.options).toMatchObject({ properties: { x: [1] } });
  });

  it('a flag combination that makes no sense is refused before run', async () => {
    await expect(
      parseArgv(['rotate', '--current-token', 't', '--current-token-stdin']),
    ).rejects.toBeInstanceOf(UsageError);
  });
});

describe('global options reach every command, before or after its name', () => {
  const globals: [readonly string[], Record<string, unknown>][] = [
    [['--profile', 'work'], { profile: 'work' }],
    [['-p', 'work'], { profile: 'work' }],
    [['--base-url', 'https://ugs.example.com'], { baseUrl: 'https://ugs.example.com' }],
    [['--api-path', '/api/user/'], { apiPath: '/api/user/' }],
    [['--timeout', '5'], { timeout: '5' }],
    [['--no-input'], { input: false }],
    [['--debug'], { debug: true }],
    [['--no-color'], { color: false }],
    [['--insecure-http'], { insecureHttp: true }],
    [['--ca-file', 'ca.pem'], { caFile: 'ca.pem' }],
    [['--no-history'], { history: false }],
    [['--history-file', 'team.ndjson'], { historyFile: 'team.ndjson' }],
  ];
  const commands: readonly (readonly string[])[] = [
    ['get', '--id', 'a', '--name', 'A'],
    ['rotate', '--current-token', 't'],
    ['login'],
    ['logout'],
    ['status'],
    ['serve'],
    ['doctor'],
  ];
  const cases = globals.flatMap(([flag, expected]) =>
    commands.flatMap((command) => [
      { argv: [...flag, ...command], expected },
      { argv: [...command, ...flag], expected },
    ]),
  );

  it.each(cases)('$argv', async ({ argv, expected }) => {
    const parsed = await parseArgv(argv);
    expect(parsed.flags).toMatchObject({ ...DEFAULT_GLOBALS, ...expected });
  });

  it('defaults when none is given', async () => {
    const parsed = await parseArgv(['status']);
    expect(parsed.flags).toEqual({ ...DEFAULT_GLOBALS });
  });
});
