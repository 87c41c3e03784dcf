/**
 * The built binary against `ugs serve --trailing-slash`, the emulator's imitation of a service
 * routed like the vendor's (`/api/user/`, Django's APPEND_SLASH 301 for `/api/user`).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type InProcessEmulator,
  makeSandbox,
  runUgs,
  type Sandbox,
  describeRun as show,
  startEmulator,
  stripAnsi,
} from '../kit/index.js';

const REDIRECT_NOTE =
  /^note: the service redirected \/api\/user to \/api\/user\/;.*--api-path \/api\/user\//m;

describe('ugs against `ugs serve --trailing-slash`', () => {
  let emulator: InProcessEmulator;
  let sandbox: Sandbox;
  const ugs = (box: Sandbox, args: readonly string[], options: { stdin?: string } = {}) =>
    runUgs(args, { sandbox: box, ...options });

  beforeAll(async () => {
    emulator = await startEmulator({ trailingSlash: true });
    sandbox = makeSandbox();
    const login = await ugs(sandbox, ['login', '--base-url', emulator.url, '--with-token'], {
      stdin: `${emulator.tokenFor('Customer')}\n`,
    });
    expect(login.code, show(login)).toBe(0);
  }, 30_000);

  afterAll(async () => {
    await emulator?.close();
  });

  it('get and rotate follow the slash redirect once, each with one note', async () => {
    const created = await ugs(sandbox, [
      'get',
      '--id',
      'acme',
      '--name',
      'Acme',
      '--field',
      'token',
    ]);
    expect(created.code, show(created)).toBe(0);
    expect(stripAnsi(created.stderr)).toMatch(REDIRECT_NOTE);
    expect(stripAnsi(created.stderr).match(/^note: the service redirected/gm)).toHaveLength(1);
    const oldToken = created.stdout.trim();

    const rotated = await ugs(sandbox, ['rotate', '--current-token-stdin', '--yes', '--json'], {
      stdin: oldToken,
    });
    expect(rotated.code, show(rotated)).toBe(0);
    expect(stripAnsi(rotated.stderr)).toMatch(REDIRECT_NOTE);
    const body = JSON.parse(rotated.stdout) as { user_group: Record<string, unknown> };
    expect(body.user_group.api_environment_tag).toBe('Customer');
    expect(body.user_group.token).not.toBe(oldToken);

    // Exactly one rotation happened: the old token is now unknown to the service.
    const again = await ugs(sandbox, ['rotate', '--current-token-stdin', '--yes'], {
      stdin: oldToken,
    });
    expect(again.code, show(again)).toBe(1);
    // The history saw that rotation: the hint says when, and to which token.
    expect(stripAnsi(again.stderr)).toMatch(
      /hint: the history knows this token: .* it was rotated /,
    );
  });

  it('with --api-path /api/user/ (flag or saved by login) no redirect happens', async () => {
    const flag = await ugs(sandbox, [
      'get',
      '--id',
      'acme',
      '--name',
      'Acme',
      '--api-path',
      '/api/user/',
    ]);
    expect(flag.code, show(flag)).toBe(0);
    expect(flag.stderr).not.toMatch(/redirect/);

    const saved = makeSandbox();
    const login = await ugs(
      saved,
      ['login', '--base-url', emulator.url, '--api-path', '/api/user/', '--with-token'],
      { stdin: `${emulator.tokenFor('Customer')}\n` },
    );
    expect(login.code, show(login)).toBe(0);
    const get = await ugs(saved, ['get', '--id', 'acme', '--name', 'Acme', '--field', 'team_id']);
    expect(get.code, show(get)).toBe(0);
    expect(get.stderr).not.toMatch(/redirect/);
  });
});
