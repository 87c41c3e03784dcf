/**
 * Invalid UTF-8 in argv: Node decodes it to U+FFFD, so `glob\xffex` and `glob\xfeex` would be one
 * id. The bytes are passed through bash's $'...' (spawn itself only takes valid strings).
 */
import { describe, expect, it } from 'vitest';
import { runShell, UGS_SHELL } from '../kit/index.js';

const bash = (script: string) =>
  runShell(script, {
    stdin: null,
    env: {
      UGS_API_TOKEN: 'api-token-argv',
      // Nothing listens: a request would fail with exit 4, not 2.
      UGS_BASE_URL: 'http://127.0.0.1:9',
    },
  });

describe('invalid UTF-8 in --id or --name', () => {
  it.each([
    ["--id $'glob\\xffex' --name Globex", '--id'],
    ["--id globex --name $'Glo\\xc3bex'", '--name'],
    ["--id $'\\xed\\xa0\\x80' --name X", '--id'],
  ])('ugs get %s: exit 2 before any request, value escaped', async (args, flag) => {
    const result = await bash(`exec ${UGS_SHELL} get ${args}`);
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(new RegExp(`^error: ${flag} ".*\\\\ufffd.*" contains U\\+FFFD`));
    expect(result.stderr).not.toContain('\ufffd');
  });
});
