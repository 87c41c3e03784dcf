import { describe, expect, it, vi } from 'vitest';
import { DurableWriter } from '../../src/emulator/persistence.js';

/** A save whose completion the test controls, recording what state each save captured. */
function harness() {
  let state = 0;
  let running = 0;
  let maxRunning = 0;
  const saves: { captured: number; finish: (ok: boolean) => void }[] = [];
  const writer = new DurableWriter(() => {
    const captured = state;
    running += 1;
    maxRunning = Math.max(maxRunning, running);
    return new Promise<void>((resolve, reject) => {
      saves.push({
        captured,
        finish: (ok) => {
          running -= 1;
          if (ok) resolve();
          else reject(new Error('disk full'));
        },
      });
    });
  });
  const change = () => {
    state += 1;
    writer.markChanged();
    const mine = state;
    let durableAt: number | undefined;
    const done = writer.sync().then(() => {
      durableAt = mine;
    });
    return { mine, done, isDurable: () => durableAt !== undefined };
  };
  return { writer, saves, change, maxRunning: () => maxRunning };
}

const tick = () => new Promise((r) => setImmediate(r));

describe('DurableWriter', () => {
  it('resolves each change only after a save that captured it', async () => {
    const h = harness();
    const a = h.change();
    await tick();
    expect(h.saves).toHaveLength(1);
    const b = h.change();
    const c = h.change();
    await tick();
    // b and c wait for the next save, which cannot start while the first runs.
    expect(h.saves).toHaveLength(1);
    h.saves[0]?.finish(true);
    await a.done;
    await tick();
    expect(b.isDurable()).toBe(false);
    expect(h.saves).toHaveLength(2);
    expect(h.saves[1]?.captured).toBe(3);
    h.saves[1]?.finish(true);
    await Promise.all([b.done, c.done]);
    expect(h.maxRunning()).toBe(1);
  });

  it('coalesces a burst into few saves', async () => {
    const h = harness();
    const first = h.change();
    await tick();
    const burst = Array.from({ length: 50 }, () => h.change());
    await tick();
    h.saves[0]?.finish(true);
    await first.done;
    await tick();
    h.saves[1]?.finish(true);
    await Promise.all(burst.map((x) => x.done));
    expect(h.saves).toHaveLength(2);
  });

  it('returns at once when nothing changed', async () => {
    const h = harness();
    await h.writer.sync();
    expect(h.saves).toHaveLength(0);
  });

  it('rejects the waiters of a failed save and retries on the next sync', async () => {
    const h = harness();
    const a = h.change();
    await tick();
    h.saves[0]?.finish(false);
    await expect(a.done).rejects.toThrow('disk full');
    const retry = h.writer.sync();
    await tick();
    expect(h.saves).toHaveLength(2);
    expect(h.saves[1]?.captured).toBe(1);
    h.saves[1]?.finish(true);
    await retry;
  });

  it('drain waits for the save in progress', async () => {
    const h = harness();
    void h.change().done;
    await tick();
    let drained = false;
    const drain = h.writer.drain().then(() => {
      drained = true;
    });
    await tick();
    expect(drained).toBe(false);
    h.saves[0]?.finish(true);
    await drain;
    expect(drained).toBe(true);
  });

  it('a save that throws synchronously fails that sync only; the next one saves; drain ends', async () => {
    // The state of the 500-forever bug: JSON.stringify threw inside save() before any promise
    // existed, `inFlight` stayed set, every later sync got the old rejection and drain spun.
    let calls = 0;
    let saved = 0;
    const writer = new DurableWriter(() => {
      calls += 1;
      if (calls === 1) {
        const circular: Record<string, unknown> = {};
        circular.self = circular;
        JSON.stringify(circular); // throws a TypeError, synchronously
      }
      saved += 1;
      return Promise.resolve();
    });
    writer.markChanged();
    await expect(writer.sync()).rejects.toThrow(TypeError);
    // The same unsaved change, asked again (the next request): a new save, not the old failure.
    // Before the fix this returned the stale rejection, and drain() spun on `inFlight` forever.
    await expect(writer.sync()).resolves.toBeUndefined();
    expect(calls).toBe(2);
    expect(saved).toBe(1);
    // Nothing is left to wait for: drain() ends without arming its time limit. (The stuck
    // rejection made it loop on that limit until it ran out.)
    const timers = vi.spyOn(globalThis, 'setTimeout');
    try {
      await writer.drain();
      expect(timers).not.toHaveBeenCalled();
    } finally {
      timers.mockRestore();
    }
  });

  it('a save that throws synchronously while others wait does not wedge them', async () => {
    let fail = true;
    let calls = 0;
    let release: (() => void) | undefined;
    const writer = new DurableWriter(() => {
      calls += 1;
      if (calls === 1) return new Promise<void>((resolve) => (release = resolve));
      if (fail) throw new Error('cannot serialise');
      return Promise.resolve();
    });
    writer.markChanged();
    const first = writer.sync();
    await tick();
    writer.markChanged();
    const second = writer.sync(); // queued behind the first; its save will throw
    release?.();
    await first;
    await expect(second).rejects.toThrow('cannot serialise');
    fail = false;
    writer.markChanged();
    await expect(writer.sync()).resolves.toBeUndefined();
    await writer.drain();
    expect(calls).toBe(3);
  });

  it('drain gives up on a save that never settles, so shutdown cannot hang', async () => {
    const writer = new DurableWriter(() => new Promise<void>(() => {}));
    writer.markChanged();
    void writer.sync().catch(() => undefined);
    await tick();
    // On a fake clock: it waits exactly its limit, neither less nor (on a loaded machine) more.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
    try {
      let drained = false;
      const drain = writer.drain(200).then(() => {
        drained = true;
      });
      await vi.advanceTimersByTimeAsync(199);
      expect(drained).toBe(false);
      await vi.advanceTimersByTimeAsync(1);
      expect(drained).toBe(true);
      await drain;
    } finally {
      vi.useRealTimers();
    }
  });
});
