/**
 * What Django itself answers before any view runs (a path no route matches, APPEND_SLASH's
 * redirect) carries no `success` field the interface could shape, so the emulator answers it as
 * the real service does, byte for byte: compared here with the real DRF service, not with our
 * idea of it. The view's refusals are DRF's own (status, `detail` or field errors, the
 * `WWW-Authenticate` challenge) plus the `success: 0` the interface document requires.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { djangoRequiredInCi, drfSites, hasRealDrf } from '../kit/drf.js';
import { call, type InProcessEmulator, type RawReply, startEmulator } from '../kit/emulator.js';

const API_TOKEN = 'parity0123456789abcdef0123456789abcdef01';
const drf = drfSites(API_TOKEN);
djangoRequiredInCi();

let emulator: InProcessEmulator;
beforeAll(async () => {
  emulator = await startEmulator({
    trailingSlash: true,
    apiTokens: [{ token: API_TOKEN, environment: 'Customer' }],
  });
});
afterAll(() => emulator?.close());

/** What a client can see of an answer, without the headers that differ by server and time. */
function seen(reply: RawReply) {
  return {
    status: reply.status,
    contentType: reply.headers['content-type'],
    contentLength: reply.headers['content-length'],
    location: reply.headers.location,
    body: reply.text,
  };
}

describe.skipIf(!hasRealDrf())('the emulator answers as Django where no view runs', () => {
  it.each([
    ['GET', '/nowhere/'],
    ['POST', '/api/users/'],
    ['GET', '/api/user/extra'],
    ['GET', '/api/user'],
    ['POST', '/api/user?x=1'],
  ])('%s %s', async (method, path) => {
    const site = await drf('api/user/');
    const request = { method, path, token: API_TOKEN, body: { current_token: 'x' } };
    const [real, emulated] = await Promise.all([
      call(site.url, request),
      call(emulator.url, request),
    ]);
    expect(seen(emulated)).toEqual(seen(real));
  });
});

describe.skipIf(!hasRealDrf())("the emulator refuses as DRF's view does, plus success: 0", () => {
  const group = { name: 'Acme', user_group_id: 'acme' };
  it.each([
    ['no Authorization', { token: null, body: group }],
    ['an unknown API token', { token: 'not-a-known-token', body: group }],
    ['Get User without its fields', { body: {} }],
    ['a list for a body', { body: [group] }],
    ['a mapping that is not an object', { body: { ...group, mapping: 1 } }],
    ['another method', { method: 'PUT', body: group }],
    ['another content type', { body: group, headers: { 'content-type': 'text/plain' } }],
    ['Rotate without current_token', { method: 'POST', body: {} }],
    ['Rotate with a token nobody has', { method: 'POST', body: { current_token: 'nobody' } }],
  ])('%s', async (_name, request) => {
    const site = await drf('api/user/');
    const sent = { path: '/api/user/', token: API_TOKEN, ...request };
    const [real, emulated] = await Promise.all([call(site.url, sent), call(emulator.url, sent)]);
    expect(real.status).toBeGreaterThanOrEqual(400);
    expect(emulated.status).toBe(real.status);
    expect(emulated.headers['www-authenticate']).toBe(real.headers['www-authenticate']);
    expect(emulated.json).toEqual({ success: 0, ...real.json });
  });
});
