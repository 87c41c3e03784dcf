/**
 * The one shape every operation shares: answers classified as values, the
 * generic call path driven by an operation's declaration (retry policy, delivery risk, hints), the
 * client's methods made from the registry, the shared guards, and the global preferences main
 * falls back to when the settings could not be built.
 */
import { describe, expect, it } from 'vitest';
import { operations } from '../../src/commands/operations.js';
import { readPreferences } from '../../src/context/settings.js';
import { ApiError, NetworkError, OutcomeUnknownError } from '../../src/errors.js';
import { main } from '../../src/main.js';
import { errorCode, errorCodeInChain, isPlainObject } from '../../src/platform/guards.js';
import { classifyAnswer } from '../../src/service/answer.js';
import type { Operation } from '../../src/service/operation.js';
import { HttpServiceClient } from '../../src/service/service.js';
import {
  type HttpClient,
  type HttpRequest,
  type HttpResponse,
  ResponseTooLargeError,
  TransportError,
} from '../../src/transport/http.js';
import { makeIO } from '../kit/fakes.js';

const json = (status: number, body: unknown, headers: Record<string, string> = {}) => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  text: JSON.stringify(body),
});

describe('classifyAnswer: what an answer says, as a value', () => {
  it.each<[string, HttpResponse, string]>([
    ['a success envelope', json(200, { success: 1, user_group: {} }), 'ok'],
    ['401', json(401, { detail: 'Invalid token.' }), 'denied'],
    ['403', json(403, {}), 'denied'],
    [
      'a 404 page',
      { status: 404, headers: { 'content-type': 'text/html' }, text: '<h1>' },
      'http-error',
    ],
    ['a 500', json(500, { detail: 'boom' }), 'http-error'],
    ['success: 0', json(200, { success: 0, error: 'no such token' }), 'refused'],
    [
      'HTML with 200',
      { status: 200, headers: { 'content-type': 'text/html' }, text: '<p>' },
      'unreadable',
    ],
    ['a JSON array', json(200, [1]), 'unreadable'],
    ['no success field', json(200, { user_group: {} }), 'unreadable'],
  ])('%s is %s', (_label, response, kind) => {
    expect(classifyAnswer(response, []).kind).toBe(kind);
  });

  it("keeps the server's words, with secrets cut out and controls escaped", () => {
    const answer = classifyAnswer(json(400, { detail: 'token s3cret-value\u001b[2J bad' }), [
      's3cret-value',
    ]);
    expect(answer).toMatchObject({
      kind: 'http-error',
      message: 'the service answered HTTP 400: token [REDACTED]\\u001b[2J bad',
    });
  });
});

/** An HTTP client that answers each send with the next scripted response or error. */
function scriptedHttp(...script: (HttpResponse | Error)[]) {
  const sent: HttpRequest[] = [];
  const policies: unknown[] = [];
  const http = {
    async send(request: HttpRequest, policy: unknown) {
      sent.push(request);
      policies.push(policy);
      const next = script.shift();
      if (next === undefined) throw new Error('unexpected request');
      if (next instanceof Error) throw next;
      return next;
    },
  } as unknown as HttpClient;
  return { http, sent, policies };
}

const target = { baseUrl: new URL('https://ugs.example'), apiToken: 'api-token-0123456789' };

/** A made-up third operation: what a new one needs is its declaration, nothing in service.ts. */
const deleteGroup: Operation<string, string> = {
  method: 'POST',
  explo: { method: 'POST', path: '/api/delete_user_group/' },
  retry: { maxRetries: 0, retryStatuses: new Set(), retryErrorCodes: new Set() },
  body: (id) => ({ delete: id }),
  secrets: () => [],
  read: ({ body }) =>
    typeof body.deleted === 'string' ? body.deleted : { unreadable: 'no "deleted" field' },
  hints: { refused: 'check the id' },
};

const risky: Operation<string, string> = {
  ...deleteGroup,
  risk: {
    request: 'the deletion request',
    outcome: 'the group may or may not have been deleted',
    notDone: 'the group was not deleted',
    maybe: 'the deletion may have happened',
    check: 'look it up',
  },
};

describe('the generic call path runs any declared operation', () => {
  it('sends the declared method, body and retry policy, and returns what read() made', async () => {
    const { http, sent, policies } = scriptedHttp(json(200, { success: 1, deleted: 'acme' }));
    const client = new HttpServiceClient(http, target, 'ugs/test');
    await expect(client.call(deleteGroup, 'acme')).resolves.toBe('acme');
    expect(sent[0]?.method).toBe('POST');
    expect(JSON.parse(sent[0]?.body ?? '')).toEqual({ delete: 'acme' });
    expect(policies[0]).toBe(deleteGroup.retry);
  });

  it('every registered operation is a client method sending its own method and policy', async () => {
    // Those of the interface dialect (the Customer API's read-one is not part of it).
    const names = (Object.keys(operations) as (keyof typeof operations)[]).filter(
      (name) => operations[name].method !== undefined,
    );
    // The registry's order, with the operations this code base has now among them.
    expect(names).toEqual(expect.arrayContaining(['getUser', 'rotateToken', 'probe']));
    const ok = json(200, { success: 1, user_group: { token: 'ugt_1234567890' } });
    const { http, sent, policies } = scriptedHttp(...names.map(() => ok));
    const client = new HttpServiceClient(http, target, 'ugs/test', { operations });
    for (const name of names) {
      const call = client[name] as (input: unknown) => Promise<unknown>;
      // Whatever its answer makes of this input: the request is what is checked here.
      await call({ user_group_id: 'acme', name: 'Acme' }).catch(() => undefined);
    }
    expect(sent.map((request) => request.method)).toEqual(
      names.map((name) => operations[name].method),
    );
    expect(policies).toEqual(names.map((name) => operations[name].retry));
    expect(sent.map((request) => request.body)).toEqual(
      names.map((name) =>
        JSON.stringify(
          (operations[name].body as (input: unknown) => unknown)({
            user_group_id: 'acme',
            name: 'Acme',
          }),
        ),
      ),
    );
  });

  it('with --dialect explo each operation goes to its own vendor path, the token in Explo-Authorization', async () => {
    const ok = json(200, {
      success: 1,
      user_group: { token: 'ugt_1234567890', provided_id: 'acme' },
    });
    const { http, sent } = scriptedHttp(ok, ok, json(400, {}));
    const explo = { ...target, apiPath: '/api/user', dialect: 'explo' as const };
    const client = new HttpServiceClient(http, explo, 'ugs/test', { operations });
    await client.getUser({ user_group_id: 'acme', name: 'Acme', is_demo_group: true });
    await client.rotateToken('old-token-123');
    await client.probe();
    expect(sent.map((request) => `${request.method} ${request.url.href}`)).toEqual([
      'POST https://ugs.example/api/create_user_group/',
      'POST https://ugs.example/api/refresh_user_group_token/',
      // The probe: a refresh with no token, which cannot change anything.
      'POST https://ugs.example/api/refresh_user_group_token/',
    ]);
    for (const request of sent) {
      expect(request.headers['explo-authorization']).toBe('Token api-token-0123456789');
      expect(request.headers.authorization).toBeUndefined();
    }
    expect(JSON.parse(sent[0]?.body ?? '')).toMatchObject({ is_demo_group: true });
    expect(sent[2]?.body).toBe('{}');
  });

  it('with --dialect customer each operation goes to its Customer API path, with provided_id', async () => {
    const ok = json(200, {
      success: 1,
      customer: { token: 'ugt_1234567890', provided_id: 'acme' },
    });
    const { http, sent } = scriptedHttp(ok, ok, ok, json(400, {}));
    const customer = { ...target, apiPath: '/api/user', dialect: 'customer' as const };
    const client = new HttpServiceClient(http, customer, 'ugs/test', { operations });
    const got = await client.getUser({ user_group_id: 'acme', name: 'Acme' });
    await client.rotateToken('old-token-123');
    await client.getCustomer('acme');
    await client.probe();
    expect(sent.map((request) => `${request.method} ${request.url.href} ${request.body}`)).toEqual([
      'POST https://ugs.example/api/create_customer/ {"provided_id":"acme","name":"Acme"}',
      'POST https://ugs.example/api/refresh_customer_token/ {"current_token":"old-token-123"}',
      'POST https://ugs.example/api/get_customer/ {"provided_id":"acme"}',
      'POST https://ugs.example/api/get_customer/ {"provided_id":""}',
    ]);
    expect(got.userGroup.token).toBe('ugt_1234567890');
    for (const request of sent) {
      expect(request.headers['explo-authorization']).toBe('Token api-token-0123456789');
    }
  });

  it("a refusal carries the operation's hint; an unusable success is an ApiError", async () => {
    const { http } = scriptedHttp(json(200, { success: 0 }), json(200, { success: 1 }));
    const client = new HttpServiceClient(http, target, 'ugs/test');
    const refused = await client.call(deleteGroup, 'x').catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(ApiError);
    expect((refused as ApiError).hint).toBe('check the id');
    const unusable = await client.call(deleteGroup, 'x').catch((e: unknown) => e);
    expect(unusable).toBeInstanceOf(ApiError);
    expect((unusable as ApiError).message).toBe('no "deleted" field');
  });

  it('without a risk, a lost answer is a network error; with one, the outcome is unknown', async () => {
    const lost = () => new TransportError('socket hang up', true, { code: 'ECONNRESET' });
    const safe = new HttpServiceClient(scriptedHttp(lost()).http, target, 'ugs/test');
    const plain = await safe.call(deleteGroup, 'x').catch((e: unknown) => e);
    expect(plain).toBeInstanceOf(NetworkError);
    const atRisk = new HttpServiceClient(scriptedHttp(lost()).http, target, 'ugs/test');
    const unknown = await atRisk.call(risky, 'x').catch((e: unknown) => e);
    expect(unknown).toBeInstanceOf(OutcomeUnknownError);
    expect((unknown as OutcomeUnknownError).message).toBe(
      'the deletion request was sent but no answer came back (socket hang up): the group may or may not have been deleted',
    );
    expect((unknown as OutcomeUnknownError).hint).toBe('look it up');
  });

  it.each<[string, boolean, HttpResponse | Error]>([
    ['a 5xx', true, json(502, {})],
    ['an unusable 2xx', true, json(200, { success: 1 })],
    ['a 2xx too large to read', true, new ResponseTooLargeError('too large', { status: 200 })],
    ['a 4xx too large to read', false, new ResponseTooLargeError('too large', { status: 413 })],
    ['a 4xx', false, json(400, {})],
    ['a refusal', false, json(200, { success: 0 })],
    ['a refused connection', false, new TransportError('refused', false, { code: 'ECONNREFUSED' })],
  ])('with a risk, %s: outcome unknown is %s', async (_label, unknown, answer) => {
    const client = new HttpServiceClient(scriptedHttp(answer).http, target, 'ugs/test');
    const error = await client.call(risky, 'x').catch((e: unknown) => e);
    expect(error instanceof OutcomeUnknownError).toBe(unknown);
    if (unknown)
      expect((error as OutcomeUnknownError).hint).toBe(
        'the deletion may have happened; look it up',
      );
  });

  it("a refused redirect says the operation's notDone", async () => {
    const redirect = { status: 302, headers: { location: 'https://elsewhere.example/' }, text: '' };
    const client = new HttpServiceClient(scriptedHttp(redirect).http, target, 'ugs/test');
    const error = await client.call(risky, 'x').catch((e: unknown) => e);
    expect((error as ApiError).message).toMatch(
      /which ugs does not follow: the group was not deleted$/,
    );
  });
});

describe('guards', () => {
  it('isPlainObject accepts objects only', () => {
    expect([{}, [], null, 'x', 1].map(isPlainObject)).toEqual([true, false, false, false, false]);
  });
  it('errorCode reads the error itself; errorCodeInChain also its causes', () => {
    const wrapped = new Error('fetch failed', {
      cause: Object.assign(new Error(), { code: 'ECONNRESET' }),
    });
    expect(errorCode(wrapped)).toBeUndefined();
    expect(errorCodeInChain(wrapped)).toBe('ECONNRESET');
    expect(errorCode(Object.assign(new Error(), { code: 'ENOENT' }))).toBe('ENOENT');
  });
});

describe('preferences when the settings cannot be built', () => {
  const system = {
    platform: process.platform,
    homedir: '/nonexistent-home',
    nodeVersion: 'v20.0.0',
    uid: process.getuid?.(),
    waitForShutdown: () => new Promise<string>(() => {}),
  };

  it('readPreferences maps commander flags', () => {
    expect(readPreferences({ debug: true, color: false, input: false, quiet: true })).toEqual({
      debug: true,
      noColor: true,
      noInput: true,
      quiet: true,
    });
    expect(readPreferences({})).toEqual({
      debug: false,
      noColor: false,
      noInput: false,
      quiet: false,
    });
  });

  it('a bad --timeout still honours --debug and --no-color given after it', async () => {
    const io = makeIO({ env: { FORCE_COLOR: '1', UGS_CONFIG_DIR: '/nonexistent-config' } });
    const code = await main(['get', '--timeout', 'abc', '--debug', '--no-color'], io, system);
    expect(code).toBe(2);
    expect(io.stderr.text).toMatch(/^error: --timeout expects/);
    expect(io.stderr.text).toMatch(/^UsageError: --timeout expects/m);
    expect(io.stderr.text).not.toContain('\u001b[');
  });

  it('without them, the same error is coloured (FORCE_COLOR) and has no stack', async () => {
    const io = makeIO({ env: { FORCE_COLOR: '1', UGS_CONFIG_DIR: '/nonexistent-config' } });
    expect(await main(['get', '--timeout', 'abc'], io, system)).toBe(2);
    expect(io.stderr.text).toContain('\u001b[');
    expect(io.stderr.text).not.toMatch(/^UsageError/m);
  });
});
