/**
 * A request rate as DRF writes its throttle rates and the vendor publishes its limit:
 * `<positive integer>/s` or `<positive integer>/min` (`180/min`). Used by `--rate` (bulk runs
 * paced to it) and `ugs serve --rate-limit` (the emulator throttling at it).
 */
import { UsageError } from '../errors.js';
import { message } from '../text/message.js';

export interface Rate {
  /** Requests allowed in one window. */
  count: number;
  windowMs: number;
}

const WINDOWS: Readonly<Record<string, number>> = { s: 1000, min: 60_000 };

/** `180/min`, `3/s`; anything else (a zero, a fraction, `/h`, spaces inside) is a usage error. */
export function parseRate(text: string, flag: string): Rate {
  const match = /^([1-9]\d{0,8})\/(s|min)$/.exec(text.trim());
  if (match === null) {
    throw new UsageError(
      message`${flag} must be <positive integer>/s or <positive integer>/min, got "${text}"`,
      { hint: `for example: ${flag} 180/min (the vendor's limit) or ${flag} 3/s` },
    );
  }
  return { count: Number(match[1]), windowMs: WINDOWS[match[2] as string] as number };
}

/**
 * The window a bulk run keeps to: the service's, plus a margin of 1% of it (at least 50 ms, at
 * most 5%). A throttle counts arrivals, not starts: with starts exactly window / n apart, request
 * k+n arrives less than a window after request k whenever the network, or a pause of either
 * event loop, delayed k a little more than k+n, and is refused (DRF's sliding window refuses about
 * half of them that way). The margin absorbs that jitter; at 180/min it makes one request every
 * 336.7 ms instead of 333.3 ms, 1% of the run's time, where one 429 costs a minute.
 */
export function pacedWindowMs(rate: Rate): number {
  const margin = Math.min(rate.windowMs / 20, Math.max(rate.windowMs / 100, 50));
  return rate.windowMs + margin;
}

/** The interval a bulk run keeps to between two starts: the paced window / n. */
export function pacedIntervalMs(rate: Rate): number {
  return pacedWindowMs(rate) / rate.count;
}
