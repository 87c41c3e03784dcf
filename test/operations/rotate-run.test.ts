import { describe, expect, it } from 'vitest';
import { operations } from '../../src/commands/operations.js';
import {
  ApiError,
  AuthError,
  CancelledError,
  NetworkError,
  OutcomeUnknownError,
  UsageError,
} from '../../src/errors.js';
import {
  PREVIOUS_TOKEN_WARNING,
  parseRotateFlags,
  type RotateOptions,
  runRotate,
} from '../../src/operations/rotate-token/command.js';
import { HttpServiceClient } from '../../src/service/service.js';
import { type HttpClient, type HttpRequest, TransportError } from '../../src/transport/http.js';
import {
  apiErrorWithBody,
  FakePrompter,
  FakeService,
  failingService,
  groupResult,
  makeDeps,
  makeIO,
  NEW_TOKEN,
  rejection,
  rotateService,
  terminalIO,
  withPrompter,
} from '../kit/fakes.js';

const OLD = 'ug-old-token-1234';

function opts(overrides: Partial<RotateOptions> = {}): RotateOptions {
  return {
    currentToken: OLD,
    currentTokenFromStdin: false,
    yes: true,
    format: { kind: 'table' },
    ...overrides,
  };
}

describe('parseRotateFlags', () => {
  it('maps flags to options, trimming the token', () => {
    expect(parseRotateFlags({ currentToken: `  ${OLD}\n`, yes: true })).toEqual({
      currentToken: OLD,
      currentTokenFromStdin: false,
      yes: true,
      format: { kind: 'table' },
    });
    expect(parseRotateFlags({ currentTokenStdin: true, json: true })).toEqual({
      currentToken: undefined,
      currentTokenFromStdin: true,
      yes: false,
      format: { kind: 'json' },
    });
    expect(parseRotateFlags({ field: 'token' }).format).toEqual({ kind: 'field', name: 'token' });
    // `-` is stdin, with or without --current-token-stdin beside it.
    for (const flags of [{ currentToken: '-' }, { currentToken: '-', currentTokenStdin: true }]) {
      expect(parseRotateFlags(flags)).toMatchObject({
        currentToken: undefined,
        currentTokenFromStdin: true,
      });
    }
  });

  it.each<[string, Parameters<typeof parseRotateFlags>[0], RegExp]>([
    [
      'both token sources',
      { currentToken: OLD, currentTokenStdin: true },
      /either --current-token or --current-token-stdin/,
    ],
    ['an empty --current-token', { currentToken: ' ' }, /--current-token cannot be empty/],
    ['--json with --field', { json: true, field: 'token' }, /--json and --field/],
  ])('rejects %s as a usage error', (_label, flags, message) => {
    let error: unknown;
    try {
      parseRotateFlags(flags);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as Error).message).toMatch(message);
  });
});

describe('runRotate without a terminal', () => {
  it('refuses to run without --yes (exit 2) and sends nothing', async () => {
    const service = rotateService();
    const deps = makeDeps({ service });
    const error = await rejection(runRotate(opts({ yes: false }), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as Error).message).toContain('--yes');
    expect(service.rotations).toEqual([]);
    expect(deps.targets).toEqual([]);
    expect(deps.io.stdout.text).toBe('');
  });

  it('refuses without --yes even when stdin carries the token, and leaves stdin unread', async () => {
    const service = rotateService();
    const io = makeIO({ stdinText: `${OLD}\n` });
    const deps = makeDeps({ io, service });
    const error = await rejection(
      runRotate(opts({ yes: false, currentToken: undefined, currentTokenFromStdin: true }), deps),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect(service.rotations).toEqual([]);
    expect(io.stdin.readableLength).toBeGreaterThan(0);
  });

  it('without a token source it is a usage error naming --current-token', async () => {
    const service = rotateService();
    const deps = makeDeps({ service });
    const error = await rejection(runRotate(opts({ currentToken: undefined }), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain('--current-token');
    expect(service.rotations).toEqual([]);
  });

  it('into a pipe: key<TAB>value on stdout, the headline without the token on stderr', async () => {
    const service = rotateService();
    const deps = makeDeps({ service });
    await runRotate(opts(), deps);
    expect(deps.io.stdout.text).toMatch(new RegExp(`^token\t${NEW_TOKEN}$`, 'm'));
    expect(deps.io.stdout.text).toMatch(/^environment\tCustomer$/m);
    expect(deps.io.stderr.text).toBe(
      `Rotated token of user group acme\n${PREVIOUS_TOKEN_WARNING}\n`,
    );
  });

  it('at a terminal, leads the output with the new token and the warning', async () => {
    const service = rotateService();
    const io = makeIO({ stdoutIsTTY: true, env: { NO_COLOR: '1' } });
    // A terminal wide enough for the warning on one line (at 80 columns it wraps).
    Object.assign(io.stdout, { columns: 120 });
    const deps = makeDeps({ service, io });
    await runRotate(opts(), deps);
    expect(service.rotations).toEqual([OLD]);
    const lines = deps.io.stdout.text.split('\n');
    expect(lines[0]).toBe('Rotated token of user group acme');
    expect(lines[1]).toBe(`New token: ${NEW_TOKEN}`);
    expect(lines[2]).toBe(PREVIOUS_TOKEN_WARNING);
    expect(PREVIOUS_TOKEN_WARNING).toMatch(/previous token may stop working/i);
    // The table follows, including the environment tag.
    expect(deps.io.stdout.text).toMatch(/environment\s*│\s*Customer/);
    expect(deps.io.stderr.text).toBe('');
  });

  it('reads the token from stdin, trimmed', async () => {
    const service = rotateService();
    const io = makeIO({ stdinText: `  ${OLD}\r\n` });
    const deps = makeDeps({ io, service });
    await runRotate(opts({ currentToken: undefined, currentTokenFromStdin: true }), deps);
    expect(service.rotations).toEqual([OLD]);
  });

  it('an empty stdin is a usage error and nothing is sent', async () => {
    const service = rotateService();
    const deps = makeDeps({ io: makeIO({ stdinText: '\n  \n' }), service });
    const error = await rejection(
      runRotate(opts({ currentToken: undefined, currentTokenFromStdin: true }), deps),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/stdin was empty/);
    expect(service.rotations).toEqual([]);
  });

  it('--current-token-stdin with a terminal on stdin is a usage error, not a hang', async () => {
    const service = rotateService();
    // stdin is a terminal, stderr is not: no prompts, and nothing will ever arrive on stdin.
    const deps = makeDeps({ io: makeIO({ stdinIsTTY: true }), service });
    const error = await rejection(
      runRotate(opts({ currentToken: undefined, currentTokenFromStdin: true }), deps),
    );
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/stdin is a terminal/);
    expect(service.rotations).toEqual([]);
  });

  it('--json prints exactly the body on stdout; the warning goes to stderr', async () => {
    const service = rotateService();
    const deps = makeDeps({ service });
    await runRotate(opts({ format: { kind: 'json' } }), deps);
    const body = JSON.parse(deps.io.stdout.text);
    expect(body.user_group.token).toBe(NEW_TOKEN);
    expect(deps.io.stdout.text).toBe(`${JSON.stringify(body, null, 2)}\n`);
    expect(deps.io.stderr.text).toBe(`${PREVIOUS_TOKEN_WARNING}\n`);
  });

  it('--field token prints only the new token; the warning goes to stderr', async () => {
    const deps = makeDeps({ service: rotateService() });
    await runRotate(opts({ format: { kind: 'field', name: 'token' } }), deps);
    expect(deps.io.stdout.text).toBe(`${NEW_TOKEN}\n`);
    expect(deps.io.stderr.text).toContain(PREVIOUS_TOKEN_WARNING);
  });

  it('--field naming a field the successful answer lacks is exit 5 with the recovery command: the token was rotated', async () => {
    const deps = makeDeps({ service: rotateService() });
    const error = await rejection(
      runRotate(opts({ format: { kind: 'field', name: 'nope' } }), deps),
    );
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).exitCode).toBe(5);
    expect((error as OutcomeUnknownError).message).toContain('the token WAS rotated');
    expect((error as OutcomeUnknownError).hint).toContain('ugs get --id');
    expect(deps.io.stdout.text).toBe('');
  });

  it('parseRotateFlags: --field must name a field of the rotation answer (checked before anything is sent)', () => {
    expect(parseRotateFlags({ field: 'token' }).format).toEqual({ kind: 'field', name: 'token' });
    expect(parseRotateFlags({ field: 'api_environment_tag' }).format.kind).toBe('field');
    for (const field of ['Token', 'properties', 'tokne']) {
      expect(() => parseRotateFlags({ field })).toThrow(UsageError);
    }
  });

  it('no API token is exit 3, before stdin is read, and nothing is sent', async () => {
    const service = rotateService();
    const io = makeIO({ stdinText: OLD });
    const deps = makeDeps({ io, service, profiles: { default: { baseUrl: 'https://u.example' } } });
    const error = await rejection(
      runRotate(opts({ currentToken: undefined, currentTokenFromStdin: true }), deps),
    );
    expect(error).toBeInstanceOf(AuthError);
    expect((error as AuthError).exitCode).toBe(3);
    expect(service.rotations).toEqual([]);
  });

  it.each<[string, Error, number]>([
    ['an API error', new ApiError('the service answered HTTP 500', { status: 500 }), 1],
    ['a 401', new AuthError('the API token was not accepted (HTTP 401)'), 3],
    ['a refused connection', new NetworkError('connection refused'), 4],
    ['an unknown outcome', new OutcomeUnknownError('sent, no answer'), 5],
  ])('%s keeps its exit code and prints nothing on stdout', async (_l, thrown, code) => {
    const deps = makeDeps({ service: failingService(thrown) });
    const error = await rejection(runRotate(opts(), deps));
    expect(error).toBe(thrown);
    expect((error as ApiError).exitCode).toBe(code);
    expect(deps.io.stdout.text).toBe('');
    expect(deps.io.stderr.text).not.toContain(PREVIOUS_TOKEN_WARNING);
  });

  it.each([
    ['table', { kind: 'table' }],
    ['--json', { kind: 'json' }],
    ['--field token', { kind: 'field', name: 'token' }],
  ] as const)(
    'an answer carrying the token that was sent is exit 1, "not rotated" (%s)',
    async (_label, format) => {
      const service = new FakeService({
        rotate: (token) => groupResult({ token, api_environment_tag: 'Customer' }),
      });
      const deps = makeDeps({ service });
      const error = await rejection(runRotate(opts({ format }), deps));
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).exitCode).toBe(1);
      expect((error as Error).message).toMatch(/^not rotated/);
      expect(service.rotations).toEqual([OLD]);
      expect(deps.io.stdout.text).toBe('');
      expect(deps.io.stderr.text).not.toContain(PREVIOUS_TOKEN_WARNING);
    },
  );

  it('with --json, a JSON error body is printed on stdout', async () => {
    const body = { success: 0, error: 'no user group has this token' };
    const deps = makeDeps({ service: failingService(apiErrorWithBody(body, 404)) });
    const error = await rejection(runRotate(opts({ format: { kind: 'json' } }), deps));
    expect((error as ApiError).exitCode).toBe(1);
    expect(JSON.parse(deps.io.stdout.text)).toEqual(body);
  });
});

describe('runRotate on a terminal', () => {
  it('prompts for the token (masked), then asks to confirm (default no), then sends', async () => {
    const prompter = new FakePrompter([
      ['password', 'Current user group token', `${OLD} `],
      ['confirm', 'Rotate the token ending in …1234?', true],
    ]);
    const service = rotateService();
    const deps = withPrompter(makeDeps({ io: terminalIO(), service }), prompter);
    await runRotate(opts({ currentToken: undefined, yes: false }), deps);
    prompter.assertDone();
    expect(prompter.calls[1]?.default).toBe(false);
    expect(prompter.calls[0]?.validate?.('  ')).toMatch(/required/);
    expect(service.rotations).toEqual([OLD]);
    expect(deps.io.stdout.text.split('\n')[1]).toContain(NEW_TOKEN);
    // The confirmation shows only the last four characters of the old token.
    expect(prompter.calls[1]?.message).not.toContain(OLD);
  });

  it('declining the confirmation is a cancellation (130) and nothing is sent', async () => {
    const service = rotateService();
    const deps = makeDeps({
      io: terminalIO(),
      service,
      prompts: [['Rotate the token', false]],
    });
    const error = await rejection(runRotate(opts({ yes: false }), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).exitCode).toBe(130);
    expect((error as Error).message).toMatch(/nothing was sent/);
    expect(service.rotations).toEqual([]);
    expect(deps.targets).toEqual([]);
    expect(deps.io.stdout.text).toBe('');
  });

  it.each<[string, [string, string | boolean | Error][]]>([
    ['token', [['Current user group token', new CancelledError()]]],
    [
      'confirmation',
      [
        ['Current user group token', OLD],
        ['Rotate the token', new CancelledError()],
      ],
    ],
  ])('Ctrl+C at the %s prompt is exit 130 and nothing is sent', async (_l, prompts) => {
    const service = rotateService();
    const deps = makeDeps({ io: terminalIO(), service, prompts });
    const error = await rejection(runRotate(opts({ currentToken: undefined, yes: false }), deps));
    expect(error).toBeInstanceOf(CancelledError);
    expect((error as CancelledError).exitCode).toBe(130);
    expect(service.rotations).toEqual([]);
  });

  it('--yes skips the confirmation but still prompts for a missing token', async () => {
    const service = rotateService();
    const deps = makeDeps({
      io: terminalIO(),
      service,
      prompts: [['Current user group token', OLD]],
    });
    await runRotate(opts({ currentToken: undefined, yes: true }), deps);
    deps.prompter.assertDone();
    expect(deps.prompter.asked).toHaveLength(1);
    expect(service.rotations).toEqual([OLD]);
  });

  it('with --current-token it only asks for confirmation', async () => {
    const service = rotateService();
    const deps = makeDeps({ io: terminalIO(), service, prompts: [['Rotate the token', true]] });
    await runRotate(opts({ yes: false }), deps);
    expect(deps.prompter.asked).toHaveLength(1);
    expect(service.rotations).toEqual([OLD]);
  });

  it('CI=1 on a terminal behaves as no terminal: --yes is required', async () => {
    const service = rotateService();
    const deps = makeDeps({ io: terminalIO({ env: { CI: '1' } }), service });
    const error = await rejection(runRotate(opts({ yes: false }), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect(deps.prompter.asked).toEqual([]);
    expect(service.rotations).toEqual([]);
  });

  it('--no-input on a terminal behaves as no terminal: --yes is required', async () => {
    const deps = makeDeps({
      io: terminalIO(),
      settings: { noInput: true },
      service: rotateService(),
    });
    const error = await rejection(runRotate(opts({ yes: false }), deps));
    expect(error).toBeInstanceOf(UsageError);
    expect(deps.prompter.asked).toEqual([]);
  });

  it('asks nothing when the API token is missing', async () => {
    const deps = makeDeps({ io: terminalIO(), profiles: {}, prompts: [['Current', OLD]] });
    const error = await rejection(runRotate(opts({ currentToken: undefined, yes: false }), deps));
    expect(error).toBeInstanceOf(AuthError);
    expect(deps.prompter.asked).toEqual([]);
  });
});

describe('runRotate with the real service client over a fake transport', () => {
  function transport(fail: Error): { http: HttpClient; sent: HttpRequest[] } {
    const sent: HttpRequest[] = [];
    const http = {
      async send(request: HttpRequest) {
        sent.push(request);
        throw fail;
      },
    } as unknown as HttpClient;
    return { http, sent };
  }

  function depsWith(http: HttpClient) {
    const deps = makeDeps();
    return {
      ...deps,
      connect: async (target: Parameters<typeof deps.connect>[0]) =>
        new HttpServiceClient(http, target, 'ugs/test', { operations }),
    };
  }

  it('a request that may have arrived but got no answer is exit 5 with a way to check', async () => {
    const { http, sent } = transport(new TransportError('socket hang up', true));
    const deps = depsWith(http);
    const error = await rejection(runRotate(opts(), deps));
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect((error as OutcomeUnknownError).exitCode).toBe(5);
    expect((error as Error).message).toMatch(/may or may not have been rotated/);
    expect((error as OutcomeUnknownError).hint).toMatch(
      /ugs get --id .* --name .* --must-exist --field token/,
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]?.method).toBe('POST');
    expect(JSON.parse(sent[0]?.body ?? '')).toEqual({ current_token: OLD });
    expect(sent[0]?.url.href).toBe('https://ugs.example.com/api/user');
    expect(deps.io.stdout.text).toBe('');
  });

  it('a request that never left (refused) is a network error, exit 4', async () => {
    const { http } = transport(new TransportError('connection refused', false));
    const error = await rejection(runRotate(opts(), depsWith(http)));
    expect(error).toBeInstanceOf(NetworkError);
    expect(error).not.toBeInstanceOf(OutcomeUnknownError);
    expect((error as NetworkError).exitCode).toBe(4);
  });
});
