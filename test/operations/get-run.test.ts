import { writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, AuthError, CancelledError, NetworkError, UsageError } from '../../src/errors.js';
import { type GetOptions, parseGetFlags, runGet } from '../../src/operations/get-user/command.js';
import { tempDir } from '../kit/binary.js';
import {
  apiErrorWithBody,
  echoService,
  FakePrompter,
  FakeService,
  failingService,
  groupResult,
  makeDeps,
  makeIO,
  rejection,
  type TestIO,
  terminalIO,
  withPrompter,
} from '../kit/fakes.js';

const ESC = '\u001b[';

function opts(overrides: Partial<GetOptions> = {}): GetOptions {
  return {
    id: 'acme',
    name: 'Acme Corp',
    mapping: undefined,
    properties: undefined,
    format: { kind: 'table' },
    ...overrides,
  };
}

type Flags = Parameters<typeof parseGetFlags>[0];
function flags(overrides: Partial<Flags> = {}): Flags {
  return { mapping: [], property: [], ...overrides };
}

const tmp = tempDir('get');

describe('parseGetFlags', () => {
  const deps = () => makeDeps();

  it('leaves mapping and properties out when no flag sets them', async () => {
    const o = await parseGetFlags(flags({ id: 'acme', name: 'Acme' }), deps());
    expect(o).toEqual({
      id: 'acme',
      name: 'Acme',
      mapping: undefined,
      properties: undefined,
      format: { kind: 'table' },
    });
  });

  it('builds mapping and properties from repeated k=v flags, values as strings', async () => {
    const o = await parseGetFlags(
      flags({
        mapping: ['sales=acme_db', 'hr=postgres://u@h/db?x=1'],
        property: ['plan=pro', 'seats=10', 'empty='],
      }),
      deps(),
    );
    expect(o.mapping).toEqual({ sales: 'acme_db', hr: 'postgres://u@h/db?x=1' });
    expect(o.properties).toEqual({ plan: 'pro', seats: '10', empty: '' });
  });

  it('keeps JSON types from --properties and merges --property into it', async () => {
    const o = await parseGetFlags(
      flags({ properties: '{"seats":10,"tags":["a"],"x":null}', property: ['plan=pro'] }),
      deps(),
    );
    expect(o.properties).toEqual({ seats: 10, tags: ['a'], x: null, plan: 'pro' });
  });

  it('merges --mapping-json with --mapping', async () => {
    const o = await parseGetFlags(flags({ mappingJson: '{"a":"x"}', mapping: ['b=y'] }), deps());
    expect(o.mapping).toEqual({ a: 'x', b: 'y' });
  });

  it('reads --properties from a file and --mapping-json from stdin', async () => {
    const file = join(tmp, 'props.json');
    writeFileSync(file, '\ufeff{"plan":"pro","n":1}');
    const io = makeIO({ stdinText: '{"s1":"db1"}' });
    const o = await parseGetFlags(
      flags({ properties: `@${file}`, mappingJson: '-' }),
      makeDeps({ io }),
    );
    expect(o.properties).toEqual({ plan: 'pro', n: 1 });
    expect(o.mapping).toEqual({ s1: 'db1' });
  });

  it.each<[string, Partial<Flags>, RegExp]>([
    ['--json with --field', { json: true, field: 'token' }, /--json and --field/],
    ['an empty --field', { field: '' }, /--field/],
    ['a blank --id', { id: '  ' }, /--id cannot be empty/],
    ['a blank --name', { name: '' }, /--name cannot be empty/],
    ['--mapping without =', { mapping: ['sales'] }, /--mapping expects key=value/],
    ['--mapping with an empty key', { mapping: ['=db'] }, /--mapping has an empty key/],
    ['--property given twice', { property: ['a=1', 'a=2'] }, /--property sets "a" more than once/],
    ['invalid --properties JSON', { properties: '{plan:pro}' }, /--properties.*not valid JSON/],
    ['--properties that is an array', { properties: '[1]' }, /must be a JSON object/],
    ['--mapping-json with a number', { mappingJson: '{"a":1}' }, /value of "a" must be a string/],
    ['--mapping-json null', { mappingJson: 'null' }, /--mapping-json.*JSON object, got null/],
    [
      'a key in both --properties and --property',
      { properties: '{"a":1}', property: ['a=2'] },
      /"a" is set by both --properties and --property/,
    ],
    [
      'a key in both --mapping-json and --mapping',
      { mappingJson: '{"a":"b"}', mapping: ['a=c'] },
      /"a" is set by both/,
    ],
    ['--properties @ with no path', { properties: '@' }, /@ needs a file path/],
    ['--properties @missing file', { properties: '@/nonexistent/ugs/p.json' }, /no such file/],
    ['--properties @directory', { properties: `@${tmpdir()}` }, /is a directory/],
    ['both JSON flags on stdin', { mappingJson: '-', properties: '-' }, /cannot both read stdin/],
  ])('rejects %s as a usage error (exit 2)', async (_label, overrides, message) => {
    const error = await rejection(
      parseGetFlags(flags({ id: 'acme', name: 'Acme', ...overrides }), deps()),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as Error).message).toMatch(message);
  });

  it('refuses --properties - when stdin is a terminal instead of waiting on it', async () => {
    const error = await rejection(
      parseGetFlags(flags({ properties: '-' }), makeDeps({ io: terminalIO() })),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/stdin is a terminal/);
  });

  it('refuses an empty stdin for --properties -', async () => {
    const io = makeIO({ stdinText: ' \n' });
    const error = await rejection(parseGetFlags(flags({ properties: '-' }), makeDeps({ io })));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/stdin was empty/);
  });

  it('chooses the output format', async () => {
    expect((await parseGetFlags(flags({ json: true }), deps())).format).toEqual({ kind: 'json' });
    expect((await parseGetFlags(flags({ field: 'token' }), deps())).format).toEqual({
      kind: 'field',
      name: 'token',
    });
  });
});

describe('runGet without a terminal', () => {
  it('sends exactly the documented body: key<TAB>value lines on stdout, the headline on stderr', async () => {
    const service = echoService(true);
    const deps = makeDeps({ service });
    await runGet(
      opts({ mapping: { sales: 'acme_db' }, properties: { plan: 'pro', seats: 3 } }),
      deps,
    );
    expect(service.gets).toEqual([
      {
        name: 'Acme Corp',
        user_group_id: 'acme',
        mapping: { sales: 'acme_db' },
        properties: { plan: 'pro', seats: 3 },
      },
    ]);
    expect(deps.targets).toHaveLength(1);
    expect(deps.targets[0]?.apiToken).toBe('api-token-0123456789');
    expect(deps.targets[0]?.baseUrl.href).toBe('https://ugs.example.com/');
    const out = deps.io.stdout.text;
    expect(out).toMatch(/^provided_id\tacme$/m);
    expect(out).toMatch(/^token\tug-token-aaaaaaaaaaaa$/m);
    expect(out).toMatch(/^properties\t\{"plan":"pro","seats":3\}$/m);
    expect(
      out
        .trimEnd()
        .split('\n')
        .every((line) => /^[^\t]+\t/.test(line)),
    ).toBe(true);
    expect(out).not.toMatch(/[│┌─]/);
    expect(out).not.toContain(ESC);
    expect(deps.io.stderr.text).toBe('Created user group acme\n');
  });

  it('leaves mapping and properties out of the body when not given', async () => {
    const service = echoService(false);
    const deps = makeDeps({ service });
    await runGet(opts(), deps);
    expect(service.gets).toEqual([{ name: 'Acme Corp', user_group_id: 'acme' }]);
    expect(Object.keys(service.gets[0] ?? {})).toEqual(['name', 'user_group_id']);
    expect(deps.io.stderr.text.split('\n')[0]).toBe('Found user group acme');
    // A found group's properties: null only echoes that none were sent: not shown as its value.
    expect(deps.io.stdout.text).not.toMatch(/^properties\t/m);
  });

  it('says neither created nor found when the service does not say', async () => {
    const deps = makeDeps({ service: echoService(null) });
    await runGet(opts(), deps);
    expect(deps.io.stderr.text.split('\n')[0]).toBe('User group acme');
  });

  it('shows known fields first, then unknown ones in the order sent', async () => {
    const service = new FakeService({
      get: () => groupResult({ zeta: 'z', environment: 'Testing', alpha: { a: 1 } }),
    });
    const deps = makeDeps({ service });
    await runGet(opts(), deps);
    const fields = deps.io.stdout.text
      .split('\n')
      .map((line) => /^(\S+)\t/.exec(line)?.[1])
      .filter((f): f is string => f !== undefined);
    expect(fields).toEqual([
      'provided_id',
      'name',
      'team_id',
      'token',
      'environment',
      'zeta',
      'alpha',
    ]);
    expect(deps.io.stdout.text).toMatch(/^alpha\t\{"a":1\}$/m);
  });

  it('--json prints exactly the body, pretty, and nothing else', async () => {
    const result = groupResult({ environment: 'Customer' }, { new_user_group: false, extra: [1] });
    const deps = makeDeps({ service: new FakeService({ get: () => result }) });
    await runGet(opts({ format: { kind: 'json' } }), deps);
    expect(deps.io.stdout.text).toBe(`${JSON.stringify(result.body, null, 2)}\n`);
    expect(deps.io.stderr.text).toBe('');
  });

  it.each<[string, unknown, string]>([
    ['token', 'ug-token-aaaaaaaaaaaa', 'ug-token-aaaaaaaaaaaa\n'],
    ['team_id', 42, '42\n'],
    ['properties', null, 'null\n'],
    ['properties', { plan: 'pro' }, '{"plan":"pro"}\n'],
    ['name', 'two words', 'two words\n'],
  ])('--field %s prints only the value (%j)', async (field, value, expected) => {
    const service = new FakeService({ get: () => groupResult({ [field]: value }) });
    const deps = makeDeps({ service });
    await runGet(opts({ format: { kind: 'field', name: field } }), deps);
    expect(deps.io.stdout.text).toBe(expected);
    expect(deps.io.stderr.text).toBe('');
  });

  it('--field naming a field the service did not send is exit 1 with nothing on stdout', async () => {
    const deps = makeDeps({ service: echoService() });
    const error = await rejection(runGet(opts({ format: { kind: 'field', name: 'nope' } }), deps));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).exitCode).toBe(1);
    expect((error as Error).message).toContain('"nope"');
    expect(deps.io.stdout.text).toBe('');
  });

  it.each<[string, Partial<GetOptions>]>([
    ['--id', { id: undefined }],
    ['--name', { name: undefined }],
  ])('a missing %s is a usage error naming it, and nothing is sent', async (flag, overrides) => {
    const service = echoService();
    const deps = makeDeps({ service });
    const error = await rejection(runGet(opts(overrides), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as Error).message).toContain(flag);
    expect(service.gets).toEqual([]);
    expect(deps.targets).toEqual([]);
    expect(deps.prompter.asked).toEqual([]);
  });

  it('with neither --id nor --name, names --id first', async () => {
    const error = await rejection(runGet(opts({ id: undefined, name: undefined }), makeDeps()));
    expect((error as Error).message).toMatch(/^missing --id/);
  });

  it('no API token anywhere is an auth error (exit 3) and nothing is sent', async () => {
    const service = echoService();
    const deps = makeDeps({ service, profiles: { default: { baseUrl: 'https://u.example' } } });
    const error = await rejection(runGet(opts(), deps));
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(3);
    expect((error as AuthError).hint).toContain('ugs login');
    expect(service.gets).toEqual([]);
  });

  it('the hint for a missing token names the profile in use', async () => {
    const deps = makeDeps({ profiles: {}, settings: { profile: 'staging' } });
    const error = (await rejection(runGet(opts(), deps))) as AuthError;
    expect(error.message).toContain('"staging"');
    expect(error.hint).toContain('ugs login --profile staging');
  });

  it('uses UGS_API_TOKEN over the saved token', async () => {
    const io = makeIO({ env: { UGS_API_TOKEN: 'env-token-abcdef' } });
    const deps = makeDeps({ io, service: echoService() });
    await runGet(opts(), deps);
    expect(deps.targets[0]?.apiToken).toBe('env-token-abcdef');
  });

  it('no base URL anywhere is a usage error and nothing is sent', async () => {
    const service = echoService();
    const deps = makeDeps({ service, profiles: { default: { apiToken: 'api-token-x' } } });
    const error = await rejection(runGet(opts(), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/no base URL/);
    expect(service.gets).toEqual([]);
  });

  it('refuses a plain-http base URL to another host (exit 2) unless --insecure-http', async () => {
    const settings = { baseUrl: 'http://ugs.example.com', baseUrlSource: 'flag' as const };
    const refused = makeDeps({ service: echoService(), settings });
    const error = await rejection(runGet(opts(), refused));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/plain http/);
    expect(refused.targets).toEqual([]);

    const allowed = makeDeps({
      service: echoService(),
      settings: { ...settings, insecureHttp: true },
    });
    await runGet(opts(), allowed);
    expect(allowed.targets[0]?.baseUrl.href).toBe('http://ugs.example.com/');
  });

  it('sends to the --base-url flag rather than the profile, keeping its path prefix', async () => {
    const deps = makeDeps({
      service: echoService(),
      settings: { baseUrl: 'https://other.example/prefix/', baseUrlSource: 'flag' },
    });
    await runGet(opts(), deps);
    expect(deps.targets[0]?.baseUrl.href).toBe('https://other.example/prefix');
  });

  it.each<[string, Error, number, abstract new (...args: never[]) => Error]>([
    ['an API error', new ApiError('boom', { status: 500 }), 1, ApiError],
    ['a 401', new AuthError('the API token was not accepted (HTTP 401)'), 3, AuthError],
    [
      'a network error',
      new NetworkError('connection refused', { code: 'ECONNREFUSED' }),
      4,
      NetworkError,
    ],
  ])(
    'passes %s through with its exit code and prints nothing on stdout',
    async (_l, thrown, code, cls) => {
      const deps = makeDeps({ service: failingService(thrown) });
      const error = await rejection(runGet(opts(), deps));
      expect(error).toBeInstanceOf(cls);
      expect((error as ApiError).exitCode).toBe(code);
      expect(deps.io.stdout.text).toBe('');
    },
  );

  it('with --json, a JSON error body from the service is printed on stdout, exit still 1', async () => {
    const body = { success: 0, error: 'name is required' };
    const deps = makeDeps({ service: failingService(apiErrorWithBody(body)) });
    const error = await rejection(runGet(opts({ format: { kind: 'json' } }), deps));
    expect(error).toBeInstanceOf(ApiError);
    expect((error as ApiError).exitCode).toBe(1);
    expect(JSON.parse(deps.io.stdout.text)).toEqual(body);
    expect(deps.io.stdout.text).toBe(`${JSON.stringify(body, null, 2)}\n`);
  });

  it('with --json, a 403 JSON body is printed on stdout and the exit is 3', async () => {
    const body = { detail: 'forbidden' };
    const deps = makeDeps({ service: failingService(new AuthError('403', { body })) });
    const error = await rejection(runGet(opts({ format: { kind: 'json' } }), deps));
    expect((error as AuthError).exitCode).toBe(3);
    expect(JSON.parse(deps.io.stdout.text)).toEqual(body);
  });

  it.each<[string, GetOptions['format']]>([
    ['table', { kind: 'table' }],
    ['--field', { kind: 'field', name: 'token' }],
  ])('without --json (%s) the error body is not printed', async (_l, format) => {
    const deps = makeDeps({ service: failingService(apiErrorWithBody({ error: 'x' })) });
    await rejection(runGet(opts({ format }), deps));
    expect(deps.io.stdout.text).toBe('');
  });

  it.each([
    ['table', { kind: 'table' }],
    ['--json', { kind: 'json' }],
    ['--field token', { kind: 'field', name: 'token' }],
  ] as const)(
    'an answer for another group (provided_id) is exit 1 and prints no token (%s)',
    async (_label, format) => {
      const service = new FakeService({
        get: () => groupResult({ provided_id: 'globex', token: 'ug-token-GLOBEX-secret' }),
      });
      const deps = makeDeps({ service });
      const error = await rejection(runGet(opts({ format }), deps));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).exitCode).toBe(1);
      expect((error as Error).message).toContain('"globex", not "acme"');
      expect(deps.io.stdout.text).toBe('');
      expect(deps.io.stderr.text).not.toContain('GLOBEX');
    },
  );

  it('an answer without provided_id, or with the id as a number, is taken as it is', async () => {
    for (const provided_id of [undefined, null, 42]) {
      const service = new FakeService({ get: () => groupResult({ provided_id }) });
      const deps = makeDeps({ service });
      await runGet(opts({ id: '42', format: { kind: 'field', name: 'token' } }), deps);
      expect(deps.io.stdout.text).toBe('ug-token-aaaaaaaaaaaa\n');
    }
  });

  it('an error without a body prints nothing on stdout even with --json', async () => {
    const deps = makeDeps({ service: failingService(new ApiError('not JSON', { status: 502 })) });
    await rejection(runGet(opts({ format: { kind: 'json' } }), deps));
    expect(deps.io.stdout.text).toBe('');
  });
});

describe('runGet on a terminal', () => {
  const full: [string, string][] = [
    ['User group id', 'acme'],
    ['User group name', 'Acme Corp'],
    ['Data source mapping', 'sales=acme_db'],
    ['Data source mapping', 'hr=hr=db'],
    ['Data source mapping', ''],
    ['Property', 'plan=pro'],
    ['Property', ''],
  ];

  it('prompts for a missing --id and --name, then offers mapping and properties', async () => {
    const service = echoService();
    const deps = makeDeps({ io: terminalIO(), service, prompts: full });
    await runGet(opts({ id: undefined, name: undefined }), deps);
    deps.prompter.assertDone();
    expect(service.gets).toEqual([
      {
        name: 'Acme Corp',
        user_group_id: 'acme',
        mapping: { sales: 'acme_db', hr: 'hr=db' },
        properties: { plan: 'pro' },
      },
    ]);
    expect(deps.io.stdout.text).toContain('Created user group acme');
  });

  it('sends no mapping or properties when both offers are declined', async () => {
    const service = echoService();
    const deps = makeDeps({
      io: terminalIO(),
      service,
      prompts: [
        ['User group id', 'acme'],
        ['User group name', 'Acme'],
        ['Data source mapping', ''],
        ['Property', ''],
      ],
    });
    await runGet(opts({ id: undefined, name: undefined }), deps);
    expect(service.gets).toEqual([{ name: 'Acme', user_group_id: 'acme' }]);
  });

  it('asks only for what is missing and does not re-offer what flags gave', async () => {
    const service = echoService();
    const deps = makeDeps({
      io: terminalIO(),
      service,
      prompts: [
        ['User group name', 'Acme'],
        ['Property', ''],
      ],
    });
    await runGet(opts({ name: undefined, mapping: { s: 'd' } }), deps);
    deps.prompter.assertDone();
    expect(deps.prompter.asked.some((m) => m.includes('User group id'))).toBe(false);
    expect(service.gets).toEqual([{ name: 'Acme', user_group_id: 'acme', mapping: { s: 'd' } }]);
  });

  it('keeps a prompted pair whose key is __proto__ as data', async () => {
    const service = echoService();
    const deps = makeDeps({
      io: terminalIO(),
      service,
      prompts: [
        ['User group id', 'acme'],
        ['User group name', 'Acme'],
        ['Data source mapping', ''],
        ['Property', '__proto__=x'],
        ['Property', ''],
      ],
    });
    await runGet(opts({ id: undefined, name: undefined }), deps);
    expect(JSON.stringify(service.gets[0]?.properties)).toBe('{"__proto__":"x"}');
  });

  it('asks nothing when --id and --name are both given', async () => {
    const service = echoService();
    const deps = makeDeps({ io: terminalIO(), service });
    await runGet(opts(), deps);
    expect(deps.prompter.asked).toEqual([]);
    expect(service.gets).toHaveLength(1);
  });

  it('validates answers inline: blank ids, bad pairs and repeated keys are rejected', async () => {
    const prompter = new FakePrompter([
      ['input', 'User group id', 'acme'],
      ['input', 'User group name', 'Acme'],
      ['input', 'Data source mapping', 'a=1'],
      ['input', 'Data source mapping', ''],
      ['input', 'Property', ''],
    ]);
    const deps = withPrompter(makeDeps({ io: terminalIO(), service: echoService() }), prompter);
    await runGet(opts({ id: undefined, name: undefined }), deps);
    const [id, name, mapping1, mapping2] = prompter.calls;
    expect(id?.validate?.('  ')).toMatch(/required/);
    expect(id?.validate?.('x')).toBe(true);
    expect(name?.validate?.('')).toMatch(/required/);
    expect(mapping1?.validate?.('no-equals')).toMatch(
      /type schema_id=source, with an "=" between them/,
    );
    expect(mapping1?.validate?.('=v')).toMatch(/the part before "=" cannot be empty/);
    expect(mapping1?.validate?.('')).toBe(true);
    // After a=1 was accepted, a second a= is refused while it is being typed.
    expect(mapping2?.validate?.('a=2')).toMatch(/"a" is already set/);
    expect(mapping2?.validate?.('b=2')).toBe(true);
  });

  it('draws prompts through the prompter only: stdout stays clean for --json', async () => {
    const deps = makeDeps({
      io: terminalIO(),
      service: echoService(),
      prompts: full,
    });
    await runGet(opts({ id: undefined, name: undefined, format: { kind: 'json' } }), deps);
    expect(JSON.parse(deps.io.stdout.text)).toMatchObject({ success: 1 });
  });

  it.each<[string, number]>([
    ['User group id', 0],
    ['User group name', 1],
    ['Data source mapping', 2],
    ['Property', 5],
  ])('Ctrl+C at the %s prompt is exit 130 and nothing is sent', async (label, at) => {
    const service = echoService();
    const prompts: [string, string | Error][] = [
      ...full.slice(0, at),
      [label, new CancelledError()],
    ];
    const deps = makeDeps({ io: terminalIO(), service, prompts });
    const error = await rejection(runGet(opts({ id: undefined, name: undefined }), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).exitCode).toBe(130);
    expect(service.gets).toEqual([]);
    expect(deps.targets).toEqual([]);
    expect(deps.io.stdout.text).toBe('');
  });

  it.each<[string, TestIO, boolean?]>([
    ['CI is set', terminalIO({ env: { CI: '1' } })],
    ['CI=true', terminalIO({ env: { CI: 'true' } })],
    ['--no-input', terminalIO(), true],
    ['stderr is not a terminal', terminalIO({ stderrIsTTY: false })],
    ['stdin is not a terminal', terminalIO({ stdinIsTTY: false })],
  ])('does not prompt when %s: a missing --id is a usage error', async (_label, io, noInput) => {
    const service = echoService();
    const deps = makeDeps({ io, service, prompts: full, settings: { noInput: noInput === true } });
    const error = await rejection(runGet(opts({ id: undefined }), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain('--id');
    expect(deps.prompter.asked).toEqual([]);
    expect(service.gets).toEqual([]);
  });

  it('an empty CI variable does not turn prompts off', async () => {
    const service = echoService();
    const deps = makeDeps({ io: terminalIO({ env: { CI: '' } }), service, prompts: full });
    await runGet(opts({ id: undefined, name: undefined }), deps);
    expect(service.gets).toHaveLength(1);
  });

  it('reports a missing token before asking anything', async () => {
    const deps = makeDeps({ io: terminalIO(), profiles: {}, prompts: full });
    const error = await rejection(runGet(opts({ id: undefined, name: undefined }), deps));
    expect(error).toBeInstanceOf(AuthError);
    expect(deps.prompter.asked).toEqual([]);
  });

  it('colours the table on a terminal, and not with NO_COLOR, FORCE_COLOR=0 or --no-color', async () => {
    const coloured = makeDeps({ io: terminalIO(), service: echoService() });
    await runGet(opts(), coloured);
    expect(coloured.io.stdout.text).toContain(ESC);

    for (const [io, noColor] of [
      [terminalIO({ env: { NO_COLOR: '1' } }), false],
      [terminalIO({ env: { FORCE_COLOR: '0' } }), false],
      [terminalIO(), true],
    ] as const) {
      const deps = makeDeps({ io, service: echoService(), settings: { noColor } });
      await runGet(opts(), deps);
      expect(deps.io.stdout.text).not.toContain(ESC);
      expect(deps.io.stdout.text).toContain('Created user group acme');
    }
  });

  it('--json and --field output is never coloured, even on a terminal', async () => {
    const json = makeDeps({ io: terminalIO(), service: echoService() });
    await runGet(opts({ format: { kind: 'json' } }), json);
    expect(json.io.stdout.text).not.toContain(ESC);
    const field = makeDeps({ io: terminalIO(), service: echoService() });
    await runGet(opts({ format: { kind: 'field', name: 'token' } }), field);
    expect(field.io.stdout.text).toBe('ug-token-aaaaaaaaaaaa\n');
  });
});
