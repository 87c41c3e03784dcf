import { Agent } from 'undici';
import { describe, expect, it } from 'vitest';
import { EmulatorStartError } from '../../src/emulator/server.js';
import {
  call,
  getUser,
  ipv6LoopbackAvailable,
  openSocket,
  skipOutsideCi,
  startEmulator,
  tokenOf,
  userGroupOf,
  withTimersStopped,
} from '../kit/index.js';

describe('startEmulator', () => {
  it('generates one Customer and one Testing token when none are given', async () => {
    const emu = await startEmulator({ port: 0 });
    try {
      expect(emu.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(emu.apiTokens.map((t) => t.environment).sort()).toEqual(['Customer', 'Testing']);
      for (const { token } of emu.apiTokens) expect(token).toMatch(/^[0-9a-f]{64}$/);
      expect(emu.apiTokens[0]?.token).not.toBe(emu.apiTokens[1]?.token);
    } finally {
      await emu.close();
    }
  });

  it('uses the given tokens and gives each its environment', async () => {
    const emu = await startEmulator({
      port: 0,
      apiTokens: [
        { token: 'c1', environment: 'Customer' },
        { token: 'c2', environment: 'Customer' },
        { token: 't:1', environment: 'Testing' },
      ],
    });
    try {
      expect(emu.apiTokens).toHaveLength(3);
      const g = userGroupOf(await getUser(emu.url, 'c1', { user_group_id: 'x', name: 'X' }));
      const again = await getUser(emu.url, 'c2', { user_group_id: 'x', name: 'X' });
      expect(userGroupOf(again)).toEqual(g);
      const other = await getUser(emu.url, 't:1', { user_group_id: 'x', name: 'X' });
      expect(other.json?.new_user_group).toBe(true);
    } finally {
      await emu.close();
    }
  });

  it.each([
    [
      'a duplicated API token',
      {
        apiTokens: [
          { token: 'a', environment: 'Customer' as const },
          { token: 'a', environment: 'Testing' as const },
        ],
      },
    ],
    ['an empty API token', { apiTokens: [{ token: '', environment: 'Customer' as const }] }],
    ['a port out of range', { port: 70000 }],
    ['a negative slowMs', { port: 0, slowMs: -1 }],
  ])('refuses %s', async (_label, opts) => {
    await expect(startEmulator(opts)).rejects.toThrow(EmulatorStartError);
  });

  it('closes quickly with idle keep-alive connections, and twice without harm', async () => {
    const emu = await startEmulator({ port: 0 });
    const agent = new Agent();
    try {
      const replies = await Promise.all(
        Array.from({ length: 5 }, (_, i) =>
          call(emu.url, {
            dispatcher: agent,
            token: tokenOf(emu, 'Customer'),
            body: { user_group_id: `k${i}`, name: 'K' },
          }),
        ),
      );
      expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
      // Quickly: without waiting on a timer (the grace close() gives requests still running, of
      // which there are none), which a stopped clock turns into a failure, whatever the load.
      await withTimersStopped('close() with idle keep-alive connections', async () => {
        await emu.close();
        await emu.close();
      });
      await expect(call(emu.url, { token: null })).rejects.toThrow(/ECONNREFUSED|ECONNRESET/);
    } finally {
      await agent.destroy();
    }
  });

  it('closes a connection stuck in the middle of a request', async () => {
    const emu = await startEmulator({ port: 0 });
    const socket = await openSocket(emu.url);
    socket.on('error', () => undefined);
    socket.write(
      `GET /api/user HTTP/1.1\r\nHost: x\r\nAuthorization: Token ${tokenOf(emu, 'Customer')}\r\nContent-Length: 100\r\n\r\n{"user`,
    );
    await new Promise((resolve) => setTimeout(resolve, 50));
    const socketClosed = new Promise((resolve) => socket.once('close', resolve));
    // The request never completes: a close() that waited for it (Node's requestTimeout is
    // minutes) fails the test by its own timeout, whatever the machine's load.
    await emu.close();
    await socketClosed;
  });

  it('puts an IPv6 host in brackets', async (ctx) => {
    if (!(await ipv6LoopbackAvailable())) skipOutsideCi(ctx, 'no IPv6 loopback (::1) here');
    const emu = await startEmulator({ port: 0, host: '::1' });
    try {
      expect(emu.url).toMatch(/^http:\/\/\[::1\]:\d+$/);
      expect((await call(emu.url, { token: null })).status).toBe(401);
    } finally {
      await emu.close();
    }
  });
});
