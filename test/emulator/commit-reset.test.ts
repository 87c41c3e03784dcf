import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../../src/emulator/server.js';
import {
  getUser,
  type RunningEmulator,
  rotate,
  startEmulator,
  tokenOf,
  userGroupOf as userGroup,
} from '../kit/emulator.js';

const running: RunningEmulator[] = [];
const dir = mkdtempSync(join(tmpdir(), 'ugs-commit-reset-'));

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the commit-reset fault', () => {
  it('is a fault kind of --fault', () => {
    expect(parseFaultSpec('commit-reset:0.5')).toEqual({ kind: 'commit-reset', rate: 0.5 });
  });

  it('commits a rotation, saves it, then drops the connection without an answer', async () => {
    const dataFile = join(dir, 'rotate.json');
    // The group is made on a clean emulator; the fault is then on for the rotation only.
    const setup = await startEmulator({ port: 0, dataFile });
    const apiToken = tokenOf(setup, 'Customer');
    const group = { user_group_id: 'cr-1', name: 'Commit Reset' };
    const oldToken = userGroup(await getUser(setup.url, apiToken, group)).token;
    await setup.close();

    const emu = await startEmulator({
      port: 0,
      dataFile,
      apiTokens: [{ token: apiToken, environment: 'Customer' }],
      faults: [{ kind: 'commit-reset', rate: 1 }],
    });
    running.push(emu);
    await expect(rotate(emu.url, apiToken, oldToken)).rejects.toThrow(
      /other side closed|ECONNRESET/,
    );
    await emu.close();
    running.length = 0;

    // Saved before the reset: a restarted emulator has it.
    expect(readFileSync(dataFile, 'utf8')).not.toContain(oldToken);
    const after = await startEmulator({
      port: 0,
      dataFile,
      apiTokens: [{ token: apiToken, environment: 'Customer' }],
    });
    running.push(after);
    const again = await rotate(after.url, apiToken, oldToken);
    expect(again.status).toBe(404); // the old token is refused: it was rotated
    const newToken = userGroup(await getUser(after.url, apiToken, group)).token;
    expect(newToken).not.toBe(oldToken);
    // The new token is the one the lost answer carried: it rotates like any current token.
    expect(userGroup(await rotate(after.url, apiToken, newToken)).provided_id).toBe('cr-1');
  });

  it('answers a request that changed nothing, such as a rotation of an unknown token', async () => {
    const emu = await startEmulator({ port: 0, faults: [{ kind: 'commit-reset', rate: 1 }] });
    running.push(emu);
    const reply = await rotate(emu.url, tokenOf(emu, 'Customer'), 'no-such-token');
    expect(reply.status).toBe(404);
  });

  it('creates a group on Get User, then drops the answer', async () => {
    const emu = await startEmulator({
      port: 0,
      faults: [{ kind: 'commit-reset', rate: 0.5 }],
      seed: 8,
    });
    running.push(emu);
    const apiToken = tokenOf(emu, 'Customer');
    const group = { user_group_id: 'cr-get', name: 'G' };
    let resets = 0;
    let reply = await getUser(emu.url, apiToken, group).catch(() => undefined);
    while (reply === undefined) {
      resets++;
      reply = await getUser(emu.url, apiToken, group).catch(() => undefined);
    }
    // Seed 8 drops the first answer only, so the group already existed when an answer came.
    expect(resets).toBe(1);
    expect(reply.json?.new_user_group).toBe(false);
  });
});
