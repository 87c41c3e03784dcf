import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { servedOperations } from '../../src/commands/operations.js';
import { EmulatorStartError } from '../../src/emulator/server.js';
import { type Dialect, tokenHeader } from '../../src/service/dialect.js';
import { wireOf } from '../../src/service/operation.js';
import {
  call,
  getUser,
  logLines,
  startEmulator,
  tempDir,
  tokenOf,
  userGroupOf,
} from '../kit/index.js';

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

describe('read-only API tokens', () => {
  const rw = { token: 'rw-key-0001', environment: 'Customer' as const };
  const ro = { token: 'ro-key-0002', environment: 'Customer' as const, readOnly: true as const };
  const denied = { detail: 'You do not have permission to perform this action.' };

  /** Each dialect's calls that write, with a body that would succeed for a read-write token. */
  const writes: Record<Dialect, readonly { what: string; method: string; path?: string }[]> = {
    interface: [
      { what: 'get-or-create', method: 'GET' },
      { what: 'rotate', method: 'POST' },
    ],
    explo: [
      { what: 'get-or-create', method: 'POST', path: '/api/create_user_group/' },
      { what: 'rotate', method: 'POST', path: '/api/refresh_user_group_token/' },
      { what: 'update', method: 'POST', path: '/api/update_user_group/' },
    ],
    customer: [
      { what: 'get-or-create', method: 'POST', path: '/api/create_customer/' },
      { what: 'rotate', method: 'POST', path: '/api/refresh_customer_token/' },
      { what: 'update', method: 'POST', path: '/api/update_customer/' },
    ],
  };

  async function served(dialect: Dialect) {
    const log: string[] = [];
    const emulator = await startEmulator({
      port: 0,
      dialect,
      apiTokens: [rw, ro],
      log: (line) => log.push(line),
    });
    const send = (token: string, method: string, path: string | undefined, body?: unknown) =>
      call(emulator.url, {
        method,
        ...(path !== undefined && { path }),
        token: null,
        headers: { [tokenHeader(dialect)]: `Token ${token}` },
        ...(body !== undefined && { body }),
      });
    // The body each call needs to succeed: a group that exists, and its token.
    const idField = dialect === 'customer' ? 'provided_id' : 'user_group_id';
    const createPath = writes[dialect][0]?.path;
    const group = userGroupOf(
      await send(rw.token, writes[dialect][0]?.method ?? 'POST', createPath, {
        [idField]: 'kept',
        name: 'Kept',
      }),
    );
    const bodyOf = (what: string) =>
      what === 'rotate'
        ? { current_token: group.token }
        : what === 'update'
          ? { [idField]: 'kept', name: 'Renamed' }
          : { [idField]: 'new-one', name: 'New' };
    return { emulator, send, group, bodyOf, log, idField, createPath };
  }

  it.each(['interface', 'explo', 'customer'] as const)(
    'are refused every call that changes data with 403 and DRF detail, nothing changed (%s)',
    async (dialect) => {
      const { emulator, send, group, bodyOf, log, idField, createPath } = await served(dialect);
      try {
        for (const request of writes[dialect]) {
          const reply = await send(ro.token, request.method, request.path, bodyOf(request.what));
          expect(reply.status, `${request.what}: ${reply.text}`).toBe(403);
          expect(reply.json).toMatchObject(denied);
          // As DRF: no WWW-Authenticate, since the token itself was accepted.
          expect(reply.headers['www-authenticate']).toBeUndefined();
        }
        // Nothing was created, rotated or renamed: the read-write token finds the group as it
        // was, and the id a read-only get asked for is still new.
        const method = writes[dialect][0]?.method ?? 'POST';
        const kept = await send(rw.token, method, createPath, { [idField]: 'kept', name: 'Kept' });
        expect(userGroupOf(kept)).toMatchObject({ token: group.token, name: 'Kept' });
        const fresh = await send(rw.token, method, createPath, { [idField]: 'new-one', name: 'N' });
        expect(fresh.json).toMatchObject(
          dialect === 'customer' ? { new_customer: true } : { new_user_group: true },
        );
        await logLines(log, 1 + writes[dialect].length);
        expect(log[1]).toMatch(/ 403 \d+ms refused token=…0002 read-only$/);
      } finally {
        await emulator.close();
      }
    },
  );

  it("are refused whatever writes, by each operation's own fact, delete included (every dialect)", async () => {
    for (const dialect of ['interface', 'explo', 'customer'] as const) {
      const { emulator, send } = await served(dialect);
      try {
        for (const operation of servedOperations) {
          const wire = wireOf(operation, dialect);
          if (wire === undefined || operation.route === undefined) continue;
          const reply = await send(ro.token, wire.method, wire.path, {});
          const where = `${dialect} ${wire.method} ${wire.path ?? '/api/user'}`;
          if (operation.writes) expect(reply.status, where).toBe(403);
          else expect(reply.status, where).not.toBe(403);
        }
        expect(servedOperations.some((operation) => operation.explo?.method === 'DELETE')).toBe(
          true,
        );
        const deletes = servedOperations.filter(
          (operation) => operation.explo?.method === 'DELETE',
        );
        expect(deletes.every((operation) => operation.writes)).toBe(true);
      } finally {
        await emulator.close();
      }
    }
  });

  it('still read: get_customer/ and the v2 list answer as for a read-write token', async () => {
    const { emulator, send, group } = await served('customer');
    try {
      const one = await send(ro.token, 'POST', '/api/get_customer/', { provided_id: 'kept' });
      expect(one.status).toBe(200);
      expect(userGroupOf(one).token).toBe(group.token);
      const list = await send(ro.token, 'GET', '/v2/api/customers/');
      expect(list.status).toBe(200);
      expect(list.json).toMatchObject({ total_count: 1 });
    } finally {
      await emulator.close();
    }
  });

  it('stay a 401 when the token is wrong: authentication comes first', async () => {
    const { emulator, send } = await served('explo');
    try {
      const reply = await send('not-a-key', 'POST', '/api/create_user_group/', {});
      expect(reply.status).toBe(401);
      expect(reply.json).toMatchObject({ detail: 'Invalid token.' });
    } finally {
      await emulator.close();
    }
  });

  it('are refused before the body is read: a bad body is still a 403', async () => {
    const { emulator, send } = await served('explo');
    try {
      const reply = await send(ro.token, 'POST', '/api/update_user_group/', '{not json');
      expect(reply.status).toBe(403);
      expect(reply.json).toMatchObject(denied);
    } finally {
      await emulator.close();
    }
  });
});
