/**
 * The first row of each key of a bulk input (its ids or current tokens), to refuse a repeat.
 *
 * Held compactly: 200,000 keys kept as strings in a Map held some 40 MiB alive in the JavaScript
 * heap until the input was read, and V8 lets its heap (its young generation above all, which
 * Node 24 lets grow twice as large as Node 20) grow to a multiple of what stays alive: validating
 * 200,000 rotate rows peaked at 188 MiB on Node 24 and 138 MiB on Node 20, and peaks at 144 and
 * 131 MiB with the keys held here. Each key's characters go into one growing buffer outside the
 * heap (one byte a character when every character fits in one, as ids and tokens do; UTF-16
 * otherwise, which gives back any string exactly), and the Map holds small integers only: a
 * 30-bit hash of the key to the key's place. Two keys with one hash (about 20 pairs in 200,000)
 * are told apart by comparing the key itself; the later one is kept in a small Map of its own.
 */
export class FirstRows {
  private chars = Buffer.allocUnsafe(64 * 1024);
  private used = 0;
  /** For the n-th key: where its characters start, and its row; `ends[n]` where they end. */
  private starts = new Uint32Array(1024);
  private ends = new Uint32Array(1024);
  private rows = new Uint32Array(1024);
  /** One bit a key: set when its characters are stored as UTF-16 (else one byte each). */
  private wide = new Uint8Array(128);
  private count = 0;
  private readonly byHash = new Map<number, number>();
  private readonly collided = new Map<string, number>();

  /** `hash`: tests pass one that collides, to exercise the comparison. */
  constructor(private readonly hash: (key: string) => number = hashOf) {}

  /** The row that had `key` first; undefined when none did, and then `key` is `row`'s. */
  firstOrAdd(key: string, row: number): number | undefined {
    const hash = this.hash(key);
    const index = this.byHash.get(hash);
    if (index === undefined) {
      this.byHash.set(hash, this.add(key, row));
      return undefined;
    }
    if (this.keyAt(index) === key) return this.rows[index];
    const first = this.collided.get(key);
    if (first === undefined) this.collided.set(key, row);
    return first;
  }

  private add(key: string, row: number): number {
    const wide = WIDE.test(key);
    const bytes = wide ? key.length * 2 : key.length;
    if (this.used + bytes > this.chars.length) {
      const grown = Buffer.allocUnsafe(Math.max(this.chars.length * 2, this.used + bytes));
      this.chars.copy(grown, 0, 0, this.used);
      this.chars = grown;
    }
    if (this.count === this.starts.length) {
      this.starts = grownCopy(this.starts);
      this.ends = grownCopy(this.ends);
      this.rows = grownCopy(this.rows);
    }
    if (this.count >> 3 === this.wide.length) {
      const grown = new Uint8Array(this.wide.length * 2);
      grown.set(this.wide);
      this.wide = grown;
    }
    const index = this.count++;
    this.starts[index] = this.used;
    this.used += this.chars.write(key, this.used, wide ? 'utf16le' : 'latin1');
    this.ends[index] = this.used;
    this.rows[index] = row;
    if (wide) this.wide[index >> 3] = (this.wide[index >> 3] ?? 0) | (1 << (index & 7));
    return index;
  }

  private keyAt(index: number): string {
    const wide = ((this.wide[index >> 3] ?? 0) >> (index & 7)) & 1;
    return this.chars.toString(
      wide === 1 ? 'utf16le' : 'latin1',
      this.starts[index],
      this.ends[index],
    );
  }
}

/** A UTF-16 code unit above U+00FF: the key is stored as UTF-16 (else latin1, one byte each). */
const WIDE = /[\u0100-\uffff]/;

function grownCopy(array: Uint32Array<ArrayBuffer>): Uint32Array<ArrayBuffer> {
  const grown = new Uint32Array(array.length * 2);
  grown.set(array);
  return grown;
}

/** FNV-1a over the UTF-16 code units, to 30 bits: a small integer V8 keeps without allocating. */
function hashOf(key: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    hash ^= key.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash & 0x3fffffff;
}
