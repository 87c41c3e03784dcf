/**
 * `ugs` against a real Django REST Framework service (test/e2e/drf/drf_service.py), in both
 * routings a DRF deployment can have: `api/user/` behind Django's APPEND_SLASH redirect, and
 * `api/user` with no slash. This is the service the vendor's interface comes from; its answers
 * (TokenAuthentication, field errors, `detail`, HTML error pages) are DRF's own, not our imitation.
 *
 * Needs Debian's python3-django and python3-djangorestframework (`.ci/run` installs them); where
 * they are missing the suite is skipped with the reason, never silently passed, and under CI fails.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type DrfSite,
  describeRun,
  djangoRequiredInCi,
  drfSites,
  errorLines,
  hasRealDrf,
  makeSandbox,
  runMain,
  type Sandbox,
  STACK_LINE,
  stripAnsi,
} from '../kit/index.js';

const API_TOKEN = 'drf0123456789abcdef0123456789abcdef012345';

const drf = drfSites(API_TOKEN);
djangoRequiredInCi();
describe.skipIf(!hasRealDrf()).each([
  { routing: 'api/user/ behind APPEND_SLASH', route: 'api/user/', redirects: true },
  { routing: 'api/user (no trailing slash)', route: 'api/user', redirects: false },
])('ugs against a real DRF service: $routing', ({ route, redirects }) => {
  let service: DrfSite;
  let sandbox: Sandbox;

  beforeAll(async () => {
    service = await drf(route);
    sandbox = makeSandbox();
    const login = await runMain(['login', '--base-url', service.url, '--with-token'], {
      sandbox,
      stdin: `${API_TOKEN}\n`,
    });
    expect(login.code, describeRun(login)).toBe(0);
  }, 30_000);

  it('gets or creates a group, then finds it; a slash redirect is followed once with a note', async () => {
    const created = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--json'], { sandbox });
    expect(created.code, describeRun(created)).toBe(0);
    const body = JSON.parse(created.stdout) as { new_user_group: boolean };
    expect(body.new_user_group).toBe(true);
    const notes = stripAnsi(created.stderr)
      .split('\n')
      .filter((line) => line.startsWith('note:'));
    if (redirects) {
      expect(notes, describeRun(created)).toHaveLength(1);
      expect(notes[0]).toContain('--api-path /api/user/');
    } else {
      expect(notes, describeRun(created)).toEqual([]);
    }

    const found = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'], {
      sandbox,
    });
    expect(found.code, describeRun(found)).toBe(0);
    expect(found.stdout).toMatch(/^[0-9a-f]{64}\n$/);
  });

  it('rotates through the same routing, and the old token is then refused with the token hint', async () => {
    const token = (
      await runMain(['get', '--id', 'rot', '--name', 'Rot', '--field', 'token'], { sandbox })
    ).stdout.trim();
    const rotated = await runMain(
      ['rotate', '--current-token-stdin', '--yes', '--field', 'api_environment_tag'],
      { sandbox, stdin: token },
    );
    expect(rotated.code, describeRun(rotated)).toBe(0);
    expect(rotated.stdout).toBe('Customer\n');

    const again = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox,
      stdin: token,
    });
    expect(again.code, describeRun(again)).toBe(1);
    expect(errorLines(again.stderr).join('\n')).toContain('Not found.');
    const hint = stripAnsi(again.stderr);
    expect(hint).toMatch(/hint:.*token/);
    expect(hint).not.toMatch(/hint:.*--base-url/);
  });

  it('with --api-path set to the routed path, sends no redirect note', async () => {
    const path = redirects ? '/api/user/' : '/api/user';
    const result = await runMain(['get', '--id', 'acme', '--name', 'Acme', '--api-path', path], {
      sandbox,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(stripAnsi(result.stderr)).not.toMatch(/^note:.*redirect/im);
  });

  it("reports DRF's field errors field by field", async () => {
    const result = await runMain(['get', '--id', 'long', '--name', 'n'.repeat(300)], { sandbox });
    expect(result.code, describeRun(result)).toBe(1);
    expect(errorLines(result.stderr).join('\n')).toContain(
      'name: Ensure this field has no more than 255 characters.',
    );
    expect(result.stderr).not.toMatch(STACK_LINE);
  });

  it('an unknown API token is exit 3 with the login hint; from UGS_API_TOKEN the hint names it', async () => {
    const fromEnv = await runMain(['get', '--id', 'acme', '--name', 'Acme'], {
      sandbox,
      env: { UGS_API_TOKEN: 'wrong-token-0000' },
    });
    expect(fromEnv.code, describeRun(fromEnv)).toBe(3);
    expect(errorLines(fromEnv.stderr).join('\n')).toContain('Invalid token.');
    expect(stripAnsi(fromEnv.stderr)).toMatch(/hint:.*UGS_API_TOKEN/);
    expect(fromEnv.stderr).not.toContain('wrong-token-0000');
  });

  it('a wrong path prefix (Django HTML 404) keeps the base-URL hint and shows no HTML', async () => {
    const result = await runMain(
      ['get', '--id', 'acme', '--name', 'Acme', '--base-url', `${service.url}/nothing`],
      { sandbox },
    );
    expect(result.code, describeRun(result)).toBe(1);
    expect(result.stderr).toContain('404');
    expect(result.stderr).not.toMatch(/<(html|h1|title|!doctype)/i);
    expect(stripAnsi(result.stderr)).toMatch(/hint:.*base-url/);
  });

  it("a rotate whose view crashes after the commit (Django's HTML 500 page) is exit 5 with the recovery command", async () => {
    const token = (
      await runMain(['get', '--id', 'crash', '--name', 'Crash', '--field', 'token'], { sandbox })
    ).stdout.trim();
    await service.failNextRotation();
    const result = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox,
      stdin: token,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(stripAnsi(result.stderr)).toContain('ugs get --id');
    expect(result.stderr).not.toMatch(/<(html|h1|title|!doctype)/i);
    expect((await service.group('crash')).token).not.toBe(token);
  });
});
