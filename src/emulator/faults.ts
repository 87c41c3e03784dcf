import { EmulatorSpecError } from './errors.js';

/**
 * Most faults hit in front of the service, before any state changes. `commit-reset` hits after:
 * the request is carried out and saved (a rotation committed, a group created), then the
 * connection is dropped without an answer, so a client cannot know it happened. A refused
 * request (401, 404, 400) changed nothing, and gets its answer.
 */
export type FaultKind = '500' | '502-html' | '504-html' | '429' | 'reset' | 'slow' | 'commit-reset';

export interface FaultSpec {
  kind: FaultKind;
  /** Probability in [0, 1] that the fault hits a given request. */
  rate: number;
  /**
   * `:for=<duration>`: the fault hits only during this many ms from the first request the
   * emulator gets (a service that is down for a while, then back); absent: for ever.
   */
  forMs?: number;
}

const FAULT_KINDS: readonly FaultKind[] = [
  '500',
  '502-html',
  '504-html',
  '429',
  'reset',
  'slow',
  'commit-reset',
];

// Plain decimal only: Number() alone would also take '', ' ', '0x1' and 'Infinity'.
const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

function isFaultKind(text: string): text is FaultKind {
  return (FAULT_KINDS as readonly string[]).includes(text);
}

// `for=3s`, `for=1.5s`, `for=500ms`, `for=2m`: how long a fault lasts.
const WINDOW = /^for=((?:\d+(?:\.\d*)?|\.\d+))(ms|s|m)$/;
const WINDOW_UNIT_MS: Readonly<Record<string, number>> = { ms: 1, s: 1000, m: 60_000 };

/**
 * Parses "<kind>:<rate>", e.g. "500:0.2", "reset:1", optionally followed by ":for=<duration>"
 * ("504-html:1:for=3s": every request of the first 3 seconds, then none).
 */
export function parseFaultSpec(text: string): FaultSpec {
  const parts = text.split(':');
  if (parts.length < 2 || parts.length > 3) {
    throw new EmulatorSpecError(
      `invalid fault spec "${text}": expected <kind>:<rate>[:for=<duration>], e.g. "500:0.2" or "504-html:1:for=3s" (kinds: ${FAULT_KINDS.join(', ')})`,
    );
  }
  const kind = (parts[0] as string).trim();
  const rateText = (parts[1] as string).trim();
  if (!isFaultKind(kind)) {
    throw new EmulatorSpecError(
      `invalid fault spec "${text}": unknown kind "${kind}" (kinds: ${FAULT_KINDS.join(', ')})`,
    );
  }
  const rate = DECIMAL.test(rateText) ? Number(rateText) : Number.NaN;
  if (!(rate >= 0 && rate <= 1)) {
    throw new EmulatorSpecError(
      `invalid fault spec "${text}": rate "${rateText}" must be a number from 0 to 1`,
    );
  }
  if (parts.length === 2) return { kind, rate };
  const windowText = (parts[2] as string).trim();
  const window = WINDOW.exec(windowText);
  const forMs =
    window === null
      ? Number.NaN
      : Number(window[1]) * (WINDOW_UNIT_MS[window[2] as string] as number);
  if (!(Number.isFinite(forMs) && forMs > 0)) {
    throw new EmulatorSpecError(
      `invalid fault spec "${text}": "${windowText}" must be for=<duration> above zero, e.g. for=3s, for=500ms or for=2m`,
    );
  }
  return { kind, rate, forMs };
}

/** mulberry32: tiny, fast and good enough to make fault injection reproducible from a seed. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class FaultInjector {
  private readonly random: () => number;
  /** now() at the first request: a fault's `for=` window counts from it. */
  private firstRequestAt: number | undefined;

  constructor(
    private readonly specs: readonly FaultSpec[],
    seed?: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.random = seed === undefined ? Math.random : mulberry32(seed);
  }

  /**
   * Decides the fault for the next request. Draws stop at the first hit, so with a seed the
   * sequence of decisions depends only on the order of requests, not on their content. A fault
   * whose window is over still draws (and misses), so the others' decisions stay the same.
   */
  next(): FaultKind | undefined {
    const now = this.now();
    this.firstRequestAt ??= now;
    const elapsed = now - this.firstRequestAt;
    for (const spec of this.specs) {
      if (this.random() >= spec.rate) continue;
      if (spec.forMs === undefined || elapsed < spec.forMs) return spec.kind;
    }
    return undefined;
  }
}
