import { describe, expect, it } from 'vitest';
import {
  detectCi,
  errorCommand,
  escapeAzureData,
  escapeGithubData,
  escapeGithubProperty,
  maskCommand,
  maskSecret,
  tokensIn,
} from '../../src/output/ci.js';
import { makeIO } from '../kit/fakes.js';

describe('CI detection', () => {
  it.each([
    [{ GITHUB_ACTIONS: 'true' }, 'github'],
    [{ GITHUB_ACTIONS: 'false' }, undefined],
    [{ TF_BUILD: 'True' }, 'azure'],
    [{ TF_BUILD: 'TRUE' }, 'azure'],
    [{ TF_BUILD: '1' }, undefined],
    [{ CI: 'true' }, undefined],
    [{}, undefined],
  ])('%j -> %s', (env, expected) => {
    expect(detectCi(env)).toBe(expected);
  });
});

describe('workflow-command escaping', () => {
  it.each([
    ['plain', 'plain'],
    ['100%', '100%25'],
    ['%0A', '%250A'],
    ['a\nb\r\nc', 'a%0Ab%0D%0Ac'],
    ['a:b,c', 'a:b,c'],
  ])('GitHub data %j -> %j', (text, escaped) => {
    expect(escapeGithubData(text)).toBe(escaped);
  });

  it('GitHub properties also escape : and ,', () => {
    expect(escapeGithubProperty('a:b,c%\n')).toBe('a%3Ab%2Cc%25%0A');
  });

  it.each([
    ['100%', '100%AZP25'],
    ['a\r\nb', 'a%0D%0Ab'],
    ['x];y', 'x];y'],
  ])('Azure data %j -> %j', (text, escaped) => {
    expect(escapeAzureData(text)).toBe(escaped);
  });

  it('commands are one line whatever the value', () => {
    const hostile = 'v\n::error::x\r##vso[task.complete]';
    for (const line of [
      maskCommand('github', hostile),
      maskCommand('azure', hostile),
      errorCommand('github', hostile),
      errorCommand('azure', hostile),
    ]) {
      expect(line).not.toMatch(/[\r\n]/);
    }
    expect(errorCommand('github', 'm', 'a:b,c')).toBe('::error title=a%3Ab%2Cc::m');
  });
});

describe('tokensIn', () => {
  it('finds strings under token-named keys at any depth, arrays included, not messages', () => {
    const body = {
      success: 1,
      user_group: { token: 'abc', name: 'token' },
      previous_tokens: ['p1', 'p2'],
      current_token: ['This field may not be blank.'],
      nested: [{ deep: { api_token: 'x1' } }],
    };
    expect(tokensIn(body).sort()).toEqual(['abc', 'p1', 'p2', 'x1']);
  });

  it('takes an embed JWT (`jwt`, as generate_jwt/ answers it) for a token', () => {
    expect(tokensIn({ success: 1, jwt: 'eyJ.a.b.c.d' })).toEqual(['eyJ.a.b.c.d']);
  });

  it('walks 100,000 levels without overflowing the stack', () => {
    let value: unknown = { token: 'bottom' };
    for (let i = 0; i < 100_000; i++) value = { a: value };
    expect(tokensIn(value)).toEqual(['bottom']);
  });
});

describe('maskSecret', () => {
  it('writes each form of a secret once, only under a runner', () => {
    const io = makeIO({ env: { GITHUB_ACTIONS: 'true' } });
    maskSecret(io, 'a\u001bb');
    maskSecret(io, 'a\u001bb');
    maskSecret(io, '  ');
    maskSecret(io, null);
    expect(io.stderr.text).toBe('::add-mask::a\u001bb\n::add-mask::a\\u001bb\n');
    const quiet = makeIO();
    maskSecret(quiet, 'abc');
    expect(quiet.stderr.text).toBe('');
  });
});
