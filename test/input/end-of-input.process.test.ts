/**
 * End of input (Ctrl+D on an empty line) at a prompt, on a real terminal: a cancellation (exit
 * 130, one line), never a silent exit 0 that lets `ugs login && deploy` go on with nothing saved.
 */
import { existsSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import {
  killAllPtys,
  loggedInTo,
  makeSandbox,
  type PtySession,
  STACK_LINE,
  startPty,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();
afterEach(() => killAllPtys());

const CTRL_D = '\x04';

async function expectCancelled(session: PtySession): Promise<void> {
  const { code } = await session.finish();
  const screen = session.text();
  expect(code, screen).toBe(130);
  expect(screen).toMatch(/error: cancelled: end of input \(Ctrl\+D\) at the prompt/);
  expect(screen).not.toMatch(STACK_LINE);
}

describe('Ctrl+D at a prompt cancels', () => {
  it('login, at the base URL prompt: exit 130, nothing saved', async () => {
    const sandbox = makeSandbox();
    const session = startPty(sandbox, ['login']);
    await session.waitFor('Base URL of the User Group Service');
    await session.type(CTRL_D);
    await expectCancelled(session);
    expect(existsSync(sandbox.configPath)).toBe(false);
  });

  it('login, at the masked token prompt: exit 130, nothing saved', async () => {
    const sandbox = makeSandbox();
    const session = startPty(sandbox, ['login']);
    await session.answer('Base URL of the User Group Service', emulator.url);
    await session.waitFor('API token');
    await session.type(CTRL_D);
    await expectCancelled(session);
    expect(existsSync(sandbox.configPath)).toBe(false);
  });

  it('get, at the optional pairs prompt: exit 130, nothing sent', async () => {
    const sandbox = await loggedInTo(emulator);
    const session = startPty(sandbox, ['get']);
    await session.answer('User group id', 'eof-check');
    await session.answer('User group name', 'EOF Check');
    await session.waitFor('Data source mapping');
    await session.type(CTRL_D);
    await expectCancelled(session);
  });

  it('rotate, at the confirmation: exit 130, nothing sent', async () => {
    const sandbox = makeSandbox();
    const session = startPty(sandbox, ['rotate', '--current-token', 'some-user-group-token'], {
      env: { UGS_API_TOKEN: emulator.tokenFor('Customer'), UGS_BASE_URL: emulator.url },
    });
    await session.waitFor('Rotate the token');
    await session.type(CTRL_D);
    await expectCancelled(session);
  });
});
