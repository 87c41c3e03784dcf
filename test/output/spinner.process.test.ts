/**
 * The spinner a person sees at a terminal while a request is slow: shown after 300 ms with what
 * is happening, erased before the output, and never where nobody watches it (a pipe, CI,
 * `--json`), nor when the answer is quick. The binary runs on a real pty; the kit's
 * scripted server decides how long the answer takes.
 */
import { describe, expect, it, type TestContext } from 'vitest';
import {
  acmeBody,
  delay,
  describeRun,
  json,
  makeSandbox,
  type PtySession,
  runUgs,
  stall,
  startPty,
  startServer,
  type TestServer,
} from '../kit/index.js';

const API_TOKEN = 'api-token-spinner-0001';
const GET = ['get', '--id', 'acme', '--name', 'Acme Corp'];
// yocto-spinner erases its line with "cursor to column 1" then "erase to end of line".
const ERASE = '\u001b[1G\u001b[0K';

// The tests run side by side (describe.concurrent): each waits on its server's scripted delay,
// and each has its own server and pty, closed through its own test context (a global
// afterEach or killAllPtys would reach the other tests' sessions).
type Ctx = Pick<TestContext, 'onTestFinished'>;

async function serve(
  context: Ctx,
  ...replies: Parameters<typeof startServer>
): Promise<TestServer> {
  const server = await startServer(...replies);
  context.onTestFinished(() => server.close());
  return server;
}

function ptyFor(
  context: Ctx,
  server: TestServer,
  args: readonly string[],
  env: Record<string, string> = {},
): PtySession {
  const session = startPty(makeSandbox(), args, {
    env: { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: server.url, ...env },
  });
  context.onTestFinished(() => session.kill());
  return session;
}

async function atTerminal(
  context: Ctx,
  server: TestServer,
  args: readonly string[],
  env: Record<string, string> = {},
): Promise<PtySession> {
  const session = ptyFor(context, server, args, env);
  const { code } = await session.finish();
  expect(code, session.text()).toBe(0);
  return session;
}

describe.concurrent('spinner at a terminal', () => {
  it('a slow answer shows what is happening, erased before the table', async (context) => {
    const server = await serve(context, delay(1_500, json(200, acmeBody())));
    const session = await atTerminal(context, server, GET);
    const raw = session.raw;
    const shown = raw.lastIndexOf('Creating or finding acme...');
    const table = raw.indexOf('Found user group acme');
    expect(shown, JSON.stringify(raw)).toBeGreaterThanOrEqual(0);
    expect(table).toBeGreaterThan(shown);
    // Erased between its last drawing and the first line of output, and the cursor shown again.
    const between = raw.slice(shown, table);
    expect(between).toContain(ERASE);
    expect(between).toContain('\u001b[?25h');
    expect(raw.slice(table)).not.toContain('Creating or finding');
    // It spun: more than one frame was drawn in 1.5 s.
    expect(raw.split('Creating or finding acme...').length - 1).toBeGreaterThan(2);
  });

  it('a retry says why it waits: "Rate limited, retrying in 1 s..."', async (context) => {
    // The shortest wait the header can ask for: the message, not the length, is the point.
    const server = await serve(
      context,
      json(429, { success: 0, detail: 'Request was throttled.' }, { 'retry-after': '1' }),
      json(200, acmeBody()),
    );
    const session = await atTerminal(context, server, GET);
    const raw = session.raw;
    const waiting = raw.indexOf('Rate limited, retrying in 1 s...');
    expect(waiting, JSON.stringify(raw)).toBeGreaterThanOrEqual(0);
    expect(raw.indexOf('Found user group acme')).toBeGreaterThan(waiting);
    expect(server.requests).toHaveLength(2);
  });

  it('a rotation that is slow says which token it is rotating', async (context) => {
    const server = await serve(
      context,
      delay(
        1_000,
        json(200, { success: 1, user_group: { token: 'n'.repeat(64), provided_id: 'acme' } }),
      ),
    );
    const session = await atTerminal(context, server, [
      'rotate',
      '--current-token',
      'old-token-wxyz',
      '--yes',
    ]);
    const raw = session.raw;
    const shown = raw.lastIndexOf('Rotating the token ending in …wxyz...');
    expect(shown, JSON.stringify(raw)).toBeGreaterThanOrEqual(0);
    expect(raw.indexOf('Rotated token of user group acme')).toBeGreaterThan(shown);
    expect(raw).not.toContain('old-token-wxyz');
  });

  it('--no-color: the spinner draws no colour', async (context) => {
    const server = await serve(context, delay(1_000, json(200, acmeBody())));
    const session = await atTerminal(context, server, [...GET, '--no-color']);
    expect(session.raw).toContain('Creating or finding acme...');
    for (const colour of [30, 31, 32, 33, 34, 35, 36, 37, 90]) {
      expect(session.raw).not.toContain(`\u001b[${colour}m`);
    }
  });

  it('Ctrl+C while it spins: erased and the cursor shown again before the error line', async (context) => {
    const server = await serve(context, stall());
    const session = ptyFor(context, server, GET);
    await session.waitFor('Creating or finding acme...');
    await session.type('\u0003');
    const { code } = await session.finish();
    expect(code, session.text()).toBe(130);
    const raw = session.raw;
    const error = raw.indexOf('interrupted by SIGINT');
    expect(error, JSON.stringify(raw)).toBeGreaterThan(0);
    const beforeError = raw.slice(raw.lastIndexOf('Creating or finding acme...'), error);
    expect(beforeError).toContain(ERASE);
    expect(beforeError).toContain('\u001b[?25h');
    expect(raw.slice(error)).not.toContain('Creating or finding');
  });

  // On its own (it.sequential): a quick answer must come within the 300 ms before the spinner
  // shows, which other ptys starting at the same moment could delay on two cores.
  it.sequential('a quick answer shows no spinner at all', async (context) => {
    const server = await serve(context, json(200, acmeBody()));
    const session = await atTerminal(context, server, GET);
    expect(session.text()).toContain('Found user group acme');
    expect(session.raw).not.toContain('Creating or finding');
    expect(session.raw).not.toContain('\u001b[?25l');
  });

  it.for<[string, readonly string[], Record<string, string>]>([
    ['CI is set', GET, { CI: 'true' }],
    ['--json', [...GET, '--json'], {}],
    ['--debug', [...GET, '--debug'], {}],
    ['TERM=dumb', GET, { TERM: 'dumb' }],
  ])('none when %s, however slow', async ([, args, env], context) => {
    const server = await serve(context, delay(800, json(200, acmeBody())));
    const session = await atTerminal(context, server, args, env);
    expect(session.raw).not.toContain('Creating or finding');
    expect(session.raw).not.toContain('\u001b[?25l');
  });
});

describe.concurrent('spinner in a pipe', () => {
  it('none on stderr, however slow', async (context) => {
    const server = await serve(context, delay(800, json(200, acmeBody())));
    const result = await runUgs(GET, {
      env: { UGS_API_TOKEN: API_TOKEN, UGS_BASE_URL: server.url },
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).not.toContain('Creating or finding');
    expect(result.stderr).not.toContain('\u001b');
    expect(result.stdout).toContain('acme');
  });
});
