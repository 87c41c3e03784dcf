/**
 * The transport: one keep-alive undici dispatcher (proxy-aware), a whole-request deadline, bounded
 * response bodies, and retries that never repeat a request that may already have changed
 * something. It knows HTTP, not the service: operations, paths and JSON shapes live in `operations/` and
 * `service.ts`.
 *
 * undici's `request()` is used rather than `fetch()`, which refuses a GET with a body; the Get
 * User operation sends its parameters in exactly such a body.
 */
import { basename } from 'node:path';
import type { Dispatcher } from 'undici';
import { ApiError, NetworkError, UsageError } from '../errors.js';
import { isLoopbackHost, proxyVariable } from '../input/parse.js';
import { silentTracer, type Tracer } from '../output/debug.js';
import { errorCodeInChain, isNotTlsCode } from '../platform/guards.js';
import {
  type Env,
  FileTooLargeError,
  formatBytes,
  readFileCapped,
  stripBom,
} from '../platform/io.js';
import { message } from '../text/message.js';
import {
  continueTolerantConnector,
  ExchangeFailure,
  loadUndici,
  type RawAnswer,
  type Undici,
} from './undici.js';

/**
 * The one method type: operations, the transport and the emulator's routes all use it, so an
 * operation with another method changes none of them.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface HttpRequest {
  method: HttpMethod;
  url: URL;
  headers: Record<string, string>;
  body: string;
}

export interface HttpResponse {
  status: number;
  headers: Record<string, string>;
  /** The body as text, a UTF-8 BOM removed. */
  text: string;
}

export interface RetryPolicy {
  /** Attempts after the first. */
  maxRetries: number;
  /** Statuses that mean "nothing was done, ask again". */
  retryStatuses: ReadonlySet<number>;
  /** Connection errors (by code) that happened before any answer and may be retried. */
  retryErrorCodes: ReadonlySet<string>;
}

/**
 * For a request that is safe to send again (a read, a get-or-create by id): a lost answer, a
 * gateway's 502-504 or a 429 is retried twice; nothing a second send could do twice.
 */
export const REPEATABLE_RETRY: RetryPolicy = {
  maxRetries: 2,
  retryStatuses: new Set([429, 502, 503, 504]),
  retryErrorCodes: new Set([
    'ECONNREFUSED',
    'ECONNRESET',
    'EPIPE',
    'UND_ERR_SOCKET',
    'UND_ERR_CONNECT_TIMEOUT',
    'EAI_AGAIN',
    'ETIMEDOUT',
  ]),
};

const MAX_RESPONSE_BYTES = 1024 * 1024;
/** One cap for every wait a server asks for, single requests and bulk runs alike. */
export const MAX_RETRY_AFTER_MS = 30_000;
const BACKOFF_BASE_MS = 300;

/**
 * Errors that prove the request never reached the server: the connection or TLS handshake failed.
 * Anything else after sending (reset, timeout) leaves the outcome unknown.
 */
const NOT_DELIVERED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  // undici refused to build the request (a header it will not send): nothing left the machine.
  'UND_ERR_INVALID_ARG',
]);

export interface HttpClientOptions {
  timeoutMs: number;
  env: Env;
  caFile?: string | undefined;
  tracer?: Tracer;
  maxResponseBytes?: number;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /**
   * Bulk runs: keep connections open after a GET with a body (the emulator and the service read
   * that body), so thousands of rows share a few connections instead of one each.
   */
  reuseConnections?: boolean;
  /** Statuses returned at once, never retried here: the bulk scheduler slows the whole run instead. */
  passStatuses?: ReadonlySet<number>;
  /**
   * The most connections to one host. Unbounded by default; a bulk run passes its concurrency:
   * undici hands a freed connection its next request a tick later, so without a bound a run of
   * 16 in flight kept opening connections (32 seen) where 16 do.
   */
  connectionsPerHost?: number;
  /** Told once per client what it ignores in the environment (see ignoredTlsOverride). */
  warn?: (message: string) => void;
}

/** A transport failure; `maybeDelivered` says whether the server may have acted on the request. */
export class TransportError extends NetworkError {
  constructor(
    message: string,
    readonly maybeDelivered: boolean,
    options: { hint?: string; cause?: unknown; code?: string } = {},
  ) {
    super(message, options);
  }
}

/** An answer larger than the cap: not read, so what it said (a 2xx? a 5xx?) is all we know. */
export class ResponseTooLargeError extends ApiError {}

/**
 * What the service client needs of a transport: `HttpClient`, or a dry run's stand-in that
 * records each request instead of sending it (nothing loaded, nothing on the network).
 */
export type HttpSender = Pick<HttpClient, 'send'>;

export class HttpClient {
  private readonly tracer: Tracer;
  private readonly maxResponseBytes: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;

  constructor(
    private readonly undici: Undici,
    private readonly dispatcher: Dispatcher,
    private readonly options: HttpClientOptions,
    /** For loopback hosts: never through a proxy. Defaults to `dispatcher`. */
    private readonly direct: Dispatcher = dispatcher,
  ) {
    this.tracer = options.tracer ?? silentTracer;
    this.maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
  }

  async send(request: HttpRequest, policy: RetryPolicy): Promise<HttpResponse> {
    for (let attempt = 0; ; attempt++) {
      const canRetry = attempt < policy.maxRetries;
      // With the silent tracer (a bulk run without --debug) nothing is built to be thrown away.
      const tracing = this.tracer !== silentTracer;
      if (tracing) this.tracer.request({ ...request, attempt });
      const started = tracing ? performance.now() : 0;
      let response: HttpResponse;
      try {
        response = await this.exchange(request);
      } catch (error) {
        if (tracing) {
          const message = error instanceof Error ? error.message : String(error);
          this.tracer.failure(message, performance.now() - started);
        }
        if (
          canRetry &&
          error instanceof TransportError &&
          error.code !== undefined &&
          policy.retryErrorCodes.has(error.code)
        ) {
          const delay = this.backoff(attempt);
          this.tracer.retry(delay, error.code);
          await this.sleep(delay);
          continue;
        }
        throw error;
      }
      if (tracing) {
        this.tracer.response({
          ...response,
          body: response.text,
          elapsedMs: performance.now() - started,
        });
      }
      if (
        canRetry &&
        policy.retryStatuses.has(response.status) &&
        this.options.passStatuses?.has(response.status) !== true
      ) {
        const delay =
          retryAfterMs(response.headers['retry-after'], Date.now()) ?? this.backoff(attempt);
        this.tracer.retry(delay, `HTTP ${response.status}`);
        await this.sleep(delay);
        continue;
      }
      return response;
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.direct === this.dispatcher
        ? [this.dispatcher.close()]
        : [this.dispatcher.close(), this.direct.close()],
    );
  }

  /** Half fixed, half random ("equal jitter") under an exponential ceiling: clients do not retry in step. */
  private backoff(attempt: number): number {
    const ceiling = BACKOFF_BASE_MS * 2 ** attempt;
    return ceiling / 2 + this.random() * (ceiling / 2);
  }

  private async exchange(request: HttpRequest): Promise<HttpResponse> {
    // undici closes the connection after a GET that carries a body (a server that ignores such
    // bodies would read the leftover bytes as a second request); that guard is kept for single
    // requests, so each Get User attempt opens its own connection. A bulk run, thousands of
    // them against a service known to read those bodies, keeps its connections (reset: false).
    let answer: RawAnswer;
    try {
      answer = await this.undici.exchange(this.dispatcherFor(request.url), request.url, {
        method: request.method,
        headers: request.headers,
        // An empty body is none: a GET with its parameters in the query sends no body at all.
        body: request.body === '' ? undefined : request.body,
        reset: this.options.reuseConnections === true ? false : undefined,
        timeoutMs: this.options.timeoutMs,
        maxBytes: this.maxResponseBytes,
      });
    } catch (error) {
      if (!(error instanceof ExchangeFailure))
        throw this.transportError(error, request.url, false, false);
      if (error.tooLarge) {
        throw new ResponseTooLargeError(
          `the response from ${request.url.host} is larger than ${formatBytes(this.maxResponseBytes)} (HTTP ${error.status})`,
          {
            status: error.status,
            hint: 'this is not a User Group Service answer; check --base-url and any proxy in between',
          },
        );
      }
      throw this.transportError(
        error.cause,
        request.url,
        error.timedOut,
        error.status !== undefined,
      );
    }
    const { chunks } = answer;
    const text = stripBom(
      (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8'),
    );
    return { status: answer.status, headers: answer.headers, text };
  }

  /** The last URL's dispatcher: every request of a run goes to the same one. */
  private routed: { url: URL; dispatcher: Dispatcher } | undefined;

  private dispatcherFor(url: URL): Dispatcher {
    if (this.routed?.url !== url) {
      const dispatcher = isLoopbackHost(url.hostname) ? this.direct : this.dispatcher;
      this.routed = { url, dispatcher };
    }
    return this.routed.dispatcher;
  }

  private transportError(
    error: unknown,
    url: URL,
    timedOut: boolean,
    midBody: boolean,
  ): TransportError {
    const host = url.host;
    if (timedOut) {
      const seconds = this.options.timeoutMs / 1000;
      return new TransportError(`no complete answer from ${host} within ${seconds} s`, true, {
        code: 'TIMEOUT',
        hint: 'the service or the network is slow; try again, or raise --timeout',
        cause: error,
      });
    }
    const code = errorCodeInChain(error);
    const detail = code ?? (error instanceof Error ? error.message : String(error));
    if (midBody) {
      // Its own code: the retry policies name errors before any answer, and this one came after.
      return new TransportError(
        `the connection to ${host} broke while reading the answer (${detail})`,
        true,
        {
          code: 'BODY_INTERRUPTED',
          hint: 'try again; if it keeps happening, check any proxy or load balancer in between',
          cause: error,
        },
      );
    }
    if (code !== undefined && isNotTlsCode(code)) {
      const plain = `http://${url.host}`;
      return new TransportError(
        `TLS connection to ${host} failed: the server does not speak TLS there (${code})`,
        false,
        {
          code,
          hint: isLoopbackHost(url.hostname)
            ? `a plain-HTTP service (such as \`ugs serve\`) is reached with http://: use --base-url ${plain}`
            : `check the port (https is usually 443); a plain-HTTP service needs --base-url ${plain} and --insecure-http, which sends the API token unencrypted`,
          cause: error,
        },
      );
    }
    if (code !== undefined && isTlsCode(code)) {
      // With a CA file given, "pass --ca-file" would send the user round in a circle: that CA is
      // the one that did not verify the certificate.
      const { caFile } = this.options;
      const untrusted = caFile !== undefined && isUntrustedCode(code);
      return new TransportError(
        untrusted
          ? message`TLS connection to ${host} failed: the CA in ${basename(caFile)} did not verify its certificate (${code})`
          : `TLS connection to ${host} failed: ${tlsReason(code)} (${code})`,
        false,
        {
          code,
          hint: untrusted
            ? message`the certificate is not signed by the CA in ${caFile}: give the CA (or chain) that signed it, e.g. \`openssl s_client -connect ${host} -showcerts\` shows the issuer`
            : 'if the service uses a private certificate authority, pass --ca-file <pem> (or set UGS_CA_FILE or NODE_EXTRA_CA_CERTS)',
          cause: error,
        },
      );
    }
    const proxy = proxyRefusal(error);
    if (proxy !== undefined) {
      return new TransportError(`the proxy refused to connect to ${host} (HTTP ${proxy})`, false, {
        code: 'PROXY',
        hint:
          proxy === '407'
            ? 'the proxy wants credentials: put them in HTTPS_PROXY (http://user:pass@proxy:port)'
            : 'ask whoever runs the proxy to allow this host, or add it to NO_PROXY',
        cause: error,
      });
    }
    // A proxy that is down or misspelt fails like the service would: name the proxy instead.
    const peer =
      code === 'ECONNREFUSED' || code === 'ENOTFOUND'
        ? proxyPeer(error, url, this.options.env)
        : undefined;
    if (peer !== undefined) {
      const what = code === 'ENOTFOUND' ? 'host not found' : 'connection refused';
      return new TransportError(
        `could not connect to the proxy ${peer} (for ${host}): ${what}`,
        false,
        {
          code,
          hint: 'check HTTPS_PROXY / HTTP_PROXY (lower case wins), or add the host to NO_PROXY',
          cause: error,
        },
      );
    }
    const known: Record<string, [string, string]> = {
      ECONNREFUSED: [
        `could not connect to ${host}: connection refused`,
        'check that the service is running and that --base-url is right',
      ],
      ENOTFOUND: [
        `could not resolve host ${url.hostname}`,
        'check the host name in --base-url and your DNS or network connection',
      ],
      EAI_AGAIN: [
        `could not resolve host ${url.hostname} (DNS did not answer)`,
        'check your network connection and try again',
      ],
      EHOSTUNREACH: [`host ${host} is unreachable`, 'check your network connection'],
      ENETUNREACH: [`network unreachable for ${host}`, 'check your network connection'],
      UND_ERR_CONNECT_TIMEOUT: [
        `connecting to ${host} timed out`,
        'check your network, firewall or proxy settings',
      ],
    };
    const [text, hint] = (code === undefined ? undefined : known[code]) ?? [
      `the connection to ${host} failed before an answer (${detail})`,
      'try again; if it keeps happening, check the network or any proxy in between',
    ];
    return new TransportError(text, code === undefined || !NOT_DELIVERED_CODES.has(code), {
      code,
      hint,
      cause: error,
    });
  }
}

/** The dispatcher is made once per process; importing undici is deferred until a request is due. */
export async function createHttpClient(options: HttpClientOptions): Promise<HttpClient> {
  const undici = await loadUndici();
  const ca = options.caFile === undefined ? undefined : await loadCa(options.caFile, options.env);
  const env = options.env;
  const ignored = ignoredTlsOverride(env);
  if (ignored !== undefined) options.warn?.(ignored);
  // Stated, never left to the default: Node's default for a TLS connection is read from
  // NODE_TLS_REJECT_UNAUTHORIZED, and "0" there would send the API token to any certificate.
  const verify = { rejectUnauthorized: true } as const;
  const common = {
    // Our own AbortSignal is the deadline; undici's per-phase timers would fire first and coarsely.
    headersTimeout: 0,
    bodyTimeout: 0,
    // Direct connections only: the proxy agents build their own (and use requestTls for the CA).
    connect: continueTolerantConnector(undici, { ca }),
    requestTls: ca === undefined ? verify : { ...verify, ca },
    proxyTls: verify,
    ...(options.connectionsPerHost !== undefined && { connections: options.connectionsPerHost }),
  };
  // A request to this machine through a proxy would hand the API token (in clear text, over
  // http://) to the proxy: loopback never goes through one, whatever NO_PROXY says. A plain Agent
  // knows no proxies and reads no environment (and costs less per request than a proxy agent).
  const direct = new undici.Agent(common);
  // Proxies come from the injected environment, never from process.env.
  const httpProxy = proxyVariable('http:', env)?.value ?? '';
  const httpsProxy = proxyVariable('https:', env)?.value ?? '';
  if (httpProxy === '' && httpsProxy === '') {
    // No proxy at all: the proxy agent would hand every request to an Agent like `direct`, after
    // a NO_PROXY check per request that a bulk run pays thousands of times.
    return new HttpClient(undici, direct, options, direct);
  }
  const EnvHttpProxyAgent = await undici.loadProxyAgent();
  const dispatcher = new EnvHttpProxyAgent({
    httpProxy,
    httpsProxy,
    noProxy: env.no_proxy ?? env.NO_PROXY ?? '',
    ...common,
  });
  return new HttpClient(undici, dispatcher, options, direct);
}

/**
 * The warning for NODE_TLS_REJECT_UNAUTHORIZED=0, the variable Node reads to stop checking
 * certificates everywhere: ugs checks the service's certificate whatever it says (a variable left
 * over from debugging another tool must not expose the API token), and says so.
 */
export function ignoredTlsOverride(env: Env): string | undefined {
  if (env.NODE_TLS_REJECT_UNAUTHORIZED !== '0') return undefined;
  return 'warning: NODE_TLS_REJECT_UNAUTHORIZED=0 is ignored: ugs always checks the certificate of the service (and of an https proxy); for a private certificate authority pass --ca-file <pem>';
}

const MAX_CA_FILE_BYTES = 1024 * 1024;
const PEM_CERTIFICATE = '-----BEGIN CERTIFICATE-----';

/**
 * A CA file's certificates as PEM text, which Node's TLS takes: PEM as it is; one DER certificate
 * (the binary `.cer` that Windows' certificate manager exports by default) converted; undefined
 * when it is neither. node:crypto loads only for a file that is not PEM.
 */
export async function caCertificatesText(bytes: Buffer): Promise<string | undefined> {
  const text = bytes.toString('utf8');
  if (text.includes(PEM_CERTIFICATE)) return text;
  // DER is an ASN.1 SEQUENCE: it starts with 0x30. Anything else is no certificate at all.
  if (bytes[0] !== 0x30) return undefined;
  const { X509Certificate } = await import('node:crypto');
  try {
    return new X509Certificate(bytes).toString();
  } catch {
    return undefined;
  }
}

/**
 * `ca` replaces Node's trust store, so the public roots and NODE_EXTRA_CA_CERTS are added back:
 * `--ca-file` adds a private CA rather than trusting it alone.
 */
async function loadCa(caFile: string, env: Env): Promise<string[]> {
  const extra: string[] = [];
  for (const [file, flag] of [
    [caFile, '--ca-file'],
    [env.NODE_EXTRA_CA_CERTS, 'NODE_EXTRA_CA_CERTS'],
  ] as const) {
    if (file === undefined || file === '') continue;
    try {
      // Capped: `--ca-file /dev/zero` or a fifo would otherwise be read until memory runs out.
      const bytes = await readFileCapped(file, MAX_CA_FILE_BYTES);
      extra.push((await caCertificatesText(bytes)) ?? bytes.toString('utf8'));
    } catch (error) {
      if (flag === 'NODE_EXTRA_CA_CERTS') continue; // Node itself only warns about this one.
      if (error instanceof FileTooLargeError) {
        throw new UsageError(message`${flag} file ${file} is ${error.message}`);
      }
      throw new UsageError(
        message`cannot read ${flag} file ${file}: ${errorCodeInChain(error) ?? String(error)}`,
      );
    }
  }
  if (!extra[0]?.includes(PEM_CERTIFICATE)) {
    throw new UsageError(message`--ca-file ${caFile} contains no certificate (PEM or DER)`, {
      hint: 'give the CA certificate as a .pem or .crt (PEM) or a .cer or .der (DER) file',
    });
  }
  // node:tls takes a few ms to load: only this rarely used path needs it.
  const { rootCertificates } = await import('node:tls');
  return [...rootCertificates, ...extra];
}

/** `Retry-After` as seconds or an HTTP date, capped so a server cannot park us for hours. */
export function retryAfterMs(
  value: string | undefined,
  now: number,
  cap = MAX_RETRY_AFTER_MS,
): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  let ms: number;
  if (/^\d+$/.test(trimmed)) ms = Number(trimmed) * 1000;
  else {
    // HTTP dates (all three RFC 9110 forms) open with a day name; Date.parse alone would read
    // "1.5" or "-5" as dates in 2001 and retry at once instead of backing off.
    if (!/^[a-z]{3,9},?\s/i.test(trimmed)) return undefined;
    const date = Date.parse(trimmed);
    if (Number.isNaN(date)) return undefined;
    ms = Math.max(0, date - now);
  }
  return Math.min(ms, cap);
}

/** Where a failed connection was aimed when that was not the service but a proxy on the way. */
function proxyPeer(error: unknown, url: URL, env: Env): string | undefined {
  if (!(env.https_proxy || env.HTTPS_PROXY || env.http_proxy || env.HTTP_PROXY)) return undefined;
  const targetPort = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  for (let current = error, depth = 0; depth < 4; depth++) {
    if (typeof current !== 'object' || current === null) return undefined;
    const { address, hostname, port, cause } = current as Record<string, unknown>;
    if (typeof address === 'string' && typeof port === 'number') {
      return port === targetPort ? undefined : `${address}:${port}`;
    }
    if (typeof hostname === 'string') return hostname === url.hostname ? undefined : hostname;
    current = cause;
  }
  return undefined;
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith('ERR_TLS_') ||
    code.startsWith('ERR_SSL_') ||
    code.includes('CERT') ||
    code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' ||
    code === 'EPROTO'
  );
}

/** The codes of a certificate no trusted CA vouches for (not an expired or misnamed one). */
function isUntrustedCode(code: string): boolean {
  return [
    'DEPTH_ZERO_SELF_SIGNED_CERT',
    'SELF_SIGNED_CERT_IN_CHAIN',
    'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
    'UNABLE_TO_GET_ISSUER_CERT',
    'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
    'CERT_UNTRUSTED',
  ].includes(code);
}

function tlsReason(code: string): string {
  if (code === 'DEPTH_ZERO_SELF_SIGNED_CERT' || code === 'SELF_SIGNED_CERT_IN_CHAIN') {
    return 'the certificate is self-signed and not trusted';
  }
  if (code === 'CERT_HAS_EXPIRED') return 'the certificate has expired';
  if (code === 'ERR_TLS_CERT_ALTNAME_INVALID') return 'the certificate is for another host name';
  if (code === 'UNABLE_TO_VERIFY_LEAF_SIGNATURE' || code === 'UNABLE_TO_GET_ISSUER_CERT_LOCALLY') {
    return 'the certificate is signed by an unknown authority';
  }
  return 'the certificate was not accepted';
}

function proxyRefusal(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  return /^Proxy response \((\d{3})\) !== 200/.exec(message)?.[1];
}
