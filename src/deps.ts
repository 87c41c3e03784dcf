/**
 * What commands depend on, made once per run from the settings. Nothing here does work until
 * asked: the config file is read when a command reads it, and the HTTP stack (undici) is imported
 * only when a command connects.
 */
import { type ConfigStore, configDir, FileConfigStore } from './config.js';
import { StreamTracer, silentTracer, type Tracer } from './debug.js';
import { createHttpClient, type HttpClient } from './http.js';
import type { IO } from './io.js';
import { printLine, printNote } from './output/messages.js';
import type { Output } from './output/output.js';
import { InquirerPrompter, type Prompter } from './prompter.js';
import { type CredentialStore, OsCredentialStore } from './secure-store.js';
import { HttpServiceClient, type ServiceClient, type Target } from './service.js';
import type { Settings } from './settings.js';
import { createProgress, type Progress } from './spinner.js';
import { userAgent } from './version.js';

export interface Deps {
  io: IO;
  /** Where and how output is written (streams, terminal or not, colour, quiet, CI masking). */
  output: Output;
  settings: Settings;
  config: ConfigStore;
  /** The OS credential store (`login --secure-storage`); its native module loads on first use. */
  credentialStore: CredentialStore;
  prompter: Prompter;
  tracer: Tracer;
  /** The spinner shown at a terminal while a request is slow. */
  progress: Progress;
  /** A client for the service at `target`; the HTTP stack is loaded on the first call. */
  connect(target: Target, options?: ConnectOptions): Promise<ServiceClient>;
}

export interface ConnectOptions {
  /**
   * A bulk run: connections kept open after a GET with a body, and 429/503 answers returned at
   * once (the run's scheduler waits and slows down for all rows instead of each row alone).
   */
  bulk?: boolean;
  /** A bulk run's requests in flight: no more connections than that are opened. */
  connections?: number;
}

/** The statuses a bulk run handles itself, for all rows at once. */
const THROTTLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

export interface SystemInfo {
  platform: NodeJS.Platform;
  homedir: string;
  nodeVersion: string;
  /** Resolves with a signal's name when the process is asked to stop (for `ugs serve`). */
  waitForShutdown(): Promise<string>;
}

/** The real dependencies. `clients` collects HTTP clients so `main` can close their sockets. */
export function createDeps(
  io: IO,
  settings: Settings,
  output: Output,
  system: SystemInfo,
  clients: HttpClient[],
): Deps {
  const progress = createProgress(io, settings);
  // Without --debug the client's retries go to the spinner (a no-op where there is none).
  const tracer = settings.debug ? new StreamTracer(io.stderr) : progress.tracer;
  // Once per run, however many clients the command makes.
  let warned = false;
  const warnOnce = (message: string) => {
    if (warned) return;
    warned = true;
    printLine(output, message);
  };
  return {
    io,
    output,
    settings,
    config: new FileConfigStore(configDir(io.env, system.platform, system.homedir), {
      warn: (m) => printLine(output, m),
    }),
    credentialStore: new OsCredentialStore(system.platform),
    prompter: new InquirerPrompter(io),
    tracer,
    progress,
    async connect(target, options = {}) {
      tracer.addSecret(target.apiToken);
      const http = await createHttpClient({
        ...(options.bulk === true && {
          reuseConnections: true,
          passStatuses: THROTTLE_STATUSES,
        }),
        ...(options.connections !== undefined && { connectionsPerHost: options.connections }),
        timeoutMs: settings.timeoutMs,
        env: io.env,
        caFile: settings.caFile,
        warn: warnOnce,
        // A bulk run draws its own progress, never the spinner: without --debug no one reads the
        // trace, and the client skips building it per request only for the silent tracer.
        tracer: options.bulk === true && !settings.debug ? silentTracer : tracer,
      });
      clients.push(http);
      return new HttpServiceClient(http, target, userAgent(system.nodeVersion), {
        // stderr, so a note goes with --json and --field too without touching their stdout.
        notify: (message) => printNote(output, message),
        keepJsonText: options.bulk !== true,
      });
    },
  };
}
