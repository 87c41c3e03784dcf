/**
 * The real factory (its type is in factory.ts), made once per run from the parsed global flags.
 * Nothing here does work until asked: each member is created on first use, the settings are
 * checked when a command first reads them, the config file is read when a command reads it, and
 * the HTTP stack (undici), the emulator and doctor's network code are imported only when used.
 */
import { configDir, FileConfigStore } from '../config/config.js';
import { type CredentialStore, OsCredentialStore } from '../config/secure-store.js';
import type { Deps, SystemInfo } from '../context/factory.js';
import {
  type GlobalFlags,
  parseSettings,
  readPreferences,
  type Settings,
} from '../context/settings.js';
import { ConfigError } from '../errors.js';
import { createHistoryLog, type HistoryLog, historyLocation } from '../history/log.js';
import { InquirerPrompter, type Prompter } from '../input/prompter.js';
import { StreamTracer, silentTracer, type Tracer } from '../output/debug.js';
import { printLine, printNote } from '../output/messages.js';
import { createOutput, type Output } from '../output/output.js';
import { createProgress, type Progress } from '../output/spinner.js';
import type { IO } from '../platform/io.js';
import { userAgent } from '../platform/version.js';
import { HttpServiceClient } from '../service/service.js';
import { createHttpClient, type HttpClient } from '../transport/http.js';
import type { DoctorNetwork } from '../transport/network.js';
import { emulatorRoutes, operations, servedOperations } from './operations.js';

/** The statuses a bulk run handles itself, for all rows at once. */
const THROTTLE_STATUSES: ReadonlySet<number> = new Set([429, 503]);

/**
 * The real dependencies. `clients` collects HTTP clients so `main` can close their sockets.
 * `output`, when given, is the run's output object already made (one per run).
 */
export function createDeps(
  io: IO,
  flags: GlobalFlags,
  system: SystemInfo,
  clients: HttpClient[],
  output: Output = createOutput(io, readPreferences(flags)),
): Deps {
  const preferences = readPreferences(flags);
  let settings: Settings | undefined;
  let config: FileConfigStore | undefined;
  let credentialStore: CredentialStore | undefined;
  let prompter: Prompter | undefined;
  let progress: Progress | undefined;
  let tracer: Tracer | undefined;
  let network: DoctorNetwork | undefined;
  let history: HistoryLog | undefined;
  // Once per run, however many clients the command makes.
  let warned = false;
  const warnOnce = (message: string) => {
    if (warned) return;
    warned = true;
    printLine(output, message);
  };
  const deps: Deps = {
    io,
    output,
    preferences,
    system,
    get settings() {
      settings ??= parseSettings(flags, io.env, () => {
        try {
          return deps.config.readDefaultProfile();
        } catch (error) {
          // A config file that cannot be read is reported by whatever reads it next (doctor
          // reports it as a finding); the profile cannot come from it meanwhile.
          if (error instanceof ConfigError) return undefined;
          throw error;
        }
      });
      return settings;
    },
    get config() {
      config ??= new FileConfigStore(configDir(io.env, system.platform, system.homedir), {
        warn: (m) => printLine(output, m),
        platform: system.platform,
        homedir: system.homedir,
      });
      return config;
    },
    get credentialStore() {
      credentialStore ??= new OsCredentialStore(system.platform);
      return credentialStore;
    },
    get prompter() {
      prompter ??= new InquirerPrompter(io);
      return prompter;
    },
    get progress() {
      progress ??= createProgress(io, preferences);
      return progress;
    },
    get tracer() {
      // Without --debug the client's retries go to the spinner (a no-op where there is none).
      tracer ??= preferences.debug ? new StreamTracer(io.stderr) : deps.progress.tracer;
      return tracer;
    },
    async connect(target, options = {}) {
      const { settings } = deps;
      const { capture } = options;
      if (capture !== undefined) {
        // The client builds each request as for the wire (the dialect's body and path), and the
        // capture takes it: nothing is loaded or sent.
        return new HttpServiceClient(
          { send: (request) => capture(request) },
          target,
          userAgent(system.nodeVersion),
          { keepJsonText: false, operations },
        );
      }
      deps.tracer.addSecret(target.apiToken);
      const http = await createHttpClient({
        ...(options.bulk === true && {
          reuseConnections: true,
          passStatuses: THROTTLE_STATUSES,
        }),
        ...(options.connections !== undefined && { connectionsPerHost: options.connections }),
        ...(options.pace !== undefined && { sleep: pacedSleep(options.pace) }),
        timeoutMs: settings.timeoutMs,
        env: io.env,
        caFile: target.caFile,
        warn: warnOnce,
        // A bulk run draws its own progress, never the spinner: without --debug no one reads the
        // trace, and the client skips building it per request only for the silent tracer.
        tracer: options.bulk === true && !settings.debug ? silentTracer : deps.tracer,
      });
      clients.push(http);
      return new HttpServiceClient(http, target, userAgent(system.nodeVersion), {
        // stderr, so a note goes with --json and --field too without touching their stdout.
        notify: (message) => printNote(output, message),
        keepJsonText: options.bulk !== true,
        learnRedirect: options.bulk === true,
        operations,
      });
    },
    async startEmulator(options) {
      // The emulator is its own bundle: no other command pays for it at start-up.
      // It serves the operations of this registry, whose routes load from this bundle.
      return (await import('../emulator/server.js')).startEmulator(
        options,
        servedOperations,
        emulatorRoutes,
      );
    },
    get history() {
      history ??= createHistoryLog(
        historyLocation(deps.settings, configDir(io.env, system.platform, system.homedir)),
        {
          env: io.env,
          warn: (m) => printLine(output, m),
          platform: system.platform,
          homedir: system.homedir,
        },
      );
      return history;
    },
    now: () => new Date(),
    get network() {
      network ??= lazyNetwork();
      return network;
    },
  };
  return deps;
}

/** A retry's back-off, then its slot in the run's `--rate` schedule. */
function pacedSleep(pace: () => Promise<void>): (ms: number) => Promise<void> {
  return async (ms) => {
    await new Promise((resolve) => setTimeout(resolve, ms));
    await pace();
  };
}

/**
 * Doctor's network, its module (DNS, socket and TLS code) loaded on the first call: start-up
 * time is paid by no other command.
 */
function lazyNetwork(): DoctorNetwork {
  let real: Promise<DoctorNetwork> | undefined;
  const load = () => {
    real ??= import('../doctor/index.js').then((module) => module.realNetwork());
    return real;
  };
  return {
    lookup: async (host) => (await load()).lookup(host),
    connect: async (host, port, timeoutMs) => (await load()).connect(host, port, timeoutMs),
    tls: async (target) => (await load()).tls(target),
    // Timings of the calls above: the same clock as the real network's.
    now: () => performance.now(),
  };
}
