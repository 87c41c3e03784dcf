/**
 * The id and name prompts at a real terminal (the built binary on a pseudo-terminal): the id prompt
 * refuses a trailing space as it is typed and keeps the answer for the person to correct, and
 * `--current-token` typed on the command line gets one warning about shell history.
 */
import { randomUUID } from 'node:crypto';
import { afterEach, describe, expect, it } from 'vitest';
import {
  killAllPtys,
  loggedInTo,
  runUgs,
  STACK_LINE,
  startPty,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();
afterEach(() => killAllPtys());

const loggedIn = () => loggedInTo(emulator);

describe('prompts at a terminal', () => {
  it('the id prompt refuses a trailing space as it is typed; the person fixes it and goes on', async () => {
    const sandbox = await loggedIn();
    const id = `pty-check-${randomUUID().slice(0, 8)}`;
    const session = startPty(sandbox, ['get', '--name', 'Checked']);
    await session.waitFor('User group id');
    await session.type(`${id} \r`);
    // The message shows under the prompt, which stays open with the answer kept.
    await session.waitFor('the id has leading or trailing whitespace');
    await session.type('\x7f\r');
    await session.waitFor(/[✔√]/);
    await session.answer('Data source mapping', '');
    await session.answer('Property', '');
    const { code } = await session.finish();
    const screen = session.text();
    expect(code, screen).toBe(0);
    expect(screen).not.toMatch(STACK_LINE);
    expect(session.rest()).toContain(`Created user group ${id}`);
    // Nothing was created under the id with the space.
    const check = await runUgs(['get', '--id', id, '--name', 'x', '--json'], { sandbox });
    expect(JSON.parse(check.stdout).new_user_group).toBe(false);
  });

  it('--current-token typed on the command line: one warning about shell history', async () => {
    const sandbox = await loggedIn();
    const id = `pty-tok-${randomUUID().slice(0, 8)}`;
    const created = await runUgs(['get', '--id', id, '--name', id, '--field', 'token'], {
      sandbox,
    });
    const token = created.stdout.trim();
    const session = startPty(sandbox, ['rotate', '--current-token', token]);
    await session.waitFor(`…${token.slice(-4)}`);
    await session.type('n\r');
    const { code } = await session.finish();
    const screen = session.text().replace(/\s+/g, ' ');
    expect(code, screen).toBe(130);
    expect(screen.match(/shell history/g)).toHaveLength(1);
    expect(screen).toMatch(/--current-token-stdin/);
  });
});
