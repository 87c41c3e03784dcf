/**
 * Django REST Framework, the real service: test/e2e/drf/drf_service.py (Debian's Django 3.2 and
 * DRF 3.14, DEBUG=False). One process serves a whole test file: each site is a recording server
 * (server.ts) forwarding to it with two headers the service reads as test plumbing, X-Test-Route
 * (where the API is routed: `api/user/` behind APPEND_SLASH's 301, `api/user`, `ugs/api/user/`
 * under a prefix) and X-Test-Space (a store of groups of its own, so tests stay independent).
 */
import { spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, expect, it } from 'vitest';
import { ROOT } from './binary.js';
import { call, firstLine, type UserGroupReply, userGroupOf } from './emulator.js';
import { forwardTo, type RecordedRequest, startServer, type TestServer } from './server.js';

const PYTHON = process.env.UGS_TEST_PYTHON ?? '/usr/bin/python3';
const SERVICE = join(ROOT, 'test', 'e2e', 'drf', 'drf_service.py');
const MISSING = `skipped: ${PYTHON} cannot import django and rest_framework (Debian: python3-django python3-djangorestframework; .ci/run installs them)`;

let available: boolean | undefined;
/** Python with Django and DRF; asked only by the files that need it (a Python start each). */
export function hasRealDrf(): boolean {
  available ??=
    spawnSync(PYTHON, ['-c', 'import django, rest_framework'], { stdio: 'ignore' }).status === 0;
  return available;
}

/** Where Django is missing the DRF tests skip; this test names why, and fails under CI. */
export function djangoRequiredInCi(): void {
  it.runIf(!hasRealDrf())(MISSING, () => expect(process.env.CI, MISSING).toBeFalsy());
}

export interface DrfSite {
  /** Base URL, with the route's prefix (`/ugs` for `ugs/api/user/`). */
  url: string;
  requests: RecordedRequest[];
  /** The group as the service holds it now: a Get User (not recorded) that must find it. */
  group(id: string): Promise<UserGroupReply>;
  /** The next rotation commits, then the view crashes: Django's own HTML 500 page. */
  failNextRotation(): Promise<void>;
}

/**
 * Sites of one service for the test file, each a fresh store of groups with the API at `route`:
 * `api/user/`, `api/user`, `ugs/api/user/`... The service starts at once, so that Django's start
 * overlaps the file's other tests, and stops after the file.
 */
export function drfSites(apiToken: string): (route: string) => Promise<DrfSite> {
  const child = hasRealDrf() ? spawn(PYTHON, [SERVICE, '--token', apiToken]) : undefined;
  const service = child && firstLine(child, 'drf_service.py');
  service?.catch(() => {}); // a failed start fails each test that asks for a site
  const fronts: TestServer[] = [];
  let spaces = 0;
  afterAll(async () => {
    await Promise.all(fronts.map((front) => front.close()));
    child?.kill();
    await service?.then(
      ({ exited }) => exited,
      () => {},
    );
  });
  return async (route) => {
    const plumbing = { 'x-test-route': route, 'x-test-space': String(++spaces) };
    if (service === undefined) throw new Error(MISSING);
    const { line: url } = await service;
    const forward = forwardTo(url);
    const front = await startServer(({ request, ...ctx }) =>
      forward({ ...ctx, request: { ...request, headers: { ...request.headers, ...plumbing } } }),
    );
    fronts.push(front);
    const direct = (method: string, path: string, body?: unknown) =>
      call(url, { method, path, body, token: apiToken, headers: plumbing });
    const prefix = route.replace(/\/?api\/user\/?$/, '');
    return {
      url: prefix === '' ? front.url : `${front.url}/${prefix}`,
      requests: front.requests,
      async group(id) {
        const reply = await direct('GET', `/${route}`, { user_group_id: id, name: 'looked up' });
        if (reply.json?.new_user_group !== false) throw new Error(`no group ${id} before`);
        return userGroupOf(reply);
      },
      async failNextRotation() {
        const reply = await direct('POST', '/_test/fail-next-rotation');
        if (reply.status !== 204) throw new Error(`fail-next-rotation: ${reply.status}`);
      },
    };
  };
}
