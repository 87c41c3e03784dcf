/**
 * A canary for the undici internals that src/vendor/undici.ts reaches into. undici has no exports
 * map, so `undici/lib/...` files are not a public API: they have moved inside a major version
 * before (6.7.0). The version is pinned exactly in package.json; these tests fail on an update
 * that moves a file, changes what it exports, or stops the proxy agent working without undici's
 * index, and say what to check.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadUndici } from '../../src/transport/undici.js';
import { json, startProxy, startServer, type TestProxy, type TestServer } from '../kit/index.js';

const root = new URL('../../', import.meta.url);
const require = createRequire(root);

const WHAT_TO_CHECK =
  'ugs imports internal files of undici, which a release may move or change. Compare ' +
  'src/vendor/undici.ts and src/transport/undici-modules.d.ts with node_modules/undici/lib and ' +
  "undici's index.js (what it requires, what it assigns to Dispatcher.prototype), fix them, " +
  'then pin the new version exactly (npm install --save-exact undici@<version>).';

/** src/vendor/undici.ts, imported here so that a file it cannot find fails one test, with a hint. */
async function loadVendor(): Promise<
  typeof import('../../src/vendor/undici.js') & typeof import('../../src/vendor/undici-proxy.js')
> {
  try {
    const vendor = await import('../../src/vendor/undici.js');
    return { ...vendor, ...(await vendor.loadProxyAgent()) };
  } catch (error) {
    return expect.fail(`src/vendor/undici.ts does not load (${String(error)}). ${WHAT_TO_CHECK}`);
  }
}

function readJson(relative: string): unknown {
  return JSON.parse(readFileSync(new URL(relative, root), 'utf8'));
}

function field(value: unknown, ...path: string[]): unknown {
  let current = value;
  for (const key of path) {
    if (typeof current !== 'object' || current === null) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

/** The `undici/lib/...` specifiers a source file names in `from '...'` or `declare module '...'`. */
function undiciLibSpecifiers(relative: string): string[] {
  const text = readFileSync(new URL(relative, root), 'utf8');
  return [...text.matchAll(/['"](undici\/lib\/[^'"]+)['"]/g)].map((match) => match[1] ?? '').sort();
}

describe('the undici version', () => {
  // A devDependency: dist/ bundles it, so the npm package installs none (test/install).
  const pinned = field(readJson('package.json'), 'devDependencies', 'undici');

  it('is pinned exactly in package.json, as in the lock file', () => {
    const pinMessage =
      'undici must stay pinned to an exact version: ugs imports its internal files, which a ' +
      'minor or patch release may move. Update it on purpose with ' +
      'npm install --save-exact undici@<version>, and let this canary check it.';
    expect(pinned, pinMessage).toMatch(/^\d+\.\d+\.\d+$/);
    const lock = readJson('package-lock.json');
    expect(field(lock, 'packages', '', 'devDependencies', 'undici'), pinMessage).toBe(pinned);
    expect(field(lock, 'packages', 'node_modules/undici', 'version'), pinMessage).toBe(pinned);
  });

  it('installed is the pinned one', () => {
    const installed = field(readJson('node_modules/undici/package.json'), 'version');
    expect(
      installed,
      `node_modules holds undici ${String(installed)} but package.json pins ${String(pinned)}: ` +
        'run npm ci. If you updated undici on purpose, pin the new version exactly. ' +
        WHAT_TO_CHECK,
    ).toBe(pinned);
  });
});

describe('the undici internals ugs imports', () => {
  const imported = [
    ...undiciLibSpecifiers('src/vendor/undici.ts'),
    ...undiciLibSpecifiers('src/vendor/undici-proxy.ts'),
  ].sort();

  it('are the files the type declarations describe', () => {
    expect(
      imported.length,
      'src/vendor/undici.ts no longer imports undici/lib/...',
    ).toBeGreaterThan(0);
    expect(
      undiciLibSpecifiers('src/transport/undici-modules.d.ts'),
      'src/transport/undici-modules.d.ts must declare exactly the undici files src/vendor/undici.ts and undici-proxy.ts import',
    ).toEqual(imported);
  });

  it('each resolves to a file of the installed undici', () => {
    for (const specifier of imported) {
      let resolved = '';
      try {
        resolved = require.resolve(specifier);
      } catch (error) {
        expect.fail(`${specifier} does not resolve (${String(error)}). ${WHAT_TO_CHECK}`);
      }
      expect(resolved, `${specifier} resolved outside node_modules/undici`).toContain(
        '/node_modules/undici/lib/',
      );
    }
  });

  it('export what src/transport/undici.ts uses, with the shape it expects', async () => {
    const { Agent, connect, Dispatcher, EnvHttpProxyAgent, headerNameToString } =
      await loadVendor();
    // Answer headers are named through undici's table of well-known names.
    for (const [raw, name] of [
      ['Content-Type', 'content-type'],
      ['RETRY-AFTER', 'retry-after'],
      ['X-Unknown-To-Undici', 'x-unknown-to-undici'],
    ]) {
      expect(
        headerNameToString(Buffer.from(raw ?? '', 'latin1')),
        `headerNameToString no longer lower-cases header names. ${WHAT_TO_CHECK}`,
      ).toBe(name);
    }
    // src/transport/undici.ts sends through `dispatch()` with a handler of the shape undici's own
    // request() uses (onConnect, onHeaders, onData, onComplete, onError).
    expect(
      typeof Agent.prototype.dispatch,
      `Agent has no dispatch() any more. ${WHAT_TO_CHECK}`,
    ).toBe('function');
    const requestSource = readFileSync(require.resolve('undici/lib/api/api-request.js'), 'utf8');
    for (const method of ['onConnect', 'onHeaders', 'onData', 'onComplete', 'onError']) {
      expect(
        requestSource,
        `undici's request() no longer implements ${method}: the handler interface of src/transport/undici.ts may be gone. ${WHAT_TO_CHECK}`,
      ).toMatch(new RegExp(`\\n  ${method} \\(`));
    }
    expect(typeof connect, `connect() is no longer a function. ${WHAT_TO_CHECK}`).toBe('function');
    expect(typeof Dispatcher, `Dispatcher is no longer a class. ${WHAT_TO_CHECK}`).toBe('function');
    expect(
      EnvHttpProxyAgent.prototype instanceof Dispatcher,
      `EnvHttpProxyAgent is no longer a Dispatcher subclass. ${WHAT_TO_CHECK}`,
    ).toBe(true);
    // The same function undici's index installs on every dispatcher: if it differs, the index
    // now takes connect from somewhere else and the vendored path is stale.
    const api = require('undici/lib/api/index.js') as Record<string, unknown>;
    expect(api.connect, `undici/lib/api no longer exports this connect(). ${WHAT_TO_CHECK}`).toBe(
      connect,
    );
  });

  it('give every method the proxy agent calls on its client once loadUndici() has run', async () => {
    const { Dispatcher } = await loadVendor();
    await (await loadUndici()).loadProxyAgent();
    // ProxyAgent talks to the proxy through `this[kClient].<method>(...)`: undici's index adds
    // some of those methods (connect) to Dispatcher.prototype, and ugs does not load the index.
    const proxyAgentSource = readFileSync(
      require.resolve('undici/lib/dispatcher/proxy-agent.js'),
      'utf8',
    );
    const called = new Set(
      [...proxyAgentSource.matchAll(/this\[kClient\]\.(\w+)\(/g)].map((match) => match[1] ?? ''),
    );
    expect(called.has('connect'), `ProxyAgent no longer calls connect(). ${WHAT_TO_CHECK}`).toBe(
      true,
    );
    const prototype = Dispatcher.prototype as unknown as Record<string, unknown>;
    for (const method of called) {
      expect(
        typeof prototype[method],
        `ProxyAgent calls ${method}() on its client, which Dispatcher.prototype lacks without ` +
          `undici's index: install it in loadUndici() (src/transport/undici.ts). ${WHAT_TO_CHECK}`,
      ).toBe('function');
    }
  });
});

describe('a request through a proxy with only the vendored files', () => {
  let target: TestServer;
  let proxy: TestProxy;

  beforeAll(async () => {
    target = await startServer(json(200, { through: 'proxy' }));
    proxy = await startProxy('tunnel');
  });

  afterAll(async () => {
    await Promise.all([target.close(), proxy.close()]);
  });

  it('tunnels with CONNECT and gets the answer', async () => {
    const { exchange, loadProxyAgent } = await loadUndici();
    const EnvHttpProxyAgent = await loadProxyAgent();
    const targetPort = target.port;
    const agent = new EnvHttpProxyAgent({
      httpProxy: proxy.url,
      noProxy: '',
    });
    try {
      const response = await exchange(agent, new URL(`http://127.0.0.1:${targetPort}/api/user/`), {
        method: 'GET',
        headers: {},
        body: undefined,
        reset: undefined,
        timeoutMs: 5_000,
        maxBytes: 1024 * 1024,
      }).catch((error: unknown) =>
        expect.fail(`a request through the proxy failed (${String(error)}). ${WHAT_TO_CHECK}`),
      );
      expect(response.status).toBe(200);
      expect(JSON.parse(Buffer.concat(response.chunks).toString('utf8'))).toEqual({
        through: 'proxy',
      });
      expect(proxy.connects, 'the request did not go through the proxy').toEqual([
        `127.0.0.1:${targetPort}`,
      ]);
    } finally {
      await agent.destroy();
    }
  });
});
