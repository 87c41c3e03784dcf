/**
 * `runBulk` in-process with a fake service: the plain progress line of a long run in a log
 * (every 10 s, through an injected timer), the bar's timer at a terminal, and back-pressure from
 * a stdout that does not keep up.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type BulkOptions, runBulk } from '../../src/bulk/run.js';
import type { GetUserRequest } from '../../src/operations/get-user/operation.js';
import type { ServiceResult } from '../../src/service/service.js';
import { bulkSpecs } from '../kit/bulk.js';
import { Capture, FakeService, groupResult, makeDeps, makeIO } from '../kit/fakes.js';
import { tempDir } from '../kit/index.js';

function rowsFile(count: number): string {
  const path = join(tempDir('bulk-run'), 'rows.ndjson');
  writeFileSync(
    path,
    Array.from(
      { length: count },
      (_, i) => `${JSON.stringify({ user_group_id: `g-${i + 1}`, name: `G ${i + 1}` })}\n`,
    ).join(''),
  );
  return path;
}

function getOptions(from: string, concurrency = 2): BulkOptions {
  return {
    spec: bulkSpecs.get,
    from,
    format: 'ndjson',
    concurrency,
    output: undefined,
    resume: false,
    yes: false,
  };
}

function found(request: GetUserRequest): ServiceResult {
  return groupResult(
    { provided_id: request.user_group_id, name: request.name },
    { new_user_group: false },
  );
}

/** A Get User that answers only when `release()` is called; `waiting` counts calls held. */
function gatedService() {
  const held: (() => void)[] = [];
  let open = false;
  const service = new FakeService({
    get: (request) =>
      open
        ? found(request)
        : new Promise<ServiceResult>((resolve) => {
            held.push(() => resolve(found(request)));
          }),
  });
  return {
    service,
    get waiting() {
      return held.length;
    },
    release(count: number) {
      for (const answer of held.splice(0, count)) answer();
    },
    /** Answers every call held and every later one at once. */
    open() {
      open = true;
      this.release(held.length);
    },
  };
}

/** Escape characters made visible, so expectations can name them. */
function visible(text: string): string {
  return text.replaceAll('\u001b', '<ESC>').replaceAll('\r', '<CR>');
}

/** The injected timer: what interval was asked for, and a way to fire it. */
function manualTimer() {
  const timer = {
    intervals: [] as number[],
    ticks: [] as (() => void)[],
    cancelled: 0,
    every: (tick: () => void, ms: number) => {
      timer.intervals.push(ms);
      timer.ticks.push(tick);
      return () => {
        timer.cancelled++;
      };
    },
    fire() {
      for (const tick of timer.ticks) tick();
    },
  };
  return timer;
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !condition(); i++) await settle();
  expect(condition()).toBe(true);
}

describe('progress of a bulk run', () => {
  it('in a log: one plain line per 10 s tick with the counts so far, then the summary', async () => {
    const gate = gatedService();
    const deps = makeDeps({ service: gate.service });
    const timer = manualTimer();
    const run = runBulk(getOptions(rowsFile(4)), deps, { every: timer.every });
    await until(() => gate.waiting === 2);
    expect(timer.intervals).toEqual([10_000]);
    // A short run prints nothing until the first tick.
    expect(deps.io.stderr.text).toBe('');
    gate.release(2);
    await until(() => gate.waiting === 2);
    timer.fire();
    expect(deps.io.stderr.text).toMatch(
      /^progress: 2\/4, 50%, [\d.]+ rows\/s, eta \S+ \(2 found\)\n$/,
    );
    gate.release(2);
    await run;
    const lines = deps.io.stderr.text.trim().split('\n');
    expect(lines).toHaveLength(2);
    expect(lines[1]).toMatch(/^4 rows in \S+ \([\d.]+ rows\/s\): 4 found$/);
    expect(timer.cancelled).toBe(1);
    // Plain lines only: no bar, no carriage return, no escape sequences.
    expect(visible(deps.io.stderr.text)).not.toMatch(/<ESC>|<CR>|\[/);
  });

  it('at a terminal: a bar redrawn at most every 100 ms, only when something changed, cleared at the end', async () => {
    const gate = gatedService();
    const io = makeIO({ stderrIsTTY: true });
    const deps = makeDeps({ io, service: gate.service });
    const timer = manualTimer();
    const run = runBulk(getOptions(rowsFile(4)), deps, { every: timer.every });
    await until(() => gate.waiting === 2);
    expect(timer.intervals).toEqual([100]);
    gate.release(1);
    await until(() => gate.waiting === 2);
    timer.fire();
    expect(visible(io.stderr.text)).toMatch(
      /^<CR>\[#+\.+\] 1\/4 {2}25% {2}[\d.]+ rows\/s {2}eta \S+<ESC>\[K$/,
    );
    const drawn = io.stderr.text;
    timer.fire(); // nothing new: nothing drawn
    expect(io.stderr.text).toBe(drawn);
    gate.open();
    await run;
    expect(visible(io.stderr.text.slice(drawn.length))).toMatch(
      /^<CR><ESC>\[K4 rows in .*: 4 found\n$/,
    );
  });
});

describe('row lines at a terminal', () => {
  it('erases the bar before a row line and draws it again below it, on the one screen', async () => {
    const gate = gatedService();
    // stdout and stderr on one terminal, as a person sees them.
    const screen = new Capture();
    const io = {
      ...makeIO({ stdoutIsTTY: true, stderrIsTTY: true }),
      stdout: screen,
      stderr: screen,
    };
    const deps = makeDeps({ io, service: gate.service, settings: { noColor: true } });
    const timer = manualTimer();
    const run = runBulk(getOptions(rowsFile(3)), deps, { every: timer.every });
    await until(() => gate.waiting === 2);
    gate.release(1);
    await until(() => screen.text.includes('g-1'));
    timer.fire();
    gate.open();
    await run;
    expect(visible(screen.text)).toMatch(
      /^ROW {2}USER_GROUP_ID {2}STATUS {4}TOKEN\n {2}1 {2}g-1 {12}found {5}\u2026\w{4}\n<CR>\[#+\.+\] 1\/3 .*<ESC>\[K<CR><ESC>\[K {2}[23] {2}g-[23] .*\n {2}[23] {2}g-[23] .*\nnote: tokens are shown [\s\S]*\n3 rows in .*: 3 found\n$/,
    );
  });
});

describe('back-pressure', () => {
  it('stops starting rows while stdout does not take the records, and goes on once it drains', async () => {
    const service = new FakeService({
      get: (request) => new Promise((resolve) => setTimeout(() => resolve(found(request)), 1)),
    });
    // A reader that takes nothing until told to: every write stays buffered.
    const pending: (() => void)[] = [];
    let open = false;
    let text = '';
    const stdout = new Writable({
      highWaterMark: 64,
      write(chunk: Buffer, _encoding, callback) {
        text += chunk.toString();
        if (open) callback();
        else pending.push(callback);
      },
    });
    const io = { ...makeIO(), stdout };
    const deps = { ...makeDeps({ service }), io };
    const run = runBulk(getOptions(rowsFile(300), 4), deps, { every: manualTimer().every });
    await until(() => pending.length > 0);
    await new Promise((resolve) => setTimeout(resolve, 300));
    // Held up: only the rows in flight when the reader stopped taking records were sent.
    expect(service.gets.length).toBeLessThan(40);
    open = true;
    for (const callback of pending.splice(0)) callback();
    await run;
    expect(service.gets).toHaveLength(300);
    expect(text.trim().split('\n')).toHaveLength(300);
  });
});
