/** The command printed to recover a rotated token whose output was lost: exact and pasteable. */
import { describe, expect, it } from 'vitest';
import { recoveryCommand, runRotate, shellWord } from '../../src/commands/rotate.js';
import { OutcomeUnknownError } from '../../src/errors.js';
import { FakeService, groupResult, makeDeps, makeIO } from '../kit/fakes.js';

describe('shellWord', () => {
  it.each([
    ['acme', 'acme'],
    ['acme-01_x.y', 'acme-01_x.y'],
    ['Acme Corp', "'Acme Corp'"],
    ["Acme's", "'Acme'\\''s'"],
    ['$(rm -rf ~)', "'$(rm -rf ~)'"],
    ['a\u001b[2Jb', "'a\\u001b[2Jb'"],
    ['', "''"],
  ])('%j → %s', (value, expected) => {
    expect(shellWord(value)).toBe(expected);
  });
});

describe('recoveryCommand', () => {
  it('uses the answer id and name', () => {
    expect(recoveryCommand({ provided_id: 'acme', name: 'Acme Corp' }, makeDeps())).toBe(
      "ugs get --id acme --name 'Acme Corp' --field token",
    );
  });
  it('placeholders when the answer lacks them', () => {
    expect(recoveryCommand({}, makeDeps())).toBe(
      'ugs get --id <user_group_id> --name <name> --field token',
    );
  });
  it('keeps a non-default profile and a --base-url flag, so it asks the same service', () => {
    const deps = makeDeps({
      settings: { profile: 'staging', baseUrl: 'https://x.example', baseUrlSource: 'flag' },
    });
    expect(recoveryCommand({ provided_id: 'a', name: 'A' }, deps)).toBe(
      'ugs get --id a --name A --field token --profile staging --base-url https://x.example',
    );
  });
  it('keeps an --api-path flag, so a trailing-slash service is asked at the same path', () => {
    const deps = makeDeps({ settings: { apiPath: '/api/user/', apiPathSource: 'flag' } });
    expect(recoveryCommand({ provided_id: 'a', name: 'A' }, deps)).toBe(
      'ugs get --id a --name A --field token --api-path /api/user/',
    );
  });
});

describe('rotate whose output fails', () => {
  it('is OutcomeUnknown (exit 5) with the recovery command', async () => {
    const io = makeIO();
    io.stdout.write = ((_chunk: unknown, callback?: (error?: Error) => void) => {
      const error = Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
      if (typeof callback === 'function') process.nextTick(() => callback(error));
      return false;
    }) as typeof io.stdout.write;
    const service = new FakeService({ rotate: () => groupResult({ name: 'Acme Corp' }) });
    const error = await runRotate(
      {
        currentToken: 'old-token-1234',
        currentTokenFromStdin: false,
        yes: true,
        format: { kind: 'field', name: 'token' },
      },
      makeDeps({ io, service }),
    ).then(
      () => new Error('no error'),
      (e: unknown) => e as Error,
    );
    expect(error).toBeInstanceOf(OutcomeUnknownError);
    expect(error.message).toMatch(/^could not write the output: EIO.*; the token WAS rotated/);
    expect((error as OutcomeUnknownError).hint).toContain(
      "ugs get --id acme --name 'Acme Corp' --field token",
    );
  });
});
