/**
 * What the CI-masking tests share: the emulator they run against, the environment of a GitHub
 * Actions step, and the checks that every token printed has its mask line.
 */
import { afterAll, beforeAll, expect } from 'vitest';
import {
  describeRun,
  type EnvChanges,
  type InProcessEmulator,
  runMain,
  type Sandbox,
  startEmulator,
} from '../kit/index.js';

export const TOKEN = /[0-9a-f]{64}/g;
export const GITHUB_MASK = '::add-mask::';

/** Every 64-hex token in `texts` has its mask line on stderr. Returns the tokens seen. */
export function expectAllMasked(
  stderr: string,
  texts: readonly string[],
  context: string,
): string[] {
  const tokens = new Set(texts.flatMap((text) => text.match(TOKEN) ?? []));
  const masks = new Set(
    stderr
      .split('\n')
      .filter((line) => line.startsWith(GITHUB_MASK))
      .map((line) => line.slice(GITHUB_MASK.length)),
  );
  for (const token of tokens) expect(masks, `${token} not masked\n${context}`).toContain(token);
  return [...tokens];
}

/**
 * An in-process emulator for the test file (started before its tests, closed after), with the
 * environment of a GitHub Actions step pointed at it and a way to make a group's token.
 */
export function useCiEmulator() {
  let emulator: InProcessEmulator;
  beforeAll(async () => {
    emulator = await startEmulator();
  });
  afterAll(async () => {
    await emulator.close();
  });
  const ciEnv = (extra: EnvChanges = {}): EnvChanges => ({
    GITHUB_ACTIONS: 'true',
    UGS_BASE_URL: emulator.url,
    UGS_API_TOKEN: emulator.tokenFor('Customer'),
    ...extra,
  });
  const newGroupToken = async (sandbox: Sandbox, id: string): Promise<string> => {
    const created = await runMain(['get', '--id', id, '--name', id, '--field', 'token'], {
      sandbox,
      env: ciEnv({ GITHUB_ACTIONS: undefined }),
    });
    expect(created.code, describeRun(created)).toBe(0);
    return created.stdout.trim();
  };
  return { ciEnv, newGroupToken };
}
