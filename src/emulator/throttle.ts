/**
 * `ugs serve --rate-limit <n>/<s|min>`: throttling as Django REST Framework's
 * `SimpleRateThrottle` does it, so a client can be tried locally against the limit the vendor
 * publishes (180 requests a minute per client IP). Per key (the client's IP), a sliding window
 * of the times of the requests it let through: a request is refused while the window holds `n`
 * of them, and the wait it names is the time until the oldest leaves the window (DRF's `wait()`
 * with one request available: `duration - (now - history[-1])`), rounded up to whole seconds as
 * DRF's `Throttled` does. A refused request is not counted, as in DRF.
 */

import type { Rate as RateLimit } from '../service/rate.js';

export type ThrottleVerdict = { allowed: true } | { allowed: false; waitSeconds: number };

export class SlidingWindowThrottle {
  /** Per key, the times (ms) of the requests let through in the window, oldest first. */
  private readonly history = new Map<string, number[]>();

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number = () => performance.now(),
  ) {}

  check(key: string): ThrottleVerdict {
    const now = this.now();
    let times = this.history.get(key);
    if (times === undefined) {
      times = [];
      this.history.set(key, times);
    }
    // DRF: `while history and history[-1] <= now - duration: history.pop()`.
    let expired = 0;
    while (expired < times.length && (times[expired] as number) <= now - this.limit.windowMs) {
      expired++;
    }
    if (expired > 0) times.splice(0, expired);
    if (times.length >= this.limit.count) {
      const oldest = times[0] as number;
      const waitMs = this.limit.windowMs - (now - oldest);
      return { allowed: false, waitSeconds: Math.max(1, Math.ceil(waitMs / 1000)) };
    }
    times.push(now);
    return { allowed: true };
  }
}

/** DRF's words for a throttled request (`Throttled.extra_detail_singular` / `_plural`). */
export function throttledDetail(waitSeconds: number): string {
  return `Request was throttled. Expected available in ${waitSeconds} second${waitSeconds === 1 ? '' : 's'}.`;
}
