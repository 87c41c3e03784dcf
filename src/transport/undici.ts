/**
 * The parts of undici that ugs uses: its agent (dispatch() with a handler of ours, `exchange`),
 * its connector, its header-name table and the proxy-aware agent. The package's index loads all
 * of undici (fetch, WebSocket, caches, mocks), which takes about twice as long to start as these
 * files do; a CLI pays that on every run.
 */
import type { Socket } from 'node:net';
import type { Agent, buildConnector, Dispatcher, EnvHttpProxyAgent } from 'undici';

export interface Undici {
  /**
   * One request and its whole answer, through `dispatcher.dispatch()` with a handler of ours:
   * undici's `request()` makes an AsyncResource, a Readable body stream and its events per answer,
   * about a tenth of a bulk run's CPU time for bodies of a few hundred bytes.
   */
  exchange(dispatcher: Dispatcher, url: URL, options: ExchangeOptions): Promise<RawAnswer>;
  /** undici's proxy-aware agent: its code runs only when a proxy is configured. */
  loadProxyAgent(): Promise<typeof EnvHttpProxyAgent>;
  Agent: typeof Agent;
  buildConnector: typeof buildConnector;
}

export interface ExchangeOptions {
  method: Dispatcher.HttpMethod;
  headers: Readonly<Record<string, string>>;
  body: string | undefined;
  /** false: keep the connection after a GET with a body (undici closes it by default). */
  reset: boolean | undefined;
  /**
   * One deadline from dispatch to the last byte: undici's own timeouts tick coarsely and each
   * covers one phase only. A timer of the handler's, cleared with the answer.
   */
  timeoutMs: number;
  /** Past this many body bytes the request is aborted (`tooLarge`). */
  maxBytes: number;
}

/** An answer as it came: status, headers (names in lower case, repeats joined), body bytes. */
export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  chunks: Buffer[];
}

/**
 * Why an exchange failed: `cause` as undici gave it, and `status` once the answer had begun (its
 * status line and headers read: the request was delivered, and the body broke off).
 */
export class ExchangeFailure extends Error {
  constructor(
    override readonly cause: unknown,
    readonly tooLarge: boolean,
    readonly status: number | undefined,
    /** The deadline passed (the cause is then undici's report of the abort). */
    readonly timedOut: boolean,
  ) {
    super(cause instanceof Error ? cause.message : String(cause));
    this.name = 'ExchangeFailure';
  }
}

const urlParts = new WeakMap<URL, { origin: string; path: string }>();

/** The origin and path of a URL, read once: URL getters build new strings on each read. */
function partsOf(url: URL): { origin: string; path: string } {
  let parts = urlParts.get(url);
  if (parts === undefined) {
    parts = { origin: url.origin, path: `${url.pathname}${url.search}` };
    urlParts.set(url, parts);
  }
  return parts;
}

/**
 * undici's handler interface as `request()` itself uses it (onConnect, onHeaders, onData,
 * onComplete, onError): dispatch then calls it directly, with no wrapper in between.
 */
class AnswerHandler {
  private abortRequest: ((error: Error) => void) | undefined;
  private status: number | undefined;
  private headers: Record<string, string> | undefined;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private tooLarge = false;
  private timedOut = false;
  private settled = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    timeoutMs: number,
    private readonly maxBytes: number,
    private readonly nameOf: (name: Buffer) => string,
    private readonly resolve: (answer: RawAnswer) => void,
    private readonly reject: (failure: ExchangeFailure) => void,
  ) {
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.abortRequest?.(new Error('the deadline passed'));
    }, timeoutMs);
  }

  onConnect(abort: (error: Error) => void): void {
    // A request that waited for a connection past its deadline is not sent at all.
    if (this.timedOut) abort(new Error('the deadline passed'));
    else this.abortRequest = abort;
  }

  onHeaders(status: number, rawHeaders: Buffer[]): boolean {
    // An interim answer (1xx) is not the answer; the real one follows on the same request.
    if (status < 200) return true;
    this.status = status;
    this.headers = headersOf(rawHeaders, this.nameOf);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.tooLarge) return false;
    this.size += chunk.length;
    if (this.size > this.maxBytes) {
      this.tooLarge = true;
      this.abortRequest?.(new Error('the answer is too large'));
      return false;
    }
    this.chunks.push(chunk);
    return true;
  }

  onComplete(): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    if (this.status === undefined || this.headers === undefined) {
      this.reject(this.failure(new Error('an answer without a status')));
      return;
    }
    this.resolve({ status: this.status, headers: this.headers, chunks: this.chunks });
  }

  onError(error: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.reject(this.failure(error));
  }

  private failure(cause: Error): ExchangeFailure {
    return new ExchangeFailure(cause, this.tooLarge, this.status, this.timedOut);
  }
}

/**
 * Header lines as one object: names in lower case, values as latin1 (as undici reads them), a
 * repeated header's values joined with ", " (RFC 9110's combined field value).
 */
function headersOf(raw: Buffer[], nameOf: (name: Buffer) => string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = nameOf(raw[i] as Buffer);
    const value = (raw[i + 1] as Buffer).toString('latin1');
    if (name === '__proto__') {
      // (assigning it would set the object's prototype instead)
      const joined = Object.hasOwn(headers, name) ? `${headers[name]}, ${value}` : value;
      Object.defineProperty(headers, name, {
        value: joined,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else if (Object.hasOwn(headers, name)) headers[name] = `${headers[name]}, ${value}`;
    else headers[name] = value;
  }
  return headers;
}

export async function loadUndici(): Promise<Undici> {
  // bin/ugs.js sets V8's --liftoff-only for the commands that send one request: a library loader
  // changes no process-wide setting.
  const { Agent, buildConnector, headerNameToString, loadProxyAgent } = await import(
    '../vendor/undici.js'
  );
  return {
    exchange: (dispatcher, url, options) =>
      new Promise((resolve, reject) => {
        const { origin, path } = partsOf(url);
        dispatcher.dispatch(
          {
            origin,
            path,
            method: options.method,
            headers: options.headers,
            body: options.body,
            ...(options.reset !== undefined && { reset: options.reset }),
          },
          new AnswerHandler(
            options.timeoutMs,
            options.maxBytes,
            headerNameToString,
            resolve,
            reject,
          ) as unknown as Dispatcher.DispatchHandler,
        );
      }),
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
    // "HTTP/1.x 100" has 1, 0, 0 at 9 to 11: every other answer is passed on without a string
    // made of it (this runs on every read of every connection).
    if (rest.length < 13 || rest[9] !== 0x31 || rest[10] !== 0x30 || rest[11] !== 0x30) {
      return rest;
    }
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
