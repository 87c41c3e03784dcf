import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { type ApiToken, Authenticator, type Environment, resolveApiTokens } from './auth.js';
import { EmulatorStartError } from './errors.js';
import { FaultInjector, type FaultSpec, parseFaultSpec } from './faults.js';
import { pathOf, RequestHandler } from './handler.js';
import {
  DataFileLock,
  DurableWriter,
  loadStore,
  removeOrphanTempFiles,
  writeFileAtomic,
} from './persistence.js';
import { Store } from './store.js';

export { parseApiTokenSpec } from './auth.js';
export { EmulatorSpecError, EmulatorStartError } from './errors.js';
export { parseFaultSpec } from './faults.js';
export type { Environment, FaultSpec };

export interface EmulatorOptions {
  /** Default '127.0.0.1'. */
  host?: string;
  /** Default 4010; 0 picks a free port. */
  port?: number;
  /** None given: one Customer and one Testing token are generated. */
  apiTokens?: { token: string; environment: Environment }[];
  /** Where state is kept across restarts; without it the state lives in memory only. */
  dataFile?: string;
  faults?: FaultSpec[];
  /** Makes fault injection reproducible. */
  seed?: number;
  /** Delay of the 'slow' fault, default 2000. */
  slowMs?: number;
  /** One line per request: method, path, status, duration. Never contains a token. */
  log?: (line: string) => void;
}

export interface RunningEmulator {
  url: string;
  apiTokens: { token: string; environment: Environment }[];
  close(): Promise<void>;
}

const DEFAULT_PORT = 4010;
const DEFAULT_SLOW_MS = 2000;
// On close, requests still running get this long to finish before their connections are cut.
const CLOSE_GRACE_MS = 1000;

function checkOptions(opts: EmulatorOptions): FaultSpec[] {
  const port = opts.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new EmulatorStartError(`port ${port} is not an integer from 0 to 65535`);
  }
  const slowMs = opts.slowMs ?? DEFAULT_SLOW_MS;
  if (!Number.isFinite(slowMs) || slowMs < 0) {
    throw new EmulatorStartError(`slowMs ${slowMs} must be a non-negative number`);
  }
  if (opts.seed !== undefined && !Number.isFinite(opts.seed)) {
    throw new EmulatorStartError(`seed ${opts.seed} must be a finite number`);
  }
  // Specs built in code get the same checks as the ones parsed from text.
  return (opts.faults ?? []).map((f) => parseFaultSpec(`${f.kind}:${f.rate}`));
}

function formatUrl(address: AddressInfo): string {
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return `http://${host}:${address.port}`;
}

function listenError(err: unknown, host: string, port: number): EmulatorStartError {
  const code = typeof err === 'object' && err !== null && 'code' in err ? err.code : undefined;
  const where = `${host} port ${port}`;
  if (code === 'EADDRINUSE') {
    return new EmulatorStartError(
      `${where} is already in use; stop whatever listens there or choose another port (0 picks a free one)`,
    );
  }
  if (code === 'EACCES') {
    return new EmulatorStartError(`no permission to listen on ${where}; use a port above 1023`);
  }
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') {
    return new EmulatorStartError(`cannot listen on ${where}: no such local address`);
  }
  const why = err instanceof Error ? err.message : String(err);
  return new EmulatorStartError(`cannot listen on ${where}: ${why}`);
}

export async function startEmulator(opts: EmulatorOptions = {}): Promise<RunningEmulator> {
  const faults = checkOptions(opts);
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? DEFAULT_PORT;
  const apiTokens: ApiToken[] = resolveApiTokens(opts.apiTokens);
  const dataFile = opts.dataFile === undefined ? undefined : path.resolve(opts.dataFile);

  // Lock before reading, so the state read is not being rewritten by another emulator.
  const lock = dataFile === undefined ? undefined : await DataFileLock.acquire(dataFile);
  let store: Store;
  try {
    store = dataFile === undefined ? new Store() : await loadStore(dataFile);
    if (dataFile !== undefined) await removeOrphanTempFiles(dataFile);
  } catch (err) {
    await lock?.release().catch(() => undefined);
    throw err;
  }

  const writer =
    dataFile === undefined
      ? undefined
      : new DurableWriter(() =>
          writeFileAtomic(dataFile, `${JSON.stringify(store.toJSON(), null, 2)}\n`),
        );

  const sleeps = new Set<() => void>();
  const handler = new RequestHandler({
    store,
    auth: new Authenticator(apiTokens),
    faults: new FaultInjector(faults, opts.seed),
    slowMs: opts.slowMs ?? DEFAULT_SLOW_MS,
    markChanged: () => writer?.markChanged(),
    sync: () => writer?.sync() ?? Promise.resolve(),
    sleep: (ms) =>
      new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          sleeps.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, ms);
        sleeps.add(wake);
      }),
  });

  const inFlight = new Set<Promise<void>>();
  const log = opts.log;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    // Settles when the response is fully sent or the connection is gone, not merely when the
    // handler returns, so close() does not cut off a response that is still being written.
    const done = new Promise<void>((resolve) => res.once('close', resolve));
    inFlight.add(done);
    void done.then(() => inFlight.delete(done));
    const handled = handler.handle(req, res);
    void Promise.all([handled, done]).then(([fault]) => {
      if (!log) return;
      const status = res.writableFinished ? String(res.statusCode) : '-';
      const ms = Math.round(performance.now() - started);
      // The path only: a query string is the one place a careless client might put a secret.
      const line = `${req.method} ${pathOf(req.url)} ${status} ${ms}ms${fault ? ` fault=${fault}` : ''}`;
      try {
        log(line);
      } catch {
        // A broken logger must not take the emulator down.
      }
    });
  };

  const server = createServer(onRequest);
  // Malformed HTTP gets the same JSON error shape as everything else.
  server.on('clientError', (err: NodeJS.ErrnoException, socket) => {
    if (err.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const body = JSON.stringify({ success: 0, error: `malformed HTTP request (${err.code})` });
    socket.end(
      `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });

  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await lock?.release().catch(() => undefined);
    throw listenError(err, host, port);
  }

  let closing: Promise<void> | undefined;
  const close = async () => {
    const stopped = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    for (const wake of [...sleeps]) wake();
    let grace: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(inFlight),
      new Promise<void>((resolve) => {
        grace = setTimeout(resolve, CLOSE_GRACE_MS);
      }),
    ]);
    clearTimeout(grace);
    server.closeAllConnections();
    await stopped;
    await writer?.drain();
    await lock?.release();
  };

  return {
    url: formatUrl(server.address() as AddressInfo),
    apiTokens: apiTokens.map((t) => ({ ...t })),
    close: () => {
      closing ??= close();
      return closing;
    },
  };
}
