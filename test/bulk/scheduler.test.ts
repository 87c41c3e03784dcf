import { describe, expect, it } from 'vitest';
import {
  type Attempt,
  BULK_MAX_RETRY_AFTER_MS,
  type Clock,
  GROW_EVERY,
  MAX_RETRY_AFTER_MS,
  parseConcurrency,
  Scheduler,
} from '../../src/bulk/scheduler.js';
import { UsageError } from '../../src/errors.js';
import { retryAfterMs } from '../../src/transport/http.js';

/** Time moves only when the test says so. */
class FakeClock implements Clock {
  time = 0;
  private sleepers: { at: number; resolve: () => void }[] = [];
  now(): number {
    return this.time;
  }
  sleep(ms: number, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted) return resolve();
      this.sleepers.push({ at: this.time + ms, resolve });
      signal.addEventListener('abort', () => resolve(), { once: true });
    });
  }
  async advance(ms: number): Promise<void> {
    this.time += ms;
    for (const sleeper of this.sleepers.filter((s) => s.at <= this.time)) sleeper.resolve();
    this.sleepers = this.sleepers.filter((s) => s.at > this.time);
    await settle();
  }
}

/** Lets every pending promise callback run. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** Tasks that finish when the test says, recording how many ran at once. */
class FakeTasks {
  running = new Map<number, (outcome: Attempt<number>) => void>();
  started: number[] = [];
  attempts: [number, number][] = [];
  peak = 0;
  work = (item: number, attempt: number): Promise<Attempt<number>> => {
    this.started.push(item);
    this.attempts.push([item, attempt]);
    return new Promise((resolve) => {
      this.running.set(item, resolve);
      this.peak = Math.max(this.peak, this.running.size);
    });
  };
  finish(item: number): void {
    const resolve = this.running.get(item);
    if (!resolve) throw new Error(`task ${item} is not running`);
    this.running.delete(item);
    resolve({ kind: 'done', result: item });
  }
  throttle(item: number, retryAfterMs: number | undefined): void {
    const resolve = this.running.get(item);
    if (!resolve) throw new Error(`task ${item} is not running`);
    this.running.delete(item);
    resolve({ kind: 'throttled', retryAfterMs });
  }
  async finishAll(): Promise<void> {
    for (const item of [...this.running.keys()]) this.finish(item);
    await settle();
  }
}

function collect<R>(run: AsyncGenerator<R>): { results: R[]; done: Promise<void> } {
  const results: R[] = [];
  const done = (async () => {
    for await (const result of run) results.push(result);
  })();
  return { results, done };
}

const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

describe('parseConcurrency', () => {
  it.each([
    ['1', 1],
    ['8', 8],
    [' 64 ', 64],
  ])('%j -> %d', (text, value) => {
    expect(parseConcurrency(text)).toBe(value);
  });
  it.each(['0', '65', '-1', '2.5', '', 'eight', '1e1'])('refuses %j', (text) => {
    expect(() => parseConcurrency(text)).toThrow(UsageError);
    expect(() => parseConcurrency(text)).toThrow(
      /--concurrency must be a whole number from 1 to 64/,
    );
  });
});

describe('retryAfterMs, the one Retry-After reader the bulk run uses too', () => {
  it('reads seconds and HTTP dates, capped at 30 s', () => {
    expect(retryAfterMs('2', 0)).toBe(2000);
    expect(retryAfterMs('0', 0)).toBe(0);
    expect(retryAfterMs('3600', 0)).toBe(MAX_RETRY_AFTER_MS);
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterMs('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5000);
    expect(retryAfterMs('Wed, 31 Dec 2025 00:00:00 GMT', now)).toBe(0);
  });
  it('gives undefined for a missing or unreadable value', () => {
    expect(retryAfterMs(undefined, 0)).toBeUndefined();
    expect(retryAfterMs('soon', 0)).toBeUndefined();
    expect(retryAfterMs('-1', 0)).toBeUndefined();
    expect(retryAfterMs('1.5', 0)).toBeUndefined();
  });
});

describe('Scheduler', () => {
  it('keeps at most N tasks in flight and yields in completion order', async () => {
    const tasks = new FakeTasks();
    const scheduler = new Scheduler(tasks.work, { concurrency: 3, clock: new FakeClock() });
    const { results, done } = collect(scheduler.run(range(7)));
    await settle();
    expect(tasks.started).toEqual([1, 2, 3]);
    tasks.finish(3);
    tasks.finish(1);
    await settle();
    expect(results).toEqual([3, 1]);
    expect(tasks.started).toEqual([1, 2, 3, 4, 5]);
    while (tasks.running.size > 0) await tasks.finishAll();
    await done;
    expect(results.sort()).toEqual(range(7));
    expect(tasks.peak).toBe(3);
  });

  it('starts the next row before it hands the finished ones to the consumer', async () => {
    const tasks = new FakeTasks();
    const scheduler = new Scheduler(tasks.work, { concurrency: 2, clock: new FakeClock() });
    const seen: string[] = [];
    const done = (async () => {
      for await (const batch of scheduler.runBatches([range(4)])) {
        // What had started when this batch reached the consumer (writing records, say).
        seen.push(`${batch.join(',')} after starts ${tasks.started.join(',')}`);
      }
    })();
    await settle();
    expect(tasks.started).toEqual([1, 2]);
    tasks.finish(1);
    await settle();
    expect(seen).toEqual(['1 after starts 1,2,3']);
    while (tasks.running.size > 0) await tasks.finishAll();
    await done;
    expect(tasks.started).toEqual([1, 2, 3, 4]);
  });

  it('pulls rows from an async source only as slots free up', async () => {
    const pulled: number[] = [];
    async function* rows() {
      for (const row of range(100)) {
        pulled.push(row);
        yield row;
      }
    }
    const tasks = new FakeTasks();
    const scheduler = new Scheduler(tasks.work, { concurrency: 4, clock: new FakeClock() });
    const { done } = collect(scheduler.run(rows()));
    await settle();
    expect(pulled.length).toBeLessThanOrEqual(5);
    while (tasks.running.size > 0) await tasks.finishAll();
    await done;
    expect(pulled).toHaveLength(100);
  });

  it('on a throttle waits for Retry-After, halves once per wave, retries the row first', async () => {
    const clock = new FakeClock();
    const tasks = new FakeTasks();
    const scheduler = new Scheduler(tasks.work, { concurrency: 8, clock });
    const { results, done } = collect(scheduler.run(range(20)));
    await settle();
    expect(tasks.started).toEqual(range(8));
    // All eight are throttled: one wave, so 8 -> 4, not 8 -> 1.
    for (const item of range(8)) tasks.throttle(item, 2000);
    await settle();
    expect(scheduler.state().limit).toBe(4);
    expect(scheduler.state().waitingMs).toBe(2000);
    expect(tasks.started).toHaveLength(8); // nothing starts during the wait
    await clock.advance(1999);
    expect(tasks.started).toHaveLength(8);
    await clock.advance(1);
    expect(tasks.started.slice(8)).toEqual([1, 2, 3, 4]);
    expect(tasks.attempts.slice(8).map(([, attempt]) => attempt)).toEqual([2, 2, 2, 2]);
    expect(tasks.running.size).toBe(4);
    // A throttle in the new wave halves again.
    tasks.throttle(1, undefined);
    await settle();
    expect(scheduler.state().limit).toBe(2);
    expect(scheduler.state().waitingMs).toBe(1000); // no Retry-After: the default second
    await clock.advance(1000);
    while (tasks.running.size > 0) {
      await tasks.finishAll();
      await clock.advance(0);
    }
    await done;
    expect(results.sort((a, b) => a - b)).toEqual(range(20));
  });

  it('caps a long Retry-After at 120 s (a rate limit window is often a minute)', async () => {
    const clock = new FakeClock();
    const tasks = new FakeTasks();
    const scheduler = new Scheduler(tasks.work, { concurrency: 1, clock });
    const { done } = collect(scheduler.run(range(2)));
    await settle();
    tasks.throttle(1, 10 * 60_000);
    await settle();
    expect(scheduler.state().waitingMs).toBe(BULK_MAX_RETRY_AFTER_MS);
    await clock.advance(BULK_MAX_RETRY_AFTER_MS);
    expect(tasks.running.has(1)).toBe(true);
    while (tasks.running.size > 0) await tasks.finishAll();
    await done;
  });

  it('grows back by one per 50 successes, up to the configured concurrency', async () => {
    const clock = new FakeClock();
    const tasks = new FakeTasks();
    const scheduler = new Scheduler(tasks.work, { concurrency: 4, clock });
    const { done } = collect(scheduler.run(range(400)));
    await settle();
    tasks.throttle(1, 0);
    await settle();
    expect(scheduler.state().limit).toBe(2);
    await clock.advance(0);
    let finished = 0;
    const limits: number[] = [];
    while (tasks.running.size > 0) {
      const [first] = tasks.running.keys();
      tasks.finish(first as number);
      await settle();
      finished++;
      limits.push(scheduler.state().limit);
      expect(tasks.running.size).toBeLessThanOrEqual(scheduler.state().limit);
    }
    await done;
    // The three tasks still in flight from before the halving count as successes too.
    const grewAt = limits.indexOf(3) + 1;
    expect(grewAt).toBe(GROW_EVERY);
    expect(limits.indexOf(4) + 1).toBe(2 * GROW_EVERY);
    expect(Math.max(...limits)).toBe(4);
    expect(finished).toBe(400);
  });

  it('on abort starts nothing new and lets the rows in flight finish', async () => {
    const tasks = new FakeTasks();
    const controller = new AbortController();
    const scheduler = new Scheduler(tasks.work, {
      concurrency: 3,
      signal: controller.signal,
      clock: new FakeClock(),
    });
    const { results, done } = collect(scheduler.run(range(10)));
    await settle();
    tasks.finish(2);
    await settle();
    controller.abort();
    await settle();
    expect(tasks.started).toEqual([1, 2, 3, 4]);
    let ended = false;
    void done.then(() => {
      ended = true;
    });
    await settle();
    expect(ended).toBe(false); // 1, 3 and 4 are still in flight
    await tasks.finishAll();
    await done;
    expect(results.sort()).toEqual([1, 2, 3, 4]);
    expect(tasks.started).toHaveLength(4);
  });

  it('does not start a row whose reading was under way when the abort came', async () => {
    const tasks = new FakeTasks();
    const controller = new AbortController();
    let releaseRow: (() => void) | undefined;
    async function* slowRows() {
      yield 1;
      await new Promise<void>((resolve) => {
        releaseRow = resolve;
      });
      yield 2;
    }
    const scheduler = new Scheduler(tasks.work, {
      concurrency: 4,
      signal: controller.signal,
      clock: new FakeClock(),
    });
    const { results, done } = collect(scheduler.run(slowRows()));
    await settle();
    expect(tasks.started).toEqual([1]);
    controller.abort();
    releaseRow?.();
    await settle();
    await tasks.finishAll();
    await done;
    expect(tasks.started).toEqual([1]);
    expect(results).toEqual([1]);
  });

  it('an abort cuts a Retry-After wait short, and the throttled row is not retried', async () => {
    const clock = new FakeClock();
    const tasks = new FakeTasks();
    const controller = new AbortController();
    const scheduler = new Scheduler(tasks.work, {
      concurrency: 1,
      clock,
      signal: controller.signal,
    });
    const { results, done } = collect(scheduler.run(range(3)));
    await settle();
    tasks.throttle(1, 20_000);
    await settle();
    controller.abort();
    await done;
    expect(results).toEqual([]);
    expect(tasks.started).toEqual([1]);
  });

  it('a task that throws stops the run after the rows in flight, then rethrows', async () => {
    let calls = 0;
    const scheduler = new Scheduler<number, number>(
      async (item) => {
        calls++;
        if (item === 2) throw new Error('bug');
        await new Promise((resolve) => setTimeout(resolve, 5));
        return { kind: 'done', result: item };
      },
      { concurrency: 2 },
    );
    const results: number[] = [];
    await expect(
      (async () => {
        for await (const result of scheduler.run(range(10))) results.push(result);
      })(),
    ).rejects.toThrow('bug');
    expect(results).toEqual([1]);
    expect(calls).toBe(2);
  });
});
