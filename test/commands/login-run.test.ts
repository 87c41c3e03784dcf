import { describe, expect, it } from 'vitest';
import { type LoginOptions, runLogin } from '../../src/commands/login.js';
import { CancelledError, UsageError } from '../../src/errors.js';
import {
  FakePrompter,
  makeDeps,
  makeIO,
  rejection,
  type TestDeps,
  terminalIO,
  withPrompter,
} from '../kit/fakes.js';

const TOKEN = 'secret-api-token-5678';
const withToken: LoginOptions = { withToken: true, secureStorage: false, verify: false };
const prompted: LoginOptions = { withToken: false, secureStorage: false, verify: false };

function output(deps: TestDeps): string {
  return deps.io.stdout.text + deps.io.stderr.text;
}

describe('runLogin --with-token (no terminal)', () => {
  it('reads the token from stdin, trimmed, and saves it with the base URL', async () => {
    const deps = makeDeps({
      io: makeIO({ stdinText: `\n  ${TOKEN}\n` }),
      profiles: {},
      settings: { baseUrl: 'https://ugs.example.com/prefix/', baseUrlSource: 'flag' },
    });
    await runLogin(withToken, deps);
    expect(deps.config.profiles).toEqual({
      default: { baseUrl: 'https://ugs.example.com/prefix', apiToken: TOKEN },
    });
    expect(deps.config.writes).toBe(1);
    expect(deps.io.stdout.text).toBe('');
    expect(deps.io.stderr.text).toContain('profile "default"');
    expect(deps.io.stderr.text).toContain(deps.config.path);
    expect(deps.io.stderr.text).toContain('https://ugs.example.com/prefix');
    expect(output(deps)).not.toContain(TOKEN);
  });

  // A token that cannot be sent is refused at login, nothing saved, the token never printed.
  it.each([
    ['a line break', 'tok-part-one\ntok-part-two'],
    ['a space or tab', 'tok-part-one tok-part-two'],
    ['a space or tab', 'tok-part-one\ttok-part-two'],
    ['a control character', 'tok-part-one\u001btok'],
    ['a control character', 'tok-part-one\u0085tok'],
    ['a space character', 'tok-part-one\u00a0tok'],
    ['a non-ASCII character', 'tok-part-oné'],
  ])('refuses a token with %s (exit 2, nothing saved)', async (what, token) => {
    const deps = makeDeps({
      io: makeIO({ stdinText: `${token}\n` }),
      profiles: {},
      settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
    });
    const error = await rejection(runLogin(withToken, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).exitCode).toBe(2);
    expect((error as UsageError).message).toContain(`contains ${what}`);
    expect((error as UsageError).message).toContain('nothing was saved');
    expect((error as UsageError).message).not.toContain('tok-part');
    expect(deps.config.writes).toBe(0);
    expect(deps.config.profiles).toEqual({});
    expect(output(deps)).not.toContain('tok-part');
  });

  it('saves --api-path (or UGS_API_PATH) with the profile; without it the saved one stays', async () => {
    const deps = makeDeps({
      io: makeIO({ stdinText: TOKEN }),
      profiles: {},
      settings: {
        baseUrl: 'https://ugs.example.com',
        baseUrlSource: 'flag',
        apiPath: '/api/user/',
        apiPathSource: 'flag',
      },
    });
    await runLogin(withToken, deps);
    expect(deps.config.profiles.default).toEqual({
      baseUrl: 'https://ugs.example.com',
      apiToken: TOKEN,
      apiPath: '/api/user/',
    });
    const again = makeDeps({
      io: makeIO({ stdinText: TOKEN }),
      profiles: { default: { baseUrl: 'https://ugs.example.com', apiPath: '/v2/user/' } },
    });
    await runLogin(withToken, again);
    expect(again.config.profiles.default?.apiPath).toBe('/v2/user/');
  });

  it('keeps the saved base URL when none is given', async () => {
    const deps = makeDeps({
      io: makeIO({ stdinText: TOKEN }),
      profiles: { default: { baseUrl: 'https://saved.example', apiToken: 'old-token-xxxx' } },
    });
    await runLogin(withToken, deps);
    expect(deps.config.profiles.default).toEqual({
      baseUrl: 'https://saved.example',
      apiToken: TOKEN,
    });
  });

  it('writes only the profile in use', async () => {
    const other = { baseUrl: 'https://prod.example', apiToken: 'prod-token-1111' };
    const deps = makeDeps({
      io: makeIO({ stdinText: TOKEN }),
      profiles: { default: other },
      settings: { profile: 'staging', baseUrl: 'https://staging.example', baseUrlSource: 'env' },
    });
    await runLogin(withToken, deps);
    expect(deps.config.profiles).toEqual({
      default: other,
      staging: { baseUrl: 'https://staging.example', apiToken: TOKEN },
    });
    expect(deps.io.stderr.text).toContain('profile "staging"');
  });

  it.each(['', '   \n\t\n'])(
    'an empty stdin (%j) is a usage error and nothing is saved',
    async (text) => {
      const deps = makeDeps({
        io: makeIO({ stdinText: text }),
        profiles: {},
        settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
      });
      const error = await rejection(runLogin(withToken, deps));
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect((error as Error).message).toMatch(/--with-token.*empty/);
      expect(deps.config.writes).toBe(0);
    },
  );

  it('a terminal on stdin is a usage error, not a hang', async () => {
    // stdin is a terminal that never ends: reading it would wait forever.
    const deps = makeDeps({
      io: makeIO({ stdinIsTTY: true }),
      profiles: {},
      settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
    });
    const error = await rejection(runLogin(withToken, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/stdin is a terminal/);
    expect(deps.config.writes).toBe(0);
  });

  it('on a full terminal, --with-token refuses stdin before asking anything', async () => {
    const prompter = new FakePrompter([]);
    const deps = withPrompter(makeDeps({ io: terminalIO(), profiles: {} }), prompter);
    const error = await rejection(runLogin(withToken, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toMatch(/stdin is a terminal/);
    expect(prompter.calls).toEqual([]);
    expect(deps.config.writes).toBe(0);
  });

  it('without a base URL anywhere it is a usage error naming --base-url', async () => {
    const deps = makeDeps({ io: makeIO({ stdinText: TOKEN }), profiles: {} });
    const error = await rejection(runLogin(withToken, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as Error).message).toContain('--base-url');
    expect(deps.config.writes).toBe(0);
  });

  it('without --with-token and without a terminal it refuses instead of prompting', async () => {
    const deps = makeDeps({
      io: makeIO({ stdinText: TOKEN }),
      profiles: {},
      settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
    });
    const error = await rejection(runLogin(prompted, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect((error as UsageError).hint).toContain('--with-token');
    expect(deps.prompter.asked).toEqual([]);
    expect(deps.config.writes).toBe(0);
  });

  it('warns when UGS_API_TOKEN is set, since it overrides the saved token', async () => {
    const deps = makeDeps({
      io: makeIO({ stdinText: TOKEN, env: { UGS_API_TOKEN: 'env-token-9999' } }),
      profiles: {},
      settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
    });
    await runLogin(withToken, deps);
    expect(deps.io.stderr.text).toMatch(/warning: UGS_API_TOKEN is set/);
    expect(deps.config.profiles.default?.apiToken).toBe(TOKEN);
    expect(output(deps)).not.toContain('env-token-9999');
  });

  it('does not warn when UGS_API_TOKEN is unset or empty', async () => {
    for (const env of [{}, { UGS_API_TOKEN: '' }]) {
      const deps = makeDeps({
        io: makeIO({ stdinText: TOKEN, env }),
        profiles: {},
        settings: { baseUrl: 'https://ugs.example.com', baseUrlSource: 'flag' },
      });
      await runLogin(withToken, deps);
      expect(deps.io.stderr.text).not.toMatch(/warning/);
    }
  });

  it.each<[string, boolean, string | null]>([
    ['http://ugs.example.com', false, null],
    ['http://10.0.0.5:8080', false, null],
    ['http://ugs.example.com', true, 'http://ugs.example.com'],
    ['http://localhost:8080/', false, 'http://localhost:8080'],
    ['http://127.0.0.1:9000/ugs', false, 'http://127.0.0.1:9000/ugs'],
    ['http://[::1]:8080', false, 'http://[::1]:8080'],
    ['https://ugs.example.com', false, 'https://ugs.example.com'],
    ['ftp://ugs.example.com', true, null],
    ['https://user:pw@ugs.example.com', false, null],
    ['ugs.example.com', false, null],
  ])('base URL %s (insecureHttp=%s) -> saved %s', async (url, insecureHttp, saved) => {
    const deps = makeDeps({
      io: makeIO({ stdinText: TOKEN }),
      profiles: {},
      settings: { baseUrl: url, baseUrlSource: 'flag', insecureHttp },
    });
    if (saved === null) {
      const error = await rejection(runLogin(withToken, deps));
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).exitCode).toBe(2);
      expect(deps.config.writes).toBe(0);
    } else {
      await runLogin(withToken, deps);
      expect(deps.config.profiles.default?.baseUrl).toBe(saved);
    }
  });

  it('an insecure base URL is refused before the token is read', async () => {
    const io = makeIO({ stdinText: TOKEN });
    const deps = makeDeps({
      io,
      profiles: {},
      settings: { baseUrl: 'http://ugs.example.com', baseUrlSource: 'flag' },
    });
    const error = await rejection(runLogin(withToken, deps));
    expect((error as Error).message).toMatch(/plain http/);
    expect(io.stdin.readableLength).toBeGreaterThan(0);
  });
});

describe('runLogin on a terminal', () => {
  it('prompts for the base URL (input) and the token (masked), and never prints the token', async () => {
    const prompter = new FakePrompter([
      ['input', 'Base URL', 'https://ugs.example.com/'],
      ['password', 'API token', `  ${TOKEN}  `],
    ]);
    const deps = withPrompter(makeDeps({ io: terminalIO(), profiles: {} }), prompter);
    await runLogin(prompted, deps);
    prompter.assertDone();
    expect(deps.config.profiles.default).toEqual({
      baseUrl: 'https://ugs.example.com',
      apiToken: TOKEN,
    });
    expect(output(deps)).not.toContain(TOKEN);
    expect(deps.io.stdout.text).toBe('');
    expect(deps.io.stderr.text).toContain('Logged in to https://ugs.example.com');
  });

  it('offers the saved base URL as the default', async () => {
    const prompter = new FakePrompter([
      ['input', 'Base URL', 'https://saved.example'],
      ['password', 'API token', TOKEN],
    ]);
    const deps = withPrompter(
      makeDeps({ io: terminalIO(), profiles: { default: { baseUrl: 'https://saved.example' } } }),
      prompter,
    );
    await runLogin(prompted, deps);
    expect(prompter.calls[0]?.default).toBe('https://saved.example');
  });

  it('checks the base URL and the token as they are typed', async () => {
    const prompter = new FakePrompter([
      ['input', 'Base URL', 'https://ugs.example.com'],
      ['password', 'API token', TOKEN],
    ]);
    const deps = withPrompter(makeDeps({ io: terminalIO(), profiles: {} }), prompter);
    await runLogin(prompted, deps);
    const [url, token] = prompter.calls;
    expect(url?.validate?.('http://ugs.example.com')).toMatch(/plain http/);
    expect(url?.validate?.('not a url')).toMatch(/invalid base URL/);
    expect(url?.validate?.('http://localhost:8080')).toBe(true);
    expect(token?.validate?.('   ')).toMatch(/required/);
    expect(token?.validate?.('x')).toBe(true);
    // A token that cannot go into the Authorization header is refused as typed.
    expect(token?.validate?.('abc def')).toMatch(/a space or tab at position 4/);
    expect(token?.validate?.('abc\u0000def')).toMatch(/control character/);
    expect(token?.validate?.('abcdéf')).toMatch(/non-ASCII/);
    expect(String(token?.validate?.('abc def'))).not.toContain('abc');
  });

  it('the base URL prompt accepts http to any host with --insecure-http', async () => {
    const prompter = new FakePrompter([
      ['input', 'Base URL', 'http://ugs.internal'],
      ['password', 'API token', TOKEN],
    ]);
    const deps = withPrompter(
      makeDeps({ io: terminalIO(), profiles: {}, settings: { insecureHttp: true } }),
      prompter,
    );
    await runLogin(prompted, deps);
    expect(deps.config.profiles.default?.baseUrl).toBe('http://ugs.internal');
  });

  it('does not ask for the base URL when --base-url is given', async () => {
    const prompter = new FakePrompter([['password', 'API token', TOKEN]]);
    const deps = withPrompter(
      makeDeps({
        io: terminalIO(),
        profiles: {},
        settings: { baseUrl: 'https://flag.example', baseUrlSource: 'flag' },
      }),
      prompter,
    );
    await runLogin(prompted, deps);
    prompter.assertDone();
    expect(deps.config.profiles.default?.baseUrl).toBe('https://flag.example');
  });

  it.each(['Base URL', 'API token'])(
    'Ctrl+C at the %s prompt is exit 130 and nothing is saved',
    async (at) => {
      const prompts: [string, string | Error][] =
        at === 'Base URL'
          ? [['Base URL', new CancelledError()]]
          : [
              ['Base URL', 'https://ugs.example.com'],
              ['API token', new CancelledError()],
            ];
      const deps = makeDeps({ io: terminalIO(), profiles: {}, prompts });
      const error = await rejection(runLogin(prompted, deps));
      expect(error).toBeInstanceOf(CancelledError);
      expect((error as CancelledError).exitCode).toBe(130);
      expect(deps.config.writes).toBe(0);
    },
  );

  it.each([
    ['CI', terminalIO({ env: { CI: '1' } }), false],
    ['--no-input', terminalIO(), true],
  ])('with %s it does not prompt: usage error', async (_l, io, noInput) => {
    const deps = makeDeps({ io, profiles: {}, settings: { noInput } });
    const error = await rejection(runLogin(prompted, deps));
    expect(error).toBeInstanceOf(UsageError);
    expect(deps.prompter.asked).toEqual([]);
    expect(deps.config.writes).toBe(0);
  });
});
