/**
 * Test doubles for the command `run` functions: captured streams, an in-memory config store, a
 * prompter that answers by question and fails on any question it was not told about, a service
 * client that records its calls, and canned service answers.
 */
import { PassThrough, Writable } from 'node:stream';
import { expect } from 'vitest';
import { type OperationName, operations } from '../../src/commands/operations.js';
import type { ConfigStore, Profile } from '../../src/config/config.js';
import { type CredentialStore, CredentialStoreError } from '../../src/config/secure-store.js';
import type { Deps, SystemInfo } from '../../src/context/factory.js';
import { parseSettings, type Settings } from '../../src/context/settings.js';
import { ApiError, UsageError } from '../../src/errors.js';
import { type HistoryLog, noHistory } from '../../src/history/log.js';
import type { Prompter, Validate } from '../../src/input/prompter.js';
import type { GetUserRequest } from '../../src/operations/get-user/operation.js';
import { StreamTracer, silentTracer, type Tracer } from '../../src/output/debug.js';
import { createOutput } from '../../src/output/output.js';
import { noProgress, type Progress } from '../../src/output/spinner.js';
import type { IO } from '../../src/platform/io.js';
import type { ProbeResult } from '../../src/service/probe.js';
import type { ServiceClient, ServiceResult } from '../../src/service/service.js';
import type { Target } from '../../src/service/target.js';
import type { DoctorNetwork } from '../../src/transport/network.js';

export type { Deps, Settings };

export class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

export interface TestIO extends IO {
  stdout: Capture;
  stderr: Capture;
  stdin: PassThrough;
}

export function makeIO(
  options: Partial<Omit<IO, 'stdout' | 'stderr' | 'stdin'>> & { stdinText?: string } = {},
): TestIO {
  const stdin = new PassThrough();
  if (options.stdinText !== undefined) stdin.end(options.stdinText);
  const { stdinText: _ignored, ...rest } = options;
  return {
    stdin,
    stdout: new Capture(),
    stderr: new Capture(),
    stdinIsTTY: false,
    stdoutIsTTY: false,
    stderrIsTTY: false,
    env: {},
    ...rest,
  };
}

/** A terminal on every stream, as a person at a keyboard has. */
export function terminalIO(options: Partial<Omit<IO, 'stdout' | 'stderr' | 'stdin'>> = {}): TestIO {
  return makeIO({ stdinIsTTY: true, stdoutIsTTY: true, stderrIsTTY: true, ...options });
}

export class MemoryConfigStore implements ConfigStore {
  readonly path = '/fake/ugs/config.json';
  writes = 0;
  defaultProfile: string | undefined;
  constructor(public profiles: Record<string, Profile> = {}) {}
  readProfile(name: string): Profile | undefined {
    return this.profiles[name];
  }
  listProfiles(): Record<string, Profile> {
    return { ...this.profiles };
  }
  readDefaultProfile(): string | undefined {
    return this.defaultProfile;
  }
  async setDefaultProfile(
    name: string,
    check?: (profiles: Readonly<Record<string, Profile>>) => void,
  ): Promise<void> {
    check?.({ ...this.profiles });
    this.writes++;
    this.defaultProfile = name;
  }
  async removeProfile(name: string): Promise<{ wasDefault: boolean }> {
    this.writes++;
    delete this.profiles[name];
    const wasDefault = this.defaultProfile === name;
    if (wasDefault) this.defaultProfile = undefined;
    return { wasDefault };
  }
  async protectProfile(name: string, production: boolean): Promise<{ wasDefault: boolean }> {
    this.writes++;
    const current = this.profiles[name];
    if (current === undefined) return { wasDefault: false };
    const { production: _old, ...rest } = current;
    this.profiles[name] = production ? { ...rest, production: true } : rest;
    const wasDefault = production && this.defaultProfile === name;
    if (wasDefault) this.defaultProfile = undefined;
    return { wasDefault };
  }
  async updateProfile(
    name: string,
    change: (current: Profile | undefined) => Profile | undefined,
  ): Promise<void> {
    this.writes++;
    const next = change(this.profiles[name]);
    if (next === undefined) delete this.profiles[name];
    else this.profiles[name] = next;
  }
}

type Answer = string | boolean | Error;
export type PromptKind = 'input' | 'password' | 'confirm';

/**
 * The OS credential store in memory. `unreachable` makes every call fail as a headless machine's
 * store does; `calls` counts calls, so a test can tell the store was never touched.
 */
export class MemoryCredentialStore implements CredentialStore {
  readonly name = 'Fake Keychain';
  readonly secrets = new Map<string, string>();
  unreachable: string | undefined;
  calls = 0;
  constructor(secrets: Record<string, string> = {}) {
    for (const [account, secret] of Object.entries(secrets)) this.secrets.set(account, secret);
  }
  async get(account: string): Promise<string | undefined> {
    this.check();
    return this.secrets.get(account);
  }
  async set(account: string, secret: string): Promise<void> {
    this.check();
    this.secrets.set(account, secret);
  }
  async delete(account: string): Promise<boolean> {
    this.check();
    return this.secrets.delete(account);
  }
  private check(): void {
    this.calls++;
    if (this.unreachable !== undefined) throw new CredentialStoreError(this.unreachable);
  }
}

export interface PromptCall {
  kind: PromptKind;
  message: string;
  default: string | boolean | undefined;
  validate: Validate | undefined;
}

/**
 * Answers prompts in order, each matched by (a part of) its message and, when the script names
 * one, by its kind (a masked `password` is not an `input`); an unexpected prompt is an error.
 * Records every prompt shown, with its default and validator.
 */
export class FakePrompter implements Prompter {
  readonly calls: PromptCall[] = [];
  private readonly script: [PromptKind | undefined, string, Answer][];
  /** The list is copied: one script can serve several tests. */
  constructor(script: readonly ([string, Answer] | [PromptKind, string, Answer])[] = []) {
    this.script = script.map((entry) =>
      entry.length === 2 ? [undefined, entry[0], entry[1]] : [entry[0], entry[1], entry[2]],
    );
  }
  /** The messages of every prompt shown. */
  get asked(): string[] {
    return this.calls.map((call) => call.message);
  }

  async input(message: string, options: { default?: string; validate?: Validate } = {}) {
    return this.text('input', message, options);
  }
  async password(message: string, options: { validate?: Validate } = {}) {
    return this.text('password', message, options);
  }
  async confirm(message: string, options: { default?: boolean } = {}): Promise<boolean> {
    const answer = this.next('confirm', message, options.default, undefined);
    if (typeof answer !== 'boolean') throw new Error(`prompt "${message}" expected yes/no`);
    return answer;
  }
  /** Every scripted answer was asked for. */
  assertDone(): void {
    if (this.script.length > 0) {
      throw new Error(`prompts never asked: ${this.script.map(([, m]) => m).join(', ')}`);
    }
  }

  private async text(
    kind: PromptKind,
    message: string,
    options: { default?: string; validate?: Validate },
  ): Promise<string> {
    const answer = this.next(kind, message, options.default, options.validate);
    if (typeof answer !== 'string') throw new Error(`prompt "${message}" expected text`);
    const valid = options.validate?.(answer) ?? true;
    if (valid !== true)
      throw new Error(`answer "${answer}" to "${message}" was rejected: ${valid}`);
    return answer;
  }

  private next(
    kind: PromptKind,
    message: string,
    defaultValue: string | boolean | undefined,
    validate: Validate | undefined,
  ): Answer {
    this.calls.push({ kind, message, default: defaultValue, validate });
    const first = this.script[0];
    if (
      first === undefined ||
      (first[0] !== undefined && first[0] !== kind) ||
      !message.includes(first[1])
    ) {
      throw new Error(`unexpected ${kind} prompt: "${message}"`);
    }
    this.script.shift();
    if (first[2] instanceof Error) throw first[2];
    return first[2];
  }
}

type Handlers = {
  [Name in OperationName]?: (
    input: Parameters<ServiceClient[Name]>[0],
  ) => Awaited<ReturnType<ServiceClient[Name]>> | ReturnType<ServiceClient[Name]>;
};

/** One call a fake service received. */
export interface ServiceCall {
  operation: OperationName;
  input: unknown;
}

/**
 * A service client typed over the operations (commands/operations.ts): each operation a test lists
 * answers with its handler, and any other throws when called. Its methods are made from the
 * registry, so adding an operation changes no test that does not use it.
 */
export function fakeService(handlers: Handlers = {}): ServiceClient & { calls: ServiceCall[] } {
  const calls: ServiceCall[] = [];
  const client = { calls } as ServiceClient & { calls: ServiceCall[] };
  for (const name of Object.keys(operations) as OperationName[]) {
    Object.defineProperty(client, name, {
      enumerable: true,
      value: async (input: never) => {
        calls.push({ operation: name, input });
        const handler = handlers[name] as ((input: never) => unknown) | undefined;
        if (handler === undefined) throw new Error(`unexpected ${name} call`);
        return handler(input);
      },
    });
  }
  return client;
}

// The operation methods come from fakeService: the class declares none of them itself.
export interface FakeService extends ServiceClient {}

/** fakeService with get/rotate shorthands, and the requests of each kept apart. */
// biome-ignore lint/suspicious/noUnsafeDeclarationMerging: the constructor assigns every method the interface declares
export class FakeService {
  readonly gets: GetUserRequest[] = [];
  readonly rotations: string[] = [];
  constructor(
    respond: {
      get?: (request: GetUserRequest) => Promise<ServiceResult> | ServiceResult;
      rotate?: (token: string) => Promise<ServiceResult> | ServiceResult;
      /** Doctor's probe (a bulk run also sends it while the service is unavailable). */
      probe?: () => Promise<ProbeResult> | ProbeResult;
    } = {},
  ) {
    const { get, rotate, probe } = respond;
    const client = fakeService({
      ...(get && { getUser: get }),
      ...(rotate && { rotateToken: rotate }),
      ...(probe && { probe }),
    });
    for (const name of Object.keys(operations) as OperationName[]) {
      const call = client[name] as (input: never) => Promise<unknown>;
      Object.defineProperty(this, name, {
        value: (input: never) => {
          if (name === 'getUser') this.gets.push(input);
          if (name === 'rotateToken') this.rotations.push(input);
          return call(input);
        },
      });
    }
  }
}

/** The settings of a run without flags or environment, then `overrides`. */
export function defaultSettings(overrides: Partial<Settings> = {}): Settings {
  return { ...parseSettings({}, {}), ...overrides };
}

export interface TestDeps extends Deps {
  io: TestIO;
  config: MemoryConfigStore;
  credentialStore: MemoryCredentialStore;
  prompter: FakePrompter;
  targets: Target[];
}

/**
 * The machine of every fake run: Linux, a home that does not exist, Node 20, and the test's own
 * uid, so the files a test makes are the user's own.
 */
export const testSystem: SystemInfo = {
  platform: 'linux',
  homedir: '/nonexistent-home',
  nodeVersion: 'v20.0.0',
  uid: process.getuid?.(),
  waitForShutdown: () => new Promise<string>(() => {}),
};

/** A member a test did not provide: using it fails the test with what was unexpected. */
function unexpected(what: string): never {
  throw new Error(`unexpected ${what}: none in this test`);
}

export function makeDeps(
  options: {
    io?: TestIO;
    settings?: Partial<Settings>;
    profiles?: Record<string, Profile>;
    prompts?: ([string, Answer] | [PromptKind, string, Answer])[];
    service?: ServiceClient;
    tracer?: Tracer;
    credentialStore?: MemoryCredentialStore;
    progress?: Progress;
    system?: Partial<SystemInfo>;
    network?: DoctorNetwork;
    now?: () => Date;
    startEmulator?: Deps['startEmulator'];
    history?: HistoryLog;
  } = {},
): TestDeps {
  const io = options.io ?? makeIO();
  const targets: Target[] = [];
  const settings = defaultSettings(options.settings);
  const { debug, noColor, noInput, quiet } = settings;
  return {
    io,
    output: createOutput(io, settings),
    preferences: { debug, noColor, noInput, quiet },
    settings,
    system: { ...testSystem, ...options.system },
    config: new MemoryConfigStore(
      options.profiles ?? {
        default: { baseUrl: 'https://ugs.example.com', apiToken: 'api-token-0123456789' },
      },
    ),
    credentialStore: options.credentialStore ?? new MemoryCredentialStore(),
    prompter: new FakePrompter(options.prompts),
    tracer: options.tracer ?? (settings.debug ? new StreamTracer(io.stderr) : silentTracer),
    progress: options.progress ?? noProgress,
    targets,
    async connect(target) {
      targets.push(target);
      if (!options.service) throw new Error('unexpected connect: no service in this test');
      return options.service;
    },
    startEmulator: options.startEmulator ?? (() => unexpected('emulator start')),
    // Runs of a command's `run` write no history unless a test gives one.
    history: options.history ?? noHistory,
    now: options.now ?? (() => new Date()),
    network: options.network ?? {
      lookup: () => unexpected('DNS lookup'),
      connect: () => unexpected('TCP connect'),
      tls: () => unexpected('TLS handshake'),
      now: () => performance.now(),
    },
  };
}

export function groupResult(
  fields: Record<string, unknown>,
  extra: Record<string, unknown> = {},
): ServiceResult {
  const userGroup = {
    team_id: 1,
    token: 'ug-token-aaaaaaaaaaaa',
    name: 'Acme',
    provided_id: 'acme',
    ...fields,
  };
  const body = { success: 1, ...extra, user_group: userGroup };
  return {
    body,
    userGroup: userGroup as ServiceResult['userGroup'],
    created: typeof extra.new_user_group === 'boolean' ? extra.new_user_group : undefined,
  };
}

/** Swap the prompter of a deps object for a recording one. */
export function withPrompter<T extends Deps>(deps: T, prompter: Prompter): T {
  return { ...deps, prompter };
}

/**
 * A service whose Get User echoes the request, as the real one does. `created: null` leaves
 * `new_user_group` out of the answer.
 */
export function echoService(created: boolean | null = true): FakeService {
  return new FakeService({
    get: (request: GetUserRequest): ServiceResult =>
      groupResult(
        {
          name: request.name,
          provided_id: request.user_group_id,
          properties: request.properties ?? null,
        },
        created === null ? {} : { new_user_group: created },
      ),
  });
}

export const NEW_TOKEN = 'ug-token-NEW-9f8e7d6c5b4a';

export function rotateService(): FakeService {
  return new FakeService({
    rotate: () =>
      groupResult({ token: NEW_TOKEN, environment: 'Customer' }, { success: 1 }) as ServiceResult,
  });
}

/** A service that fails every call with `error`. */
export function failingService(error: Error): FakeService {
  return new FakeService({
    get: () => {
      throw error;
    },
    rotate: () => {
      throw error;
    },
  });
}

export function apiErrorWithBody(body: Record<string, unknown>, status = 400): ApiError {
  return new ApiError(`the service answered HTTP ${status}: ${String(body.error)}`, {
    status,
    body,
  });
}

/** Rejects with what `promise` rejects with, or fails when it resolves. */
export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection, but the promise resolved');
}

/** The message of the UsageError `promise` rejects with; fails on any other outcome. */
export async function usageMessage(promise: Promise<unknown>): Promise<string> {
  const error = await rejection(promise);
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}
