import { describe, expect, it } from 'vitest';
import { localUrl, runServe, type ServeOptions } from '../../src/commands/serve.js';
import type { EmulatorOptions, RunningEmulator } from '../../src/emulator/server.js';
import { makeIO } from '../kit/fakes.js';
import { runMain } from '../kit/main.js';

const options: ServeOptions = {
  host: '127.0.0.1',
  port: 0,
  dataFile: undefined,
  apiTokens: [],
  faults: [],
  seed: undefined,
  json: false,
  log: false,
  trailingSlash: false,
  dialect: 'interface',
  rateLimit: undefined,
};

const running: RunningEmulator = {
  url: 'http://127.0.0.1:4567',
  apiTokens: [
    { token: 'c0ffee-customer', environment: 'Customer' },
    { token: 'beef-testing', environment: 'Testing' },
  ],
  close: () => Promise.resolve(),
};

async function serve(opts: ServeOptions) {
  const io = makeIO();
  const started: EmulatorOptions[] = [];
  await runServe(opts, {
    io,
    startEmulator: (o) => {
      started.push(o);
      return Promise.resolve(running);
    },
    system: { waitForShutdown: () => Promise.resolve('SIGTERM') },
  });
  return { io, started };
}

describe('ugs serve signals', () => {
  it('listens for SIGINT/SIGTERM before it prints the banner a script waits for', async () => {
    const io = makeIO();
    let printedWhenListening: string | undefined;
    await runServe(options, {
      io,
      startEmulator: () => Promise.resolve(running),
      system: {
        waitForShutdown: () => {
          printedWhenListening = io.stdout.text;
          return Promise.resolve('SIGTERM');
        },
      },
    });
    expect(printedWhenListening).toBe('');
    expect(io.stdout.text).toContain('listening on');
  });
});

describe('ugs serve banner', () => {
  it('prints the URL, one API token per line, and the next step', async () => {
    const { io } = await serve(options);
    const lines = io.stdout.text.split('\n');
    expect(lines[0]).toBe('ugs emulator listening on http://127.0.0.1:4567');
    // Each token alone on its line, after its environment: nothing else to select.
    expect(lines).toContain('  Customer  c0ffee-customer');
    expect(lines).toContain('  Testing  beef-testing');
    expect(io.stdout.text).toContain('ugs login --base-url http://127.0.0.1:4567');
    expect(io.stdout.text.indexOf('ugs login')).toBeGreaterThan(io.stdout.text.indexOf('beef'));
  });

  it('keeps --json to one line of JSON', async () => {
    const { io } = await serve({ ...options, json: true });
    expect(io.stdout.text.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(io.stdout.text)).toEqual({ url: running.url, apiTokens: running.apiTokens });
  });

  it('passes --trailing-slash to the emulator', async () => {
    const { started } = await serve({ ...options, trailingSlash: true });
    expect(started[0]?.trailingSlash).toBe(true);
  });
});

describe('ugs serve on every interface', () => {
  // A wildcard is where the emulator listens, not an address to connect to (Windows refuses
  // it, and `ugs login` takes it for a remote host that needs --insecure-http).
  it.each([
    ['0.0.0.0', 'http://0.0.0.0:4567', 'http://127.0.0.1:4567'],
    ['::', 'http://[::]:4567', 'http://[::1]:4567'],
  ])('--host %s prints a next step with a loopback address', async (host, url, local) => {
    const io = makeIO();
    await runServe(
      { ...options, host },
      {
        io,
        startEmulator: () => Promise.resolve({ ...running, url }),
        system: { waitForShutdown: () => Promise.resolve('SIGTERM') },
      },
    );
    const lines = io.stdout.text.split('\n');
    expect(lines[0]).toBe(
      `ugs emulator listening on ${url} (every interface; from this machine: ${local})`,
    );
    expect(lines).toContain(`Next: ugs login --base-url ${local}   (paste one of the tokens)`);
  });

  it('--json gives the loopback URL to connect to, and where it listens', async () => {
    const io = makeIO();
    await runServe(
      { ...options, host: '0.0.0.0', json: true },
      {
        io,
        startEmulator: () => Promise.resolve({ ...running, url: 'http://0.0.0.0:4567' }),
        system: { waitForShutdown: () => Promise.resolve('SIGTERM') },
      },
    );
    expect(JSON.parse(io.stdout.text)).toEqual({
      url: 'http://127.0.0.1:4567',
      listening: 'http://0.0.0.0:4567',
      apiTokens: running.apiTokens,
    });
  });

  it.each([
    'http://127.0.0.1:4567',
    'http://[::1]:4567',
    'http://10.1.2.3:4567',
    'http://[fe80::1]:4567',
  ])('keeps a specific address %s as it is', (url) => {
    expect(localUrl(url)).toBe(url);
  });
});

describe('ugs serve read-only API tokens', () => {
  it('--api-token KEY:ENV:ro is passed as read-only; :rw and no suffix read-write', async () => {
    const { started } = await serve({
      ...options,
      apiTokens: ['ro-key-1:Customer:ro', 'rw-key-2:Testing:rw', 'plain-3:Customer'],
    });
    expect(started[0]?.apiTokens).toEqual([
      { token: 'ro-key-1', environment: 'Customer', readOnly: true },
      { token: 'rw-key-2', environment: 'Testing' },
      { token: 'plain-3', environment: 'Customer' },
    ]);
  });

  it('says which tokens are read-only in the listing and in --json', async () => {
    const withReadOnly: RunningEmulator = {
      ...running,
      apiTokens: [
        ...running.apiTokens,
        { token: 'ro-key', environment: 'Customer', readOnly: true },
      ],
    };
    const start = (json: boolean) => {
      const io = makeIO();
      return runServe(
        { ...options, json },
        {
          io,
          startEmulator: () => Promise.resolve(withReadOnly),
          system: { waitForShutdown: () => Promise.resolve('SIGTERM') },
        },
      ).then(() => io.stdout.text);
    };
    const lines = (await start(false)).split('\n');
    expect(lines).toContain('  Customer  c0ffee-customer');
    expect(lines).toContain('  Customer  read-only  ro-key');
    expect(JSON.parse(await start(true)).apiTokens).toContainEqual({
      token: 'ro-key',
      environment: 'Customer',
      readOnly: true,
    });
  });

  it('refuses another access suffix as a usage error naming --api-token, never the token', async () => {
    const result = await runMain(['serve', '--port', '0', '--api-token', 'sekret-key:Testing:wo']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--api-token');
    expect(result.stderr).toContain('access "wo" must be ro (read-only) or rw (read-write)');
    expect(result.stderr).not.toContain('sekret-key');
  });

  it('--help says that :ro makes a token read-only', async () => {
    const result = await runMain(['serve', '--help']);
    expect(result.stdout).toMatch(/--api-token <token:environment\[:ro\]>/);
    expect(result.stdout).toMatch(/read-only/);
  });
});
