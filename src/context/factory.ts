/**
 * What every command needs, in one object made once per run (as gh's `cmdutil.Factory`): the
 * streams and the output object, the settings, the config store, the service client, the
 * prompter, the emulator, the clock and the network probe. Only types live here, so commands,
 * bulk and doctor import it without loading any of what it describes; `default-factory.ts` builds
 * the real one, and each member is created (and its module loaded) on first use.
 */
import type { ConfigStore } from '../config/config.js';
import type { CredentialStore } from '../config/secure-store.js';
import type { EmulatorOptions, RunningEmulator } from '../emulator/options.js';
import type { HistoryLog } from '../history/log.js';
import type { Prompter } from '../input/prompter.js';
import type { Tracer } from '../output/debug.js';
import type { Output } from '../output/output.js';
import type { Progress } from '../output/spinner.js';
import type { IO } from '../platform/io.js';
import type { ServiceClient } from '../service/client.js';
import type { Target } from '../service/target.js';
import type { HttpRequest, HttpResponse } from '../transport/http.js';
import type { DoctorNetwork } from '../transport/network.js';
import type { Preferences, Settings } from './settings.js';

export interface Deps {
  io: IO;
  /** Where and how output is written (streams, terminal or not, colour, quiet, CI masking). */
  output: Output;
  /** `--debug`, `--no-color`, `--no-input`, `--quiet`: read even when a global option is invalid. */
  preferences: Preferences;
  /**
   * The global options, checked. A command that reads them fails with the usage error of an
   * invalid one (`--timeout abc`, `UGS_API_PATH=x`); `serve` and `completion` never read them.
   */
  settings: Settings;
  /** The platform (file modes mean nothing on Windows), home directory and Node version. */
  system: SystemInfo;
  config: ConfigStore;
  /** The OS credential store (`login --secure-storage`); its native module loads on first use. */
  credentialStore: CredentialStore;
  prompter: Prompter;
  tracer: Tracer;
  /** The spinner shown at a terminal while a request is slow. */
  progress: Progress;
  /** A client for the service at `target`; the HTTP stack is loaded on the first call. */
  connect(target: Target, options?: ConnectOptions): Promise<ServiceClient>;
  /** `ugs serve`'s emulator, started; its bundle is loaded by this call only. */
  startEmulator(options: EmulatorOptions): Promise<RunningEmulator>;
  /**
   * The token history's writer (`history.ndjson`; off with `--no-history`): every get and rotate
   * that reached the service appends to it. Nothing is opened until the first append.
   */
  history: HistoryLog;
  /** The clock (certificate expiry in `doctor`). */
  now(): Date;
  /** `doctor`'s DNS, TCP and TLS checks; each loads its modules on its first call. */
  network: DoctorNetwork;
}

export interface ConnectOptions {
  /**
   * A bulk run: connections kept open after a GET with a body, and 429/503 answers returned at
   * once (the run's scheduler waits and slows down for all rows instead of each row alone).
   */
  bulk?: boolean;
  /** A bulk run's requests in flight: no more connections than that are opened. */
  connections?: number;
  /**
   * `--rate`: awaited before a transport retry goes out, so it takes its place in the run's
   * schedule like every other request (the run paces the first tries itself).
   */
  pace?: () => Promise<void>;
  /**
   * A dry run (`--dry-run`): no HTTP stack is loaded and nothing is sent; each request, exactly
   * as it would go on the wire in the target's dialect, is handed to this instead.
   */
  capture?: (request: HttpRequest) => Promise<HttpResponse>;
}

export interface SystemInfo {
  platform: NodeJS.Platform;
  homedir: string;
  nodeVersion: string;
  /**
   * The user running ugs (process.getuid), for the files that must be theirs (a results file
   * holds tokens); undefined where the platform has no uids (Windows), and nothing is checked.
   */
  uid: number | undefined;
  /** Resolves with a signal's name when the process is asked to stop (for `ugs serve`). */
  waitForShutdown(): Promise<string>;
}
