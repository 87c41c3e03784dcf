/**
 * Under GitHub Actions, the built binary with stdout and stderr merged into one pipe (`2>&1`), as
 * the runner reads a step: the first time each token appears must be inside its own mask line.
 * The in-process checks of masking are in ci-mask.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  type EnvChanges,
  makeSandbox,
  runMain,
  runShell,
  type Sandbox,
  UGS_SHELL,
} from '../kit/index.js';
import { expectAllMasked, GITHUB_MASK, TOKEN, useCiEmulator } from './ci-mask-fixture.js';

const { ciEnv, newGroupToken } = useCiEmulator();

async function expectMaskedFirst(sandbox: Sandbox, args: string, env: EnvChanges, stdin = '') {
  const input = join(sandbox.root, `stdin-${Math.random().toString(36).slice(2)}`);
  writeFileSync(input, stdin);
  const result = await runShell(`${UGS_SHELL} ${args} < '${input}' 2>&1`, { sandbox, env });
  const merged = result.stdout;
  const tokens = new Set(merged.match(TOKEN) ?? []);
  expect(tokens.size, describeRun(result)).toBeGreaterThan(0);
  for (const token of tokens) {
    expect(merged.indexOf(token), `${token} printed before its mask\n${merged}`).toBe(
      merged.indexOf(`${GITHUB_MASK}${token}`) + GITHUB_MASK.length,
    );
  }
  return result;
}

describe('GitHub Actions: tokens are masked before they are written', () => {
  it('get and rotate: in one merged stream, each token first appears inside its mask line', async () => {
    const sandbox = makeSandbox();
    const env = ciEnv();
    for (const extra of ['', '--json', '--field token']) {
      await expectMaskedFirst(sandbox, `get --id ci-order --name 'CI Order' ${extra}`, env);
    }
    for (const extra of ['', '--json', '--field token']) {
      const current = await newGroupToken(sandbox, `ci-rot-${extra.length}`);
      const result = await expectMaskedFirst(
        sandbox,
        `rotate --current-token-stdin --yes ${extra}`,
        env,
        current,
      );
      expect(result.code, describeRun(result)).toBe(0);
      // The token given to rotate is masked too, although ugs never prints it.
      expect(result.stdout).toContain(`${GITHUB_MASK}${current}\n`);
    }
  });

  it('bulk get --from (stdout and --output) and rotate --from --output mask every record token', async () => {
    const sandbox = makeSandbox();
    const rows = ['user_group_id,name', 'b-1,One', 'b-2,Two', 'b-3,Three'].join('\n');
    const groups = join(sandbox.root, 'groups.csv');
    writeFileSync(groups, `${rows}\n`);

    const toStdout = await expectMaskedFirst(sandbox, `get --from '${groups}'`, ciEnv());
    expect(toStdout.code, describeRun(toStdout)).toBe(0);

    const results = join(sandbox.root, 'results.ndjson');
    const toFile = await runMain(['get', '--from', groups, '--output', results], {
      sandbox,
      env: ciEnv(),
    });
    expect(toFile.code, describeRun(toFile)).toBe(0);
    const fileText = readFileSync(results, 'utf8');
    expect(expectAllMasked(toFile.stderr, [fileText], describeRun(toFile))).toHaveLength(3);

    const tokens = join(sandbox.root, 'tokens.csv');
    const current = (fileText.match(TOKEN) ?? []).join('\n');
    writeFileSync(tokens, `current_token\n${current}\n`);
    const rotated = join(sandbox.root, 'rotated.csv');
    const rotate = await runMain(['rotate', '--from', tokens, '--output', rotated, '--yes'], {
      sandbox,
      env: ciEnv(),
    });
    const context = describeRun(rotate);
    expect(rotate.code, context).toBe(0);
    const rotatedText = readFileSync(rotated, 'utf8');
    const newTokens = expectAllMasked(rotate.stderr, [rotatedText], context);
    expect(newTokens, context).toHaveLength(3);
  });
});
