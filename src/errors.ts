/**
 * Every error a user can hit is one of these classes. `main` maps them to exit codes in one
 * place; nothing below `main` decides how the process ends.
 */
export const ExitCode = {
  Ok: 0,
  Api: 1,
  Usage: 2,
  Auth: 3,
  Network: 4,
  OutcomeUnknown: 5,
  Interrupted: 130,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

export interface UgsErrorOptions {
  hint?: string;
  cause?: unknown;
  body?: unknown;
  /** The answer came from a gateway saying the service is not there (502/503/504, HTML 5xx). */
  unavailable?: boolean;
}

export abstract class UgsError extends Error {
  abstract readonly exitCode: ExitCode;
  /** What the user can do next; printed as `hint:`. */
  readonly hint: string | undefined;
  /** The service's own JSON error body, when it sent one: `--json` prints it on stdout. */
  readonly body: unknown;
  /** See UgsErrorOptions: a bulk run that keeps meeting these stops (the service is down). */
  readonly unavailable: boolean;
  constructor(message: string, options: UgsErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.hint = options.hint;
    this.body = options.body;
    this.unavailable = options.unavailable === true;
  }
}

/** Bad flags, bad input, refused URL, corrupt config: the call itself has to change. */
export class UsageError extends UgsError {
  readonly exitCode = ExitCode.Usage;
}

/** The config file cannot be read or written. Same exit code as usage: the user must act. */
export class ConfigError extends UgsError {
  readonly exitCode = ExitCode.Usage;
}

/**
 * The token history or its key is not a file ugs may read, write or clear (a symbolic link, a
 * FIFO, a file that is not a history). Exit 2 like ConfigError: the user must act on the file.
 * `path` and `reason` are kept apart so that the writer's one warning can name the file at fault
 * (the key, not the history) in its own words.
 */
export class HistoryFileError extends UgsError {
  readonly exitCode = ExitCode.Usage;
  constructor(
    message: string,
    readonly path: string,
    readonly reason: string,
    options: UgsErrorOptions = {},
  ) {
    super(message, options);
  }
}

/** No API token, or the service said 401/403. */
export class AuthError extends UgsError {
  readonly exitCode = ExitCode.Auth;
  /** The service's 401 or 403; undefined when no token was there to send. */
  readonly status: number | undefined;
  constructor(message: string, options: UgsErrorOptions & { status?: number } = {}) {
    super(message, options);
    this.status = options.status;
  }
}

/** The service could not be reached, or did not answer in time (nothing was changed). */
export class NetworkError extends UgsError {
  readonly exitCode = ExitCode.Network;
  readonly code: string | undefined;
  constructor(message: string, options: UgsErrorOptions & { code?: string } = {}) {
    super(message, options);
    this.code = options.code;
  }
}

/**
 * The service answered, but the call failed: `success: 0`, an HTTP error, or a body that is not
 * the documented JSON. `body` is the parsed JSON error body, when there was one, so `--json` can
 * still show it on stdout.
 */
export class ApiError extends UgsError {
  readonly exitCode = ExitCode.Api;
  readonly status: number | undefined;
  /** The answer's Retry-After header, as sent (a 429 or 503). */
  readonly retryAfter: string | undefined;
  constructor(
    message: string,
    options: UgsErrorOptions & { status?: number; retryAfter?: string | undefined } = {},
  ) {
    super(message, options);
    this.status = options.status;
    this.retryAfter = options.retryAfter;
  }
}

/**
 * A value that `--field` cannot print as it is under a CI runner: it carries a workflow-command
 * marker. Exit 1, as an answer that cannot be given; `--json` can give it.
 */
export class CiMarkerError extends UgsError {
  readonly exitCode = ExitCode.Api;
}

/**
 * `ugs jwt inspect`: the JWT would not open the dashboard: expired, encrypted with another key,
 * for another customer or dashboard, or no JWE at all. Exit 1, as any answer that says "no".
 */
export class InvalidJwtError extends UgsError {
  readonly exitCode = ExitCode.Api;
}

/** `ugs doctor`: some check failed. Exit 1, as any answer that says "this does not work". */
export class ChecksFailedError extends UgsError {
  readonly exitCode = ExitCode.Api;
}

/** A request that changes state was sent and no answer came back: it may or may not have run. */
export class OutcomeUnknownError extends UgsError {
  readonly exitCode = ExitCode.OutcomeUnknown;
}

/** The user pressed Ctrl+C (or closed the terminal) at a prompt. */
export class CancelledError extends UgsError {
  readonly exitCode = ExitCode.Interrupted;
  constructor(message = 'cancelled') {
    super(message);
  }
}

/**
 * Stop requested by a signal (Ctrl+C outside a prompt, SIGTERM). `hint` says what the interrupted
 * work may have left behind.
 */
export class InterruptedError extends UgsError {
  readonly exitCode = ExitCode.Interrupted;
}

/** The result could not be written to stdout (full disk, I/O error); the reader did not just go. */
export class OutputError extends UgsError {
  readonly exitCode = ExitCode.Api;
  constructor(
    readonly reason: string,
    options: UgsErrorOptions = {},
  ) {
    super(`could not write the output: ${reason}`, options);
  }
}
