/**
 * A stateful service for tests of the built binary: the real emulator, in-process, behind the
 * recording server (server.ts), so a test sees every request ugs sent and every answer it got,
 * and can script faults for the next requests before the emulator answers again.
 */
import { onTestFinished } from 'vitest';
import { makeSandbox, type Sandbox, writeConfig } from './binary.js';
import {
  type ApiToken,
  call,
  getUser,
  type InProcessEmulator,
  startEmulator,
  startedForFile,
  type UserGroupReply,
  userGroupOf,
} from './emulator.js';
import {
  type ForwardedAnswer,
  forwardTo,
  type RecordedRequest,
  type Reply,
  startServer,
  type TestServer,
} from './server.js';

export interface ServiceRequest extends RecordedRequest {
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export interface Service {
  /** Base URL ugs is given (with the path prefix, if any). */
  readonly url: string;
  readonly requests: ServiceRequest[];
  /** What the emulator answered to each forwarded request, in order. */
  readonly answers: ForwardedAnswer[];
  readonly emulator: InProcessEmulator;
  readonly server: TestServer;
  /** The next requests get these replies, in order; then the emulator answers again. */
  fail(...replies: Reply[]): void;
  /** Every request from now on gets this reply. */
  failAlways(reply: Reply): void;
  /** Creates a group as an earlier Get User would have (the request is not recorded). */
  seed(id: string, name: string): Promise<UserGroupReply>;
  /** Ids of the groups the emulator created for requests through this service, in order. */
  createdIds(): string[];
  /** The group with this id as the emulator holds it now; fails when there is none. */
  group(id: string): Promise<UserGroupReply>;
  close(): Promise<void>;
}

/** The emulator accepting `apiTokens` (as Customer tokens), behind a recording server. */
export interface ServiceOptions {
  prefix?: string;
  /**
   * `explo`: the emulator speaks the vendor's API (`ugs serve --dialect explo`); `customer`: its
   * Customer API (`ugs serve --dialect customer`).
   */
  dialect?: 'interface' | 'explo' | 'customer';
  /** `ugs serve --embed-secret`: the emulator's embed secrets (generate_jwt/, the embed check). */
  embedSecrets?: { kid: string; secret: string }[];
}

/** The service of a test file (startService, started before its tests and closed after). */
export function useService(apiTokens: readonly string[], options: ServiceOptions = {}): Service {
  return startedForFile('useService(): the service', () => startService(apiTokens, options));
}

export async function startService(
  apiTokens: readonly string[],
  options: ServiceOptions = {},
): Promise<Service> {
  const prefix = options.prefix ?? '';
  const explo = options.dialect === 'explo';
  const customer = options.dialect === 'customer';
  const emulator = await startEmulator({
    apiTokens: apiTokens.map((token): ApiToken => ({ token, environment: 'Customer' })),
    ...(options.dialect !== undefined &&
      options.dialect !== 'interface' && { dialect: options.dialect }),
    ...(options.embedSecrets !== undefined && { embedSecrets: options.embedSecrets }),
  });
  const answers: ForwardedAnswer[] = [];
  const forward = forwardTo(emulator.url, answers, prefix);
  const server = await startServer(forward);
  const [token] = apiTokens;
  const direct = (id: string, name: string) => {
    if (token === undefined) throw new Error('a service without API tokens has no groups');
    const body = { user_group_id: id, name };
    if (customer) {
      return call(emulator.url, {
        method: 'POST',
        path: '/api/create_customer/',
        token: null,
        headers: { 'explo-authorization': `Token ${token}` },
        body: { provided_id: id, name },
      });
    }
    if (!explo) return getUser(emulator.url, token, body);
    return call(emulator.url, {
      method: 'POST',
      path: '/api/create_user_group/',
      token: null,
      headers: { 'explo-authorization': `Token ${token}` },
      body,
    });
  };
  return {
    url: `${server.url}${prefix}`,
    get requests() {
      return server.requests.map((request) => ({ ...request, json: parseJson(request.body) }));
    },
    answers,
    emulator,
    server,
    fail: (...replies) => server.script(...replies, forward),
    failAlways: (reply) => server.script(reply),
    createdIds: () =>
      answers.flatMap(({ body }) => {
        const answer = body as {
          new_user_group?: unknown;
          user_group?: { provided_id?: unknown };
          new_customer?: unknown;
          customer?: { provided_id?: unknown };
        };
        const id = (answer?.user_group ?? answer?.customer)?.provided_id;
        const created = answer?.new_user_group ?? answer?.new_customer;
        return created === true && typeof id === 'string' ? [id] : [];
      }),
    seed: async (id, name) => userGroupOf(await direct(id, name)),
    async group(id) {
      const reply = await direct(id, 'looked up by the test');
      if ((reply.json?.new_user_group ?? reply.json?.new_customer) !== false) {
        throw new Error(`the service held no group ${id} (the look-up created it)`);
      }
      return userGroupOf(reply);
    },
    async close() {
      await server.close();
      await emulator.close();
    },
  };
}

/** A service for the current test only: closed when the test finishes. */
export async function serviceForTest(
  apiTokens: readonly string[],
  options: ServiceOptions = {},
): Promise<Service> {
  const service = await startService(apiTokens, options);
  onTestFinished(() => service.close());
  return service;
}

/**
 * serviceForTest plus a fresh sandbox whose default profile points at it with `apiToken` (and
 * any `profile` fields added, e.g. a dialect): the setup of most tests that run `ugs get`.
 */
export async function serviceWithProfile(
  apiToken: string,
  options: ServiceOptions = {},
  profile: Record<string, string> = {},
): Promise<{ sb: Sandbox; service: Service }> {
  const service = await serviceForTest([apiToken], options);
  const sb = makeSandbox();
  writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken, ...profile } } });
  return { sb, service };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
