import { describe, expect, it } from 'vitest';
import { startUgs } from '../kit/index.js';

describe('a reader that stops early (ugs ... | head -1)', () => {
  it('ends quietly: no EPIPE stack trace on stderr', async () => {
    const { child, result } = startUgs(['help', 'get'], { stdin: null });
    // Close our end of stdout before ugs writes its help, as `head` does after its lines.
    child.stdout?.destroy();
    const { code, stderr } = await result;
    expect(stderr).not.toContain('EPIPE');
    expect(stderr).not.toMatch(/\n\s+at /);
    expect(code).toBe(0);
  });
});
