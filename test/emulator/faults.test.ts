import { afterEach, describe, expect, it, vi } from 'vitest';
import { FaultInjector } from '../../src/emulator/faults.js';
import {
  EmulatorStartError,
  type FaultSpec,
  parseApiTokenSpec,
  parseFaultSpec,
} from '../../src/emulator/server.js';
import {
  call,
  getUser,
  type RunningEmulator,
  startEmulator,
  tokenOf,
  withTimersStopped,
} from '../kit/index.js';

const running: RunningEmulator[] = [];

async function start(faults: FaultSpec[], extra: { seed?: number; slowMs?: number } = {}) {
  const emu = await startEmulator({ port: 0, faults, seed: 42, ...extra });
  running.push(emu);
  return emu;
}

afterEach(async () => {
  await Promise.all(running.splice(0).map((e) => e.close()));
});

let n = 0;
function body() {
  n += 1;
  return { user_group_id: `f${n}`, name: 'F' };
}

describe('fault injection', () => {
  it('500:1 always answers 500 JSON', async () => {
    const emu = await start([{ kind: '500', rate: 1 }]);
    for (let i = 0; i < 3; i++) {
      const reply = await getUser(emu.url, tokenOf(emu, 'Customer'), body());
      expect(reply.status).toBe(500);
      expect(reply.headers['content-type']).toBe('application/json');
      expect(reply.json).toEqual({ success: 0, detail: 'injected fault: internal error' });
    }
  });

  it('502-html:1 answers an HTML page', async () => {
    const emu = await start([{ kind: '502-html', rate: 1 }]);
    const reply = await getUser(emu.url, tokenOf(emu, 'Customer'), body());
    expect(reply.status).toBe(502);
    expect(reply.headers['content-type']).toBe('text/html');
    expect(reply.text).toContain('<html>');
    expect(reply.json).toBeUndefined();
  });

  it('429:1 answers with Retry-After', async () => {
    const emu = await start([{ kind: '429', rate: 1 }]);
    const reply = await getUser(emu.url, tokenOf(emu, 'Customer'), body());
    expect(reply.status).toBe(429);
    expect(reply.headers['retry-after']).toBe('1');
    expect(reply.json?.success).toBe(0);
  });

  it('reset:1 drops the connection without an answer', async () => {
    const emu = await start([{ kind: 'reset', rate: 1 }]);
    await expect(getUser(emu.url, tokenOf(emu, 'Customer'), body())).rejects.toThrow(
      /other side closed|ECONNRESET/,
    );
  });

  it('slow:1 delays the answer by slowMs and then answers normally', async () => {
    const emu = await start([{ kind: 'slow', rate: 1 }], { slowMs: 200 });
    const started = performance.now();
    const reply = await getUser(emu.url, tokenOf(emu, 'Customer'), body());
    expect(performance.now() - started).toBeGreaterThanOrEqual(190);
    expect(reply.status).toBe(200);
    expect(reply.json?.new_user_group).toBe(true);
  });

  it('does not let close() wait for a slow request: the request is answered at once', async () => {
    // Longer than any test: an answer can only come from close() cutting the delay short.
    const slowMs = 600_000;
    const emu = await startEmulator({ port: 0, faults: [{ kind: 'slow', rate: 1 }], slowMs });
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      const pending = getUser(emu.url, tokenOf(emu, 'Customer'), body());
      // The request has reached the handler once its delay is armed; before that, close()
      // would only have dropped an idle connection.
      await vi.waitFor(() => expect(timers.mock.calls.some(([, ms]) => ms === slowMs)).toBe(true), {
        timeout: 15_000,
      });
      // Without waiting on a timer: not the grace close() gives running requests, after which
      // it cuts their connections (the request would fail instead of being answered).
      await withTimersStopped('close() with a slow request', () => emu.close());
      const reply = await pending;
      expect(reply.status).toBe(200);
      expect(reply.json?.new_user_group).toBe(true);
    } finally {
      timers.mockRestore();
      await emu.close();
    }
  });

  it('injects on the same requests for the same seed, and on about half at rate 0.5', async () => {
    const pattern = async (seed: number) => {
      const emu = await start([{ kind: '500', rate: 0.5 }], { seed });
      const statuses: number[] = [];
      for (let i = 0; i < 40; i++) {
        statuses.push((await getUser(emu.url, tokenOf(emu, 'Customer'), body())).status);
      }
      return statuses;
    };
    const a = await pattern(7);
    const b = await pattern(7);
    const c = await pattern(8);
    expect(a).toEqual(b);
    expect(a).not.toEqual(c);
    const hits = a.filter((s) => s === 500).length;
    expect(hits).toBeGreaterThan(8);
    expect(hits).toBeLessThan(32);
    expect(new Set(a)).toEqual(new Set([200, 500]));
  });

  it('changes no state on a faulted request', async () => {
    const emu = await start([{ kind: '500', rate: 0.5 }], { seed: 7 });
    const same = body();
    const statuses: number[] = [];
    let reply = await getUser(emu.url, tokenOf(emu, 'Customer'), same);
    while (reply.status === 500) {
      statuses.push(reply.status);
      reply = await getUser(emu.url, tokenOf(emu, 'Customer'), same);
    }
    // Seed 7 faults the first two requests, so the check below is not vacuous.
    expect(statuses.length).toBeGreaterThan(0);
    expect(reply.json?.new_user_group).toBe(true);
  });

  it("504-html:1 answers nginx's gateway timeout page", async () => {
    const emu = await start([{ kind: '504-html', rate: 1 }]);
    const reply = await getUser(emu.url, tokenOf(emu, 'Customer'), body());
    expect(reply.status).toBe(504);
    expect(reply.headers['content-type']).toBe('text/html');
    expect(reply.text).toContain('504 Gateway Time-out');
  });

  it('for=<duration>: the fault hits from the first request until the window ends, then never', () => {
    let now = 1000;
    const injector = new FaultInjector([{ kind: '504-html', rate: 1, forMs: 3000 }], 42, () => now);
    const seen: (string | undefined)[] = [];
    for (const at of [1000, 2000, 3999, 4000, 9000]) {
      now = at;
      seen.push(injector.next());
    }
    // The window counts from the first request (at 1000), not from the start.
    expect(seen).toEqual(['504-html', '504-html', '504-html', undefined, undefined]);
  });

  it('for=<duration> given in code: a service down for a while, then answering', async () => {
    const emu = await start([{ kind: '504-html', rate: 1, forMs: 300 }]);
    expect((await getUser(emu.url, tokenOf(emu, 'Customer'), body())).status).toBe(504);
    await new Promise((resolve) => setTimeout(resolve, 350));
    expect((await getUser(emu.url, tokenOf(emu, 'Customer'), body())).status).toBe(200);
  });

  it('lets the first matching fault win', async () => {
    const emu = await start([
      { kind: '429', rate: 1 },
      { kind: '500', rate: 1 },
    ]);
    expect((await call(emu.url, { token: null })).status).toBe(429);
  });

  it('refuses an invalid fault given in code', async () => {
    await expect(startEmulator({ port: 0, faults: [{ kind: '500', rate: 2 }] })).rejects.toThrow(
      EmulatorStartError,
    );
  });
});

describe('parseFaultSpec', () => {
  it.each([
    ['500:0.2', { kind: '500', rate: 0.2 }],
    ['502-html:1', { kind: '502-html', rate: 1 }],
    ['429:0', { kind: '429', rate: 0 }],
    ['reset:1', { kind: 'reset', rate: 1 }],
    ['slow:0.5', { kind: 'slow', rate: 0.5 }],
    ['slow:.5', { kind: 'slow', rate: 0.5 }],
    ['500:1.0', { kind: '500', rate: 1 }],
    ['500:5e-1', { kind: '500', rate: 0.5 }],
    ['504-html:1', { kind: '504-html', rate: 1 }],
    ['504-html:1:for=3s', { kind: '504-html', rate: 1, forMs: 3000 }],
    ['500:0.5:for=250ms', { kind: '500', rate: 0.5, forMs: 250 }],
    ['reset:1:for=1.5s', { kind: 'reset', rate: 1, forMs: 1500 }],
    ['502-html:1:for=2m', { kind: '502-html', rate: 1, forMs: 120_000 }],
  ])('parses %s', (text, expected) => {
    expect(parseFaultSpec(text)).toEqual(expected);
  });

  it.each([
    ['', /expected <kind>:<rate>/],
    ['500', /expected <kind>:<rate>/],
    ['404:0.5', /unknown kind "404"/],
    ['500:', /rate "" must be/],
    ['500:abc', /rate "abc" must be/],
    ['500:1.5', /rate "1.5" must be/],
    ['500:-0.1', /rate "-0.1" must be/],
    ['500:NaN', /rate "NaN" must be/],
    ['500:Infinity', /rate "Infinity" must be/],
    ['500:0x1', /rate "0x1" must be/],
    [':0.5', /unknown kind ""/],
    ['504-html:1:for=', /"for=" must be for=<duration> above zero/],
    ['504-html:1:for=0s', /"for=0s" must be for=<duration> above zero/],
    ['504-html:1:for=3', /"for=3" must be for=<duration>/],
    ['504-html:1:3s', /"3s" must be for=<duration>/],
    ['504-html:1:for=3s:x', /expected <kind>:<rate>\[:for=<duration>\]/],
  ])('refuses %j', (text, message) => {
    expect(() => parseFaultSpec(text)).toThrow(EmulatorStartError);
    expect(() => parseFaultSpec(text)).toThrow(message);
  });
});

describe('parseApiTokenSpec', () => {
  it.each([
    ['abc:Customer', { token: 'abc', environment: 'Customer' }],
    ['abc:Testing', { token: 'abc', environment: 'Testing' }],
    ['a:b:c:Testing', { token: 'a:b:c', environment: 'Testing' }],
    ['abc:Customer:ro', { token: 'abc', environment: 'Customer', readOnly: true }],
    ['abc:Testing:rw', { token: 'abc', environment: 'Testing' }],
    ['a:b:Testing:ro', { token: 'a:b', environment: 'Testing', readOnly: true }],
    ['a:Testing:Customer', { token: 'a:Testing', environment: 'Customer' }],
  ])('parses %s', (text, expected) => {
    expect(parseApiTokenSpec(text)).toEqual(expected);
  });

  it.each([
    ['abc', /expected <token>:<Customer\|Testing>/],
    [':Customer', /token .* is empty/],
    ['abc:', /environment "" must be/],
    ['abc:customer', /environment "customer" must be/],
    ['abc:Production', /environment "Production" must be/],
    ['ab c:Testing', /whitespace/],
    ['Testing:abc', /environment "abc" must be/],
    ['abc:Testing:RO', /access "RO" must be ro \(read-only\) or rw \(read-write\)/],
    ['abc:Testing:readonly', /access "readonly" must be ro/],
    ['abc:Testing:', /access "" must be ro/],
    [':Testing:ro', /token .* is empty/],
  ])('refuses %j', (text, message) => {
    expect(() => parseApiTokenSpec(text)).toThrow(EmulatorStartError);
    expect(() => parseApiTokenSpec(text)).toThrow(message);
  });
});
