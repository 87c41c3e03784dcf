/**
 * The fast path of `ugs jwt` (dist/jwt-mint.cjs, tried by bin/ugs.js before main.cjs) prints
 * what the command prints, byte for byte, and leaves everything else to main.cjs.
 */
import { describe, expect, it } from 'vitest';
import { describeRun, makeSandbox, runUgs } from '../kit/index.js';

const ENV = {
  UGS_EMBED_SECRET: 'embed-secret-0123456789abcdefXYZ',
  UGS_EMBED_KEY_ID: 'key-2026',
};
const MINT = ['jwt', '--id', 'acme', '--embed', 'sales', '--origin', 'https://app.example.com'];
/** A global option main reads and the fast path declines: the same mint, through main.cjs. */
const THROUGH_MAIN = ['--no-input'];

/** The JSON text with the parts that differ from run to run (the JWT, the times) replaced. */
const stable = (text: string) =>
  text
    .replace(/"jwt": "[^"]+"/, '"jwt": "<jwt>"')
    .replace(/"exp": \d+/, '"exp": <exp>')
    .replace(/"expires_at": "[^"]+"/, '"expires_at": "<at>"');

describe('ugs jwt: the fast path and main.cjs', () => {
  it('print the same --json, --field and plain output', async () => {
    const sb = makeSandbox();
    for (const extra of [['--json'], ['--field', 'header'], ['--field', 'claims'], []]) {
      const fast = await runUgs([...MINT, ...extra], { sandbox: sb, env: ENV });
      const main = await runUgs([...THROUGH_MAIN, ...MINT, ...extra], { sandbox: sb, env: ENV });
      expect(fast.code, describeRun(fast)).toBe(0);
      expect(main.code, describeRun(main)).toBe(0);
      expect(fast.stderr).toBe('');
      if (extra[1] === 'claims') {
        expect(fast.stdout.replace(/"exp":\d+/, '')).toBe(main.stdout.replace(/"exp":\d+/, ''));
      } else if (extra.length === 0) {
        expect(fast.stdout).toMatch(/^eyJ[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+\n$/);
        expect(main.stdout).toMatch(/^eyJ[\w-]+\.\.[\w-]+\.[\w-]+\.[\w-]+\n$/);
      } else {
        expect(stable(fast.stdout)).toBe(stable(main.stdout));
      }
    }
  });

  it('hand a value that fails its check to main.cjs, which reports it (exit 2)', async () => {
    const result = await runUgs([...MINT, '--expires', 'soon'], { env: ENV });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stderr).toContain('error: --expires expects a duration');
    const short = await runUgs(MINT, { env: { ...ENV, UGS_EMBED_SECRET: 'short' } });
    expect(short.code, describeRun(short)).toBe(2);
    expect(short.stderr).toContain('is 5 bytes; an A256GCM key is exactly 32');
  });

  it('hand a CI runner to main.cjs: the masks come first', async () => {
    const result = await runUgs(MINT, { env: { ...ENV, GITHUB_ACTIONS: 'true' } });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toContain(`::add-mask::${result.stdout.trim()}`);
  });
});
