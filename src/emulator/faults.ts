import { EmulatorSpecError } from './errors.js';

/**
 * Most faults hit in front of the service, before any state changes. `commit-reset` hits after:
 * the request is carried out and saved (a rotation committed, a group created), then the
 * connection is dropped without an answer, so a client cannot know it happened. A refused
 * request (401, 404, 400) changed nothing, and gets its answer.
 */
export type FaultKind = '500' | '502-html' | '429' | 'reset' | 'slow' | 'commit-reset';

export interface FaultSpec {
  kind: FaultKind;
  /** Probability in [0, 1] that the fault hits a given request. */
  rate: number;
}

const FAULT_KINDS: readonly FaultKind[] = [
  '500',
  '502-html',
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

/** Parses "<kind>:<rate>", e.g. "500:0.2", "reset:1". */
export function parseFaultSpec(text: string): FaultSpec {
  const at = text.lastIndexOf(':');
  if (at < 0) {
    throw new EmulatorSpecError(
      `invalid fault spec "${text}": expected <kind>:<rate>, e.g. "500:0.2" (kinds: ${FAULT_KINDS.join(', ')})`,
    );
  }
  const kind = text.slice(0, at).trim();
  const rateText = text.slice(at + 1).trim();
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
  return { kind, rate };
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

  constructor(
    private readonly specs: readonly FaultSpec[],
    seed?: number,
  ) {
    this.random = seed === undefined ? Math.random : mulberry32(seed);
  }

  /**
   * Decides the fault for the next request. Draws stop at the first hit, so with a seed the
   * sequence of decisions depends only on the order of requests, not on their content.
   */
  next(): FaultKind | undefined {
    for (const spec of this.specs) {
      if (this.random() < spec.rate) return spec.kind;
    }
    return undefined;
  }
}
