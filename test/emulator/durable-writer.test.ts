import { describe, expect, it } from 'vitest';
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
});
