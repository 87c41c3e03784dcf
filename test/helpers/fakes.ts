/**
 * Test doubles for the command `run` functions: captured streams, an in-memory config store, a
 * prompter that answers by question and fails on any question it was not told about, and a
 * service client that records its calls.
 */
import { PassThrough, Writable } from 'node:stream';
import type { ConfigStore, Profile } from '../../src/config.js';
import { StreamTracer, silentTracer, type Tracer } from '../../src/debug.js';
import type { Deps } from '../../src/deps.js';
import type { IO } from '../../src/io.js';
import type { Prompter } from '../../src/prompter.js';
import type { GetUserRequest, ServiceClient, ServiceResult, Target } from '../../src/service.js';
import type { Settings } from '../../src/settings.js';

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
  constructor(public profiles: Record<string, Profile> = {}) {}
  readProfile(name: string): Profile | undefined {
    return this.profiles[name];
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

/** Answers prompts by (a part of) their message, in order; an unexpected prompt fails the test. */
export class FakePrompter implements Prompter {
  readonly asked: string[] = [];
  private readonly answers: [string, Answer][];
  /** The list is copied: one script can serve several tests. */
  constructor(answers: readonly [string, Answer][] = []) {
    this.answers = [...answers];
  }

  async input(
    message: string,
    options: { validate?: (v: string) => string | true } = {},
  ): Promise<string> {
    const answer = this.next(message);
    if (typeof answer !== 'string') throw new Error(`prompt "${message}" expected text`);
    const valid = options.validate?.(answer) ?? true;
    if (valid !== true)
      throw new Error(`answer "${answer}" to "${message}" was rejected: ${valid}`);
    return answer;
  }
  async password(
    message: string,
    options: { validate?: (v: string) => string | true } = {},
  ): Promise<string> {
    return this.input(message, options);
  }
  async confirm(message: string): Promise<boolean> {
    const answer = this.next(message);
    if (typeof answer !== 'boolean') throw new Error(`prompt "${message}" expected yes/no`);
    return answer;
  }
  /** Every answer given was asked for. */
  assertDone(): void {
    if (this.answers.length > 0) {
      throw new Error(`prompts never asked: ${this.answers.map(([m]) => m).join(', ')}`);
    }
  }
  private next(message: string): Answer {
    this.asked.push(message);
    const first = this.answers[0];
    if (first === undefined || !message.includes(first[0])) {
      throw new Error(`unexpected prompt: "${message}"`);
    }
    this.answers.shift();
    if (first[1] instanceof Error) throw first[1];
    return first[1];
  }
}

export class FakeService implements ServiceClient {
  readonly gets: GetUserRequest[] = [];
  readonly rotations: string[] = [];
  constructor(
    private readonly respond: {
      get?: (request: GetUserRequest) => Promise<ServiceResult> | ServiceResult;
      rotate?: (token: string) => Promise<ServiceResult> | ServiceResult;
    } = {},
  ) {}
  async getUser(request: GetUserRequest): Promise<ServiceResult> {
    this.gets.push(request);
    if (!this.respond.get) throw new Error('unexpected getUser call');
    return this.respond.get(request);
  }
  async rotateToken(token: string): Promise<ServiceResult> {
    this.rotations.push(token);
    if (!this.respond.rotate) throw new Error('unexpected rotateToken call');
    return this.respond.rotate(token);
  }
}

export function defaultSettings(overrides: Partial<Settings> = {}): Settings {
  return {
    profile: 'default',
    baseUrl: undefined,
    baseUrlSource: undefined,
    timeoutMs: 30_000,
    debug: false,
    noColor: false,
    noInput: false,
    insecureHttp: false,
    caFile: undefined,
    ...overrides,
  };
}

export interface TestDeps extends Deps {
  io: TestIO;
  config: MemoryConfigStore;
  prompter: FakePrompter;
  targets: Target[];
}

export function makeDeps(
  options: {
    io?: TestIO;
    settings?: Partial<Settings>;
    profiles?: Record<string, Profile>;
    prompts?: [string, Answer][];
    service?: ServiceClient;
    tracer?: Tracer;
  } = {},
): TestDeps {
  const io = options.io ?? makeIO();
  const targets: Target[] = [];
  const settings = defaultSettings(options.settings);
  return {
    io,
    settings,
    config: new MemoryConfigStore(
      options.profiles ?? {
        default: { baseUrl: 'https://ugs.example.com', apiToken: 'api-token-0123456789' },
      },
    ),
    prompter: new FakePrompter(options.prompts),
    tracer: options.tracer ?? (settings.debug ? new StreamTracer(io.stderr) : silentTracer),
    targets,
    async connect(target) {
      targets.push(target);
      if (!options.service) throw new Error('unexpected connect: no service in this test');
      return options.service;
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
