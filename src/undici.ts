/**
 * The two parts of undici that ugs uses: `request()` and the proxy-aware agent. The package's
 * index loads all of undici (fetch, WebSocket, caches, mocks), which takes about twice as long to
 * start as these files do; a CLI pays that on every run.
 */
import type { Socket } from 'node:net';
import type { Agent, buildConnector, Dispatcher, EnvHttpProxyAgent } from 'undici';

export interface Undici {
  request(
    dispatcher: Dispatcher,
    url: URL,
    options: RequestOptions,
  ): Promise<Dispatcher.ResponseData>;
  /** undici's proxy-aware agent: its code runs only when a proxy is configured. */
  loadProxyAgent(): Promise<typeof EnvHttpProxyAgent>;
  Agent: typeof Agent;
  buildConnector: typeof buildConnector;
}

export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

const urlParts = new WeakMap<URL, { origin: string; path: string }>();

export async function loadUndici(): Promise<Undici> {
  // bin/ugs.js sets V8's --liftoff-only for the commands that send one request: a library loader
  // changes no process-wide setting.
  const { request, Agent, buildConnector, loadProxyAgent } = await import('./vendor/undici.js');
  return {
    request: (dispatcher, url, options) => {
      // URL getters build new strings on each read: a bulk run asks thousands of times.
      let parts = urlParts.get(url);
      if (parts === undefined) {
        parts = { origin: url.origin, path: `${url.pathname}${url.search}` };
        urlParts.set(url, parts);
      }
      // `options` is the caller's object, made for this one request: completed in place, as a
      // copy per request costs a bulk run.
      return request.call(dispatcher, Object.assign(options, parts));
    },
    loadProxyAgent: async () => {
      const { connect, Dispatcher, EnvHttpProxyAgent } = await loadProxyAgent();
      // The proxy agent opens its tunnel with `dispatcher.connect()`, a method undici's index
      // adds to every dispatcher: without it every request through HTTP(S)_PROXY fails.
      Dispatcher.prototype.connect ??= connect;
      return EnvHttpProxyAgent;
    },
    Agent,
    buildConnector,
  };
}

/**
 * A connector for direct connections that tolerates an unsolicited `100 Continue` before the
 * real answer (RFC 9110 lets a server send one; ugs never asks for it). undici destroys the
 * connection on any 100 ("bad response"), which for a rotation would read as "outcome unknown".
 * Connections through a proxy tunnel are made by undici's proxy agent and are not covered.
 */
export function continueTolerantConnector(
  undici: Undici,
  options: { ca?: string[] | undefined },
): buildConnector.connector {
  const connector = undici.buildConnector({
    ...(options.ca === undefined ? {} : { ca: options.ca }),
    // Never Node's default, which NODE_TLS_REJECT_UNAUTHORIZED=0 turns off (see http.ts).
    rejectUnauthorized: true,
    // undici's own default for a connector it builds itself.
    timeout: 10_000,
  });
  return (connectOptions, callback) => {
    connector(connectOptions, (...args) => {
      const [error, socket] = args;
      if (error === null && socket !== null) skipInterimContinue(socket);
      callback(...args);
    });
  };
}

const CONTINUE_LINE = /^HTTP\/1\.[01] 100[ \r]/;

/**
 * undici reads the socket with `read()`: interim `100` answers are taken off the front of what it
 * reads. Only where one is sure to be one: a whole `100` block that fills the chunk, or one
 * followed at once by the real status line (a body that happened to start with these bytes at a
 * chunk boundary would need to match both). A chunk never spans two answers here: ugs waits for
 * each answer before sending again.
 */
function skipInterimContinue(socket: Socket): void {
  const read = socket.read.bind(socket);
  socket.read = (size?: number) => {
    const chunk: unknown = read(size);
    return Buffer.isBuffer(chunk) ? stripInterimContinue(chunk) : chunk;
  };
}

export function stripInterimContinue(chunk: Buffer): Buffer {
  let rest = chunk;
  for (;;) {
    if (!CONTINUE_LINE.test(rest.subarray(0, 16).toString('latin1'))) return rest;
    const end = rest.indexOf('\r\n\r\n');
    if (end === -1) return rest;
    const after = rest.subarray(end + 4);
    if (after.length > 0 && !after.subarray(0, 7).toString('latin1').startsWith('HTTP/1.')) {
      return rest;
    }
    rest = after;
  }
}
