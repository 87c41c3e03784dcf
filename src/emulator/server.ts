import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { isDialect } from '../service/dialect.js';
import { message, quote } from '../text/message.js';
import { type ApiToken, Authenticator, type Environment, resolveApiTokens } from './auth.js';
import { EmulatorStartError } from './errors.js';
import { FaultInjector, type FaultSpec, parseFaultSpec } from './faults.js';
import {
  type EmulatorOnlyRoute,
  pathOf,
  RequestHandler,
  type ServedOperations,
} from './handler.js';
import type { EmulatorOptions, RunningEmulator } from './options.js';
import {
  DataFile,
  DataFileLock,
  DurableWriter,
  loadDataFile,
  removeOrphanTempFiles,
} from './persistence.js';
import { Store } from './store.js';
import { SlidingWindowThrottle } from './throttle.js';

export { parseApiTokenSpec } from './auth.js';
export { EmulatorSpecError, EmulatorStartError } from './errors.js';
export { parseFaultSpec } from './faults.js';
export type { EmulatorOptions, RunningEmulator } from './options.js';
export type { Environment, FaultSpec };

const DEFAULT_PORT = 4010;
const DEFAULT_SLOW_MS = 2000;
// On close, requests still running get this long to finish before their connections are cut.
const CLOSE_GRACE_MS = 1000;

function checkOptions(opts: EmulatorOptions): FaultSpec[] {
  // node reads an empty host as "every interface": a typo must not expose the emulator.
  if (opts.host !== undefined && opts.host.trim() === '') {
    throw new EmulatorStartError(
      'the host is empty, which would listen on every interface; give an address such as 127.0.0.1 (or 0.0.0.0 on purpose)',
    );
  }
  const port = opts.port ?? DEFAULT_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new EmulatorStartError(`port ${port} is not an integer from 0 to 65535`);
  }
  const slowMs = opts.slowMs ?? DEFAULT_SLOW_MS;
  if (!Number.isFinite(slowMs) || slowMs < 0) {
    throw new EmulatorStartError(`slowMs ${slowMs} must be a non-negative number`);
  }
  const { rateLimit } = opts;
  if (
    rateLimit !== undefined &&
    !(
      Number.isSafeInteger(rateLimit.count) &&
      rateLimit.count > 0 &&
      Number.isFinite(rateLimit.windowMs) &&
      rateLimit.windowMs > 0
    )
  ) {
    throw new EmulatorStartError('rateLimit needs a positive whole count and a positive window');
  }
  if (opts.dialect !== undefined && !isDialect(opts.dialect)) {
    throw new EmulatorStartError(
      `dialect ${String(opts.dialect)} is not interface, explo or customer`,
    );
  }
  const kids = new Set<string>();
  for (const { kid, secret } of opts.embedSecrets ?? []) {
    // A256GCM takes the secret's 32 bytes as its key (src/jwt/embed.ts says why).
    if (kid === '' || Buffer.byteLength(secret) !== 32) {
      throw new EmulatorStartError(`embed secret ${kid}: a key id and a 32-byte secret are needed`);
    }
    if (kids.has(kid)) throw new EmulatorStartError(`embed key id ${kid} is given twice`);
    kids.add(kid);
  }
  if (opts.seed !== undefined && !Number.isFinite(opts.seed)) {
    throw new EmulatorStartError(`seed ${opts.seed} must be a finite number`);
  }
  // Specs built in code get the same checks as the ones parsed from text.
  return (opts.faults ?? []).map((f) =>
    parseFaultSpec(`${f.kind}:${f.rate}${f.forMs === undefined ? '' : `:for=${f.forMs}ms`}`),
  );
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

/**
 * `operations`: what the emulator serves, from the caller's registry (`commands/operations.ts`):
 * the emulator imports no operation, so its bundle holds none of ugs's commands.
 */
export async function startEmulator(
  opts: EmulatorOptions,
  operations: ServedOperations,
  emulatorRoutes: readonly EmulatorOnlyRoute[] = [],
): Promise<RunningEmulator> {
  const faults = checkOptions(opts);
  const host = opts.host ?? '127.0.0.1';
  const port = opts.port ?? DEFAULT_PORT;
  const givenTokens = opts.apiTokens?.length ? resolveApiTokens(opts.apiTokens) : undefined;
  const dataFile = opts.dataFile === undefined ? undefined : path.resolve(opts.dataFile);

  // Lock before reading, so the state read is not being rewritten by another emulator.
  const lock = dataFile === undefined ? undefined : await DataFileLock.acquire(dataFile);
  let store: Store;
  let data: DataFile | undefined;
  // A file with changes after its snapshot (or a torn last line) is rewritten as a bare
  // snapshot before the first request.
  let compactAtStart = false;
  try {
    if (dataFile === undefined) store = new Store();
    else {
      const loaded = await loadDataFile(dataFile);
      store = loaded.store;
      data = new DataFile(dataFile, store, loaded);
      compactAtStart = loaded.exists && loaded.needsCompaction;
      await removeOrphanTempFiles(dataFile);
    }
  } catch (err) {
    await lock?.release().catch(() => undefined);
    throw err;
  }
  const file = data;
  const writer = file === undefined ? undefined : new DurableWriter(() => file.save());

  // Given tokens are used as they are and never written to the file; generated ones are kept
  // in the data file, and saved before anyone can see them, so they outlive a restart.
  let apiTokens: ApiToken[];
  if (givenTokens) apiTokens = givenTokens;
  else if (store.generatedApiTokens) apiTokens = store.generatedApiTokens;
  else {
    apiTokens = resolveApiTokens(undefined);
    if (file) {
      store.generatedApiTokens = apiTokens;
      compactAtStart = true;
    }
  }
  if (writer && file && compactAtStart) {
    file.requestCompaction();
    writer.markChanged();
    try {
      await writer.sync();
    } catch (err) {
      await file.close();
      await lock?.release().catch(() => undefined);
      const why = err instanceof Error ? err.message : String(err);
      throw new EmulatorStartError(`cannot save the data file ${dataFile}: ${why}`);
    }
  }

  const sleeps = new Set<() => void>();
  const handler = new RequestHandler({
    store,
    operations,
    emulatorRoutes,
    embedSecrets: (opts.embedSecrets ?? []).map(({ kid, secret }) => ({ kid, secret })),
    auth: new Authenticator(apiTokens),
    faults: new FaultInjector(faults, opts.seed),
    slowMs: opts.slowMs ?? DEFAULT_SLOW_MS,
    trailingSlash: opts.trailingSlash === true,
    dialect: opts.dialect ?? 'interface',
    throttle: opts.rateLimit === undefined ? undefined : new SlidingWindowThrottle(opts.rateLimit),
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
  // Per connection, the responses not yet sent: a malformed request after valid pipelined ones
  // is answered only after them, so no request that ran loses its answer.
  const pendingOn = new WeakMap<Socket, Set<{ req: IncomingMessage; done: Promise<void> }>>();
  const log = opts.log;
  const onRequest = (req: IncomingMessage, res: ServerResponse) => {
    const started = performance.now();
    // Settles when the response is fully sent or the connection is gone, not merely when the
    // handler returns, so close() does not cut off a response that is still being written.
    const done = new Promise<void>((resolve) => res.once('close', resolve));
    inFlight.add(done);
    const socket = req.socket;
    let pending = pendingOn.get(socket);
    if (!pending) {
      pending = new Set();
      pendingOn.set(socket, pending);
    }
    const onSocket = pending;
    const entry = { req, done };
    onSocket.add(entry);
    void done.then(() => {
      inFlight.delete(done);
      onSocket.delete(entry);
    });
    const handled = handler.handle(req, res);
    void Promise.all([handled, done]).then(([{ outcome, id, fault, note, notice }]) => {
      if (notice !== undefined) {
        try {
          opts.notice?.(`${new Date().toISOString()} ${escapeNote(notice)}`);
        } catch {
          // As for the log: a broken writer must not take the emulator down.
        }
      }
      if (!log) return;
      const status = res.writableFinished ? String(res.statusCode) : '-';
      const ms = Math.round(performance.now() - started);
      // The path only: a query string is the one place a careless client might put a secret.
      // Never a token; the group's id says which group a request reached, quoted as ugs quotes
      // a value in its messages (control characters and line separators escaped).
      const line = [
        new Date().toISOString(),
        req.method,
        pathOf(req.url),
        status,
        `${ms}ms`,
        outcome,
        ...(id === undefined ? [] : [message`id="${id}"`]),
        ...(fault === undefined ? [] : [`fault=${fault}`]),
        ...(note === undefined ? [] : [escapeNote(note)]),
      ].join(' ');
      try {
        log(line);
      } catch {
        // A broken logger must not take the emulator down.
      }
    });
  };

  const server = createServer(onRequest);
  // A client that sends its request and then shuts down its sending side (shutdown(SHUT_WR),
  // `curl` with some proxies, `nc -N`) still waits for the answer. node's default aborts the
  // request on the first FIN; this keeps the socket open until the answer is written, then
  // closes it. The property is node's own (lib/_http_server.js), not in its typings.
  (server as Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
  // Malformed HTTP gets the same JSON error shape as everything else, after the answers of the
  // valid requests pipelined before it, in order; then the connection closes.
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) => {
    if (err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    // Only requests received in full ran or will run; one cut off by the garbage (a broken
    // chunked body) never completes, and is aborted when the connection closes.
    const pending = [...(pendingOn.get(socket) ?? [])]
      .filter((entry) => entry.req.complete)
      .map((entry) => entry.done);
    void Promise.all(pending).then(() => {
      if (!socket.writable) {
        socket.destroy();
        return;
      }
      const body = JSON.stringify({ success: 0, detail: `Malformed HTTP request (${err.code}).` });
      socket.end(
        `HTTP/1.1 400 Bad Request\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
      );
    });
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
    if (writer && file?.hasChanges) {
      // Left as a bare snapshot after a clean stop: plain JSON for whoever reads it next. If
      // this fails, the changes after the snapshot still hold everything.
      file.requestCompaction();
      writer.markChanged();
      void writer.sync().catch(() => undefined);
      await writer.drain();
    }
    await file?.close();
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

/** A note of ours holds no client text but a token's last 4: its control characters escaped. */
function escapeNote(text: string): string {
  return quote(text).slice(1, -1);
}
