/**
 * Digests of what the validation pass read: each row's text, so the sending pass sends only rows
 * that read as they did when checked (RowDigests), and the ids or tokens seen so far, for
 * duplicates (DigestSet). A few bytes a row, no row's text kept.
 */
import type { RowCandidate } from './input.js';

/** Sees each header and row as it is read; false when it is not what it should be. */
export interface ItemCheck {
  see(item: RowCandidate | { kind: 'header'; cells: string[] }): boolean;
}

/**
 * What pass 1 read, as 64 bits of each row's text (and of a CSV header): pass 2 sends a row only
 * if it reads exactly as the row pass 1 checked. Checking pass 2's rows against the rules alone
 * let a file edited between the passes send rows nobody checked together: a valid row replaced by
 * another, an id that repeats one of another row. 8 bytes a row (1.6 MB at 200,000 rows).
 */
export class RowDigests {
  private words = new Uint32Array(2 * 1024);
  private count = 0;
  private header: number[] | undefined;
  private readonly digest = new Uint32Array(3);

  /** Pass 1: the text of the next item (header or row), in file order. */
  see(item: RowCandidate | { kind: 'header'; cells: string[] }): boolean {
    this.hash(item);
    const a = this.digest[0] as number;
    const b = this.digest[1] as number;
    if (item.kind === 'header') {
      this.header = [a, b];
      return true;
    }
    if (this.count * 2 === this.words.length) {
      const bigger = new Uint32Array(this.words.length * 2);
      bigger.set(this.words);
      this.words = bigger;
    }
    this.words[this.count * 2] = a;
    this.words[this.count * 2 + 1] = b;
    this.count++;
    return true;
  }

  /** Pass 2: the same items, each of which must read as pass 1 read it. */
  reader(): ItemCheck {
    let at = 0;
    return {
      see: (item) => {
        this.hash(item);
        const a = this.digest[0] as number;
        const b = this.digest[1] as number;
        if (item.kind === 'header') return this.header?.[0] === a && this.header[1] === b;
        const index = at++;
        return index < this.count && this.words[index * 2] === a && this.words[index * 2 + 1] === b;
      },
    };
  }

  private hash(item: RowCandidate | { kind: 'header'; cells: string[] }): void {
    // CSV cells as JSON text: joined by any one character, two different rows could read alike.
    hash96(item.kind === 'json' ? item.text : JSON.stringify(item.cells), this.digest);
  }
}

/**
 * The ids (get) or tokens (rotate) seen so far, for duplicates: a 96-bit hash of each one
 * (`hash96`: two rows of 200,000 share one by chance about once in 10^18 runs) with the first row
 * that had it, in an open-addressed table of typed arrays. No token is kept in memory, and a row
 * costs 16 bytes rather than a string and a Map entry (measured: about 15 MB fewer at 200,000
 * rows).
 */
export class DigestSet {
  /** Three 32-bit words of digest per slot; all zero means empty (a digest of zeros is moved). */
  private words = new Uint32Array(3 * 1024);
  private rows = new Uint32Array(1024);
  private size = 0;
  private readonly digest = new Uint32Array(3);

  /** Adds `text` for `row`; when it was there already, the row that had it first. */
  addOrFind(text: string, row: number): number | undefined {
    hash96(text, this.digest);
    let a = this.digest[0] as number;
    const b = this.digest[1] as number;
    const c = this.digest[2] as number;
    if (a === 0 && b === 0 && c === 0) a = 1;
    const mask = this.rows.length - 1;
    for (let slot = a & mask; ; slot = (slot + 1) & mask) {
      const at = slot * 3;
      const wa = this.words[at] as number;
      const wb = this.words[at + 1] as number;
      const wc = this.words[at + 2] as number;
      if (wa === 0 && wb === 0 && wc === 0) {
        this.words[at] = a;
        this.words[at + 1] = b;
        this.words[at + 2] = c;
        this.rows[slot] = row;
        if (++this.size * 2 > this.rows.length) this.grow();
        return undefined;
      }
      if (wa === a && wb === b && wc === c) return this.rows[slot];
    }
  }

  private grow(): void {
    const words = this.words;
    const rows = this.rows;
    this.words = new Uint32Array(words.length * 2);
    this.rows = new Uint32Array(rows.length * 2);
    const mask = this.rows.length - 1;
    for (let old = 0; old < rows.length; old++) {
      const a = words[old * 3] as number;
      const b = words[old * 3 + 1] as number;
      const c = words[old * 3 + 2] as number;
      if (a === 0 && b === 0 && c === 0) continue;
      let slot = a & mask;
      while (
        this.words[slot * 3] !== 0 ||
        this.words[slot * 3 + 1] !== 0 ||
        this.words[slot * 3 + 2] !== 0
      ) {
        slot = (slot + 1) & mask;
      }
      this.words[slot * 3] = a;
      this.words[slot * 3 + 1] = b;
      this.words[slot * 3 + 2] = c;
      this.rows[slot] = rows[old] as number;
    }
  }
}

/**
 * 96 bits of a string's UTF-16 code units: three MurmurHash3 (32-bit) lanes with their own seeds,
 * in one pass. It replaced 12 bytes of SHA-256, which was a third of the validation pass (two
 * digests a row for get: the id as written and NFC-normalised); a duplicate only has to be found,
 * not proved against an adversary, and a chance collision would refuse a row, never send one.
 */
export function hash96(text: string, out: Uint32Array): void {
  let a = 0x9747b28c ^ text.length;
  let b = 0x5bd1e995 ^ text.length;
  let c = 0x1b873593 ^ text.length;
  for (let i = 0; i < text.length; i++) {
    let k = Math.imul(text.charCodeAt(i), 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    a ^= k;
    a = (Math.imul((a << 13) | (a >>> 19), 5) + 0xe6546b64) | 0;
    b ^= k;
    b = (Math.imul((b << 17) | (b >>> 15), 9) + 0x38495ab5) | 0;
    c ^= k;
    c = (Math.imul((c << 11) | (c >>> 21), 7) + 0x52dce729) | 0;
  }
  out[0] = fmix32(a);
  out[1] = fmix32(b ^ a);
  out[2] = fmix32(c ^ b);
}

/** MurmurHash3's finaliser: every input bit moves every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}
