import { describe, expect, it } from 'vitest';
import {
  formatDuration,
  formatProgress,
  formatProgressLog,
  formatSummary,
  type ProgressState,
} from '../../src/bulk/progress.js';

const state: ProgressState = {
  done: 2500,
  total: 10000,
  counts: { created: 2000, found: 480, failed: 20 },
  elapsedMs: 5000,
};

describe('formatDuration', () => {
  it.each([
    [850, '850ms'],
    [1000, '1.0s'],
    [12_345, '12.3s'],
    [65_000, '1m05s'],
    [3_599_000, '59m59s'],
    [7_380_000, '2h03m'],
  ])('%d ms -> %s', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});

describe('formatProgress', () => {
  it('draws a bar and the facts within the width', () => {
    const line = formatProgress(state, 100);
    expect(line).toBe(
      '[##########..............................] 2500/10000  25%  500 rows/s  eta 15.0s  20 failed',
    );
    expect(line.length).toBeLessThanOrEqual(100);
  });

  it('shrinks the bar, then drops facts from the end, never passing the width', () => {
    for (const width of [200, 80, 60, 40, 20, 12, 5, 0]) {
      expect(formatProgress(state, width).length, `width ${width}`).toBeLessThanOrEqual(width);
    }
    expect(formatProgress(state, 40)).toBe('2500/10000  25%  500 rows/s  eta 15.0s');
    expect(formatProgress(state, 12)).toBe('2500/10000');
  });

  it('says when the run waits for Retry-After, and shows unknown outcomes', () => {
    const line = formatProgress(
      { ...state, counts: { ...state.counts, unknown: 2 }, waitingMs: 12_000 },
      200,
    );
    expect(line).toContain('20 failed  2 unknown  throttled, waiting 12.0s');
  });

  it('says when --resume waits for the requests of an earlier run to end', () => {
    const line = formatProgress({ ...state, inFlightWaitMs: 9_000 }, 200);
    expect(line).toContain("waiting 9.0s for an earlier run's requests to end");
    expect(formatProgressLog({ ...state, inFlightWaitMs: 9_000 })).toContain(
      "waiting 9.0s for an earlier run's requests to end",
    );
  });

  it('says when the service is unavailable: since when, and when the next probe goes', () => {
    const waiting = { ...state, unavailable: { since: '14:02:07', retryInMs: 3_200 } };
    expect(formatProgress(waiting, 200)).toContain(
      '20 failed  service unavailable since 14:02:07, retrying in 4 s',
    );
    expect(formatProgressLog(waiting)).toContain(
      'service unavailable since 14:02:07, retrying in 4 s',
    );
    const probing = { ...state, unavailable: { since: '14:02:07', retryInMs: 0 } };
    expect(formatProgress(probing, 200)).toContain(
      'service unavailable since 14:02:07, retrying now',
    );
  });

  it('has no rate or eta before any time passed, and a full bar at the end', () => {
    expect(formatProgress({ done: 0, total: 5, counts: {}, elapsedMs: 0 }, 30)).toBe(
      `[${'.'.repeat(20)}] 0/5  0%`,
    );
    expect(formatProgress({ done: 5, total: 5, counts: { rotated: 5 }, elapsedMs: 2000 }, 40)).toBe(
      `[${'#'.repeat(16)}] 5/5  100%  2.5 rows/s`,
    );
  });
});

describe('formatProgressLog', () => {
  it('writes every count, without a bar', () => {
    expect(formatProgressLog(state)).toBe(
      'progress: 2500/10000, 25%, 500 rows/s, eta 15.0s (2000 created, 480 found, 20 failed)',
    );
  });
});

describe('formatSummary', () => {
  it('counts outcomes per status, elapsed time and rows per second', () => {
    expect(formatSummary({ created: 1000, found: 150, failed: 50 }, 1500)).toBe(
      '1200 rows in 1.5s (800 rows/s): 1000 created, 150 found, 50 failed',
    );
  });

  it('leaves out journal entries and zero counts', () => {
    expect(formatSummary({ rotated: 1, sending: 3, failed: 0 }, 250)).toBe(
      '1 row in 250ms (4.0 rows/s): 1 rotated',
    );
    expect(formatSummary({}, 0)).toBe('0 rows in 0ms');
  });
});
