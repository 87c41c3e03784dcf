/**
 * How secrets are shown where they must not be: a fingerprint (`…a1b2`) or mask (`****a1b2`) of a
 * token, and every known secret cut out of a text. Below the `--debug` trace (debug.ts), JSON text
 * handling (json-text.ts) and every message that might quote a secret.
 */

export const REDACTED = '[REDACTED]';

/**
 * The last 4 characters of a token, so a trace, a prompt or `status` can be matched to the token
 * someone holds; none of a token shorter than 8 characters, which they would half give away.
 */
export function lastFour(token: string): string | undefined {
  return token.length >= 8 ? token.slice(-4) : undefined;
}

/** In traces and prompts: `…a1b2`, or `[REDACTED]`. */
export function fingerprint(token: string): string {
  const tail = lastFour(token);
  return tail === undefined ? REDACTED : `…${tail}`;
}

/** In `status` and `doctor`: `****a1b2`, or `****`. */
export function maskToken(token: string): string {
  return `****${lastFour(token) ?? ''}`;
}

/**
 * Every occurrence of each secret replaced by `[REDACTED]` (or what `mask` makes of it). Values
 * shorter than 4 characters are left alone: they would redact ordinary words, and no real token
 * is that short.
 */
export function redactSecrets(
  text: string,
  secrets: Iterable<string>,
  mask: (secret: string) => string = () => REDACTED,
): string {
  return SecretSet.of(secrets).redact(text, mask);
}

/** Shorter values are not secrets to look for (see redactSecrets). */
const MIN_SECRET_LENGTH = 4;

/**
 * The secrets of a run, found in a text in time linear in the text whatever their number: a bulk
 * rotate with `--debug` knows two tokens per row, and a trace line checked against each of
 * 100,000 in turn took minutes. At each place in the text, only a place where some secret's first
 * 4 characters start is looked at further, with one set lookup per distinct secret length
 * (tokens come in few lengths), the longest first.
 */
export class SecretSet implements Iterable<string> {
  private readonly all = new Set<string>();
  private readonly starts = new Set<string>();
  /** Distinct lengths of the secrets, longest first. */
  private lengths: number[] = [];

  constructor(secrets: Iterable<string> = []) {
    for (const secret of secrets) this.add(secret);
  }

  /** `secrets` itself when it is a SecretSet already (no copy per call). */
  static of(secrets: Iterable<string>): SecretSet {
    return secrets instanceof SecretSet ? secrets : new SecretSet(secrets);
  }

  get size(): number {
    return this.all.size;
  }

  add(secret: string): void {
    if (secret.length < MIN_SECRET_LENGTH || this.all.has(secret)) return;
    this.all.add(secret);
    this.starts.add(secret.slice(0, MIN_SECRET_LENGTH));
    if (!this.lengths.includes(secret.length)) {
      this.lengths = [...this.lengths, secret.length].sort((a, b) => b - a);
    }
  }

  [Symbol.iterator](): Iterator<string> {
    return this.all[Symbol.iterator]();
  }

  redact(text: string, mask: (secret: string) => string = () => REDACTED): string {
    if (this.all.size === 0 || text.length < MIN_SECRET_LENGTH) return text;
    let out = '';
    let copied = 0;
    for (let i = 0; i + MIN_SECRET_LENGTH <= text.length; ) {
      const secret = this.starts.has(text.slice(i, i + MIN_SECRET_LENGTH))
        ? this.secretAt(text, i)
        : undefined;
      if (secret === undefined) {
        i++;
        continue;
      }
      out += text.slice(copied, i) + mask(secret);
      i += secret.length;
      copied = i;
    }
    return copied === 0 ? text : out + text.slice(copied);
  }

  private secretAt(text: string, at: number): string | undefined {
    for (const length of this.lengths) {
      if (at + length > text.length) continue;
      const candidate = text.slice(at, at + length);
      if (this.all.has(candidate)) return candidate;
    }
    return undefined;
  }
}
