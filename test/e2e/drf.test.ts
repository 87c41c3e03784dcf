/**
 * `ugs` against a real Django REST Framework service (test/e2e/drf/drf_service.py), in both
 * routings a DRF deployment can have: `api/user/` behind Django's APPEND_SLASH redirect, and
 * `api/user` with no slash. This is the service the vendor's interface comes from; its answers
 * (TokenAuthentication, field errors, `detail`, HTML error pages) are DRF's own, not our imitation.
 *
 * Needs Debian's python3-django and python3-djangorestframework (`.ci/run` installs them); where
 * they are missing the suite is skipped with the reason, never silently passed.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  assertBuilt,
  closedPort,
  errorLines,
  makeSandbox,
  ROOT,
  removeSandboxes,
  type Sandbox,
  STACK_LINE,
  show,
  stripAnsi,
  ugs,
} from './harness.js';

const PYTHON = process.env.UGS_TEST_PYTHON ?? '/usr/bin/python3';
const SERVICE = join(ROOT, 'test', 'e2e', 'drf', 'drf_service.py');
const API_TOKEN = 'drf0123456789abcdef0123456789abcdef012345';

const hasDrf =
  spawnSync(PYTHON, ['-c', 'import django, rest_framework'], { stdio: 'ignore' }).status === 0;
if (!hasDrf) {
  console.warn(
    `skipping the DRF end-to-end suite: ${PYTHON} cannot import django and rest_framework (apt-get install python3-django python3-djangorestframework)`,
  );
}

interface DrfService {
  url: string;
  stop(): Promise<void>;
}

async function startDrf(extra: readonly string[]): Promise<DrfService> {
  const port = await closedPort();
  const child: ChildProcess = spawn(
    PYTHON,
    [SERVICE, '--port', String(port), '--token', API_TOKEN, ...extra],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let log = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 20_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the DRF service exited early:\n${log}`);
    try {
      await fetch(`${url}/`);
      break;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`the DRF service did not listen within 20 s:\n${log}`);
      }
      await new Promise((done) => setTimeout(done, 100));
    }
  }
  return {
    url,
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((done) => child.on('exit', done));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

describe.skipIf(!hasDrf).each([
  { routing: 'api/user/ behind APPEND_SLASH', flags: [] as string[], redirects: true },
  { routing: 'api/user (no trailing slash)', flags: ['--no-slash'], redirects: false },
])('ugs against a real DRF service: $routing', ({ flags, redirects }) => {
  let service: DrfService;
  let sandbox: Sandbox;

  beforeAll(async () => {
    assertBuilt();
    service = await startDrf(flags);
    sandbox = makeSandbox();
    const login = await ugs(sandbox, ['login', '--base-url', service.url, '--with-token'], {
      stdin: `${API_TOKEN}\n`,
    });
    expect(login.code, show(login)).toBe(0);
  }, 30_000);

  afterAll(async () => {
    await service?.stop();
    removeSandboxes();
  });

  it('gets or creates a group, then finds it; a slash redirect is followed once with a note', async () => {
    const created = await ugs(sandbox, ['get', '--id', 'acme', '--name', 'Acme', '--json']);
    expect(created.code, show(created)).toBe(0);
    const body = JSON.parse(created.stdout) as { new_user_group: boolean };
    expect(body.new_user_group).toBe(true);
    const notes = stripAnsi(created.stderr)
      .split('\n')
      .filter((line) => line.startsWith('note:'));
    if (redirects) {
      expect(notes, show(created)).toHaveLength(1);
      expect(notes[0]).toContain('--api-path /api/user/');
    } else {
      expect(notes, show(created)).toEqual([]);
    }

    const found = await ugs(sandbox, ['get', '--id', 'acme', '--name', 'Acme', '--field', 'token']);
    expect(found.code, show(found)).toBe(0);
    expect(found.stdout).toMatch(/^[0-9a-f]{64}\n$/);
  });

  it('rotates through the same routing, and the old token is then refused with the token hint', async () => {
    const token = (
      await ugs(sandbox, ['get', '--id', 'rot', '--name', 'Rot', '--field', 'token'])
    ).stdout.trim();
    const rotated = await ugs(
      sandbox,
      ['rotate', '--current-token-stdin', '--yes', '--field', 'api_environment_tag'],
      { stdin: token },
    );
    expect(rotated.code, show(rotated)).toBe(0);
    expect(rotated.stdout).toBe('Customer\n');

    const again = await ugs(sandbox, ['rotate', '--current-token-stdin', '--yes'], {
      stdin: token,
    });
    expect(again.code, show(again)).toBe(1);
    expect(errorLines(again.stderr).join('\n')).toContain('Not found.');
    const hint = stripAnsi(again.stderr);
    expect(hint).toMatch(/hint:.*token/);
    expect(hint).not.toMatch(/hint:.*--base-url/);
  });

  it('with --api-path set to the routed path, sends no redirect note', async () => {
    const path = redirects ? '/api/user/' : '/api/user';
    const result = await ugs(sandbox, [
      'get',
      '--id',
      'acme',
      '--name',
      'Acme',
      '--api-path',
      path,
    ]);
    expect(result.code, show(result)).toBe(0);
    expect(stripAnsi(result.stderr)).not.toMatch(/^note:.*redirect/im);
  });

  it("reports DRF's field errors field by field", async () => {
    const result = await ugs(sandbox, ['get', '--id', 'long', '--name', 'n'.repeat(300)]);
    expect(result.code, show(result)).toBe(1);
    expect(errorLines(result.stderr).join('\n')).toContain(
      'name: Ensure this field has no more than 255 characters.',
    );
    expect(result.stderr).not.toMatch(STACK_LINE);
  });

  it('an unknown API token is exit 3 with the login hint; from UGS_API_TOKEN the hint names it', async () => {
    const fromEnv = await ugs(sandbox, ['get', '--id', 'acme', '--name', 'Acme'], {
      env: { UGS_API_TOKEN: 'wrong-token-0000' },
    });
    expect(fromEnv.code, show(fromEnv)).toBe(3);
    expect(errorLines(fromEnv.stderr).join('\n')).toContain('Invalid token.');
    expect(stripAnsi(fromEnv.stderr)).toMatch(/hint:.*UGS_API_TOKEN/);
    expect(fromEnv.stderr).not.toContain('wrong-token-0000');
  });

  it('a wrong path prefix (Django HTML 404) keeps the base-URL hint and shows no HTML', async () => {
    const result = await ugs(sandbox, [
      'get',
      '--id',
      'acme',
      '--name',
      'Acme',
      '--base-url',
      `${service.url}/nothing`,
    ]);
    expect(result.code, show(result)).toBe(1);
    expect(result.stderr).toContain('404');
    expect(result.stderr).not.toMatch(/<(html|h1|title|!doctype)/i);
    expect(stripAnsi(result.stderr)).toMatch(/hint:.*base-url/);
  });

  it("a rotate that meets Django's HTML 500 page is exit 5 with the recovery command", async () => {
    const result = await ugs(
      sandbox,
      ['rotate', '--current-token-stdin', '--yes', '--api-path', '/boom/'],
      { stdin: 'a'.repeat(64) },
    );
    expect(result.code, show(result)).toBe(5);
    expect(stripAnsi(result.stderr)).toContain('ugs get --id');
    expect(result.stderr).not.toMatch(/<(html|h1|title|!doctype)/i);
  });
});
