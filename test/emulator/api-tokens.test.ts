import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { EmulatorStartError } from '../../src/emulator/server.js';
import { getUser, startEmulator, tempDir, tokenOf, userGroupOf } from '../kit/index.js';

let dir: string;
let dataFile: string;

beforeEach(async () => {
  dir = tempDir('api-tokens');
  dataFile = path.join(dir, 'state.json');
});

describe('API tokens generated with a data file', () => {
  it('are saved in the file at start and reused after a restart', async () => {
    const first = await startEmulator({ port: 0, dataFile });
    const generated = first.apiTokens;
    // Saved before the emulator is usable, not only after the first change.
    const saved = JSON.parse(await readFile(dataFile, 'utf8'));
    expect(saved.api_tokens).toEqual(generated);
    const group = userGroupOf(
      await getUser(first.url, tokenOf(first, 'Customer'), { user_group_id: 'a', name: 'A' }),
    );
    await first.close();

    const second = await startEmulator({ port: 0, dataFile });
    try {
      expect(second.apiTokens).toEqual(generated);
      // A login saved against the first run keeps working.
      const again = await getUser(second.url, tokenOf(first, 'Customer'), {
        user_group_id: 'a',
        name: 'A',
      });
      expect(again.status).toBe(200);
      expect(userGroupOf(again).token).toBe(group.token);
    } finally {
      await second.close();
    }
  });

  it('are not replaced by given tokens, which are never written to the file', async () => {
    const first = await startEmulator({ port: 0, dataFile });
    const generated = first.apiTokens;
    await first.close();

    const given = [{ token: 'given-secret', environment: 'Testing' as const }];
    const second = await startEmulator({ port: 0, dataFile, apiTokens: given });
    try {
      expect(second.apiTokens).toEqual(given);
      await getUser(second.url, 'given-secret', { user_group_id: 't', name: 'T' });
    } finally {
      await second.close();
    }
    const text = await readFile(dataFile, 'utf8');
    expect(text).not.toContain('given-secret');
    expect(JSON.parse(text).api_tokens).toEqual(generated);

    const third = await startEmulator({ port: 0, dataFile });
    try {
      expect(third.apiTokens).toEqual(generated);
    } finally {
      await third.close();
    }
  });

  it('are picked up from a file written before tokens were stored', async () => {
    await writeFile(dataFile, JSON.stringify({ version: 1, next_team_id: 1, user_groups: [] }));
    const first = await startEmulator({ port: 0, dataFile });
    const generated = first.apiTokens;
    await first.close();
    const second = await startEmulator({ port: 0, dataFile });
    try {
      expect(second.apiTokens).toEqual(generated);
    } finally {
      await second.close();
    }
  });

  it('are new on every start without a data file', async () => {
    const a = await startEmulator({ port: 0 });
    const b = await startEmulator({ port: 0 });
    try {
      expect(a.apiTokens).not.toEqual(b.apiTokens);
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });

  it.each([
    ['not an array', 'nope'],
    ['empty', []],
    ['a token with a space', [{ token: 'a b', environment: 'Customer' }]],
    ['an unknown environment', [{ token: 'ab', environment: 'Prod' }]],
    [
      'a duplicated token',
      [
        { token: 'ab', environment: 'Customer' },
        { token: 'ab', environment: 'Testing' },
      ],
    ],
  ])('refuse a file whose api_tokens is %s, leaving it untouched', async (_label, apiTokens) => {
    const text = JSON.stringify({
      version: 1,
      next_team_id: 1,
      user_groups: [],
      api_tokens: apiTokens,
    });
    await writeFile(dataFile, text);
    await expect(startEmulator({ port: 0, dataFile })).rejects.toThrow(EmulatorStartError);
    expect(await readFile(dataFile, 'utf8')).toBe(text);
  });
});
