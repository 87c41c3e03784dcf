/**
 * `--api-path` (and UGS_API_PATH, and a profile's saved path) cannot climb out of the base URL's
 * prefix: a dot segment written percent-encoded is still a dot segment to a URL parser.
 */
import { describe, expect, it } from 'vitest';
import { resolveApiPath, resolveCredentials } from '../../src/context/credentials.js';
import { parseApiPath, parseSettings } from '../../src/context/settings.js';
import { UsageError } from '../../src/errors.js';
import { endpointUrl } from '../../src/input/parse.js';
import { makeDeps } from '../kit/fakes.js';

const CLIMBING = [
  '/api/%2e%2e/admin',
  '/api/%2E%2E/admin',
  '/api/.%2e/admin',
  '/api/%2e./admin',
  '/api/%2e/user',
  '/%2e%2e',
  '/api/..%2fadmin',
  '/api/%2e%2e%2Fadmin',
  '/api/..%5cadmin',
];

describe('--api-path refuses dot segments, percent-encoded ones too', () => {
  it.each(CLIMBING)('%s is a usage error from the flag and from UGS_API_PATH', (path) => {
    expect(() => parseSettings({ apiPath: path }, {})).toThrow(UsageError);
    expect(() => parseSettings({}, { UGS_API_PATH: path })).toThrow(UsageError);
    expect(() => parseSettings({ apiPath: path }, {})).toThrow(/--api-path cannot contain/);
  });

  it.each(CLIMBING)('%s saved in a profile is refused before any use', (path) => {
    const deps = makeDeps({
      profiles: { default: { baseUrl: 'https://ugs.example.com/prefix', apiPath: path } },
    });
    expect(() => resolveApiPath(deps.settings, resolveCredentials(deps))).toThrow(UsageError);
  });

  it('what the check guards against: a URL parser resolves %2e%2e like ..', () => {
    const base = new URL('https://ugs.example.com/prefix');
    expect(endpointUrl(base, '/api/%2e%2e/admin').pathname).toBe('/prefix/admin');
  });

  it.each([
    '/api/user',
    '/api/user/',
    '/v2/user.json',
    '/api/...',
    '/api/%2e%2e%2e',
    '/api/a%2eb',
    '/api/%41',
  ])('%s is accepted as given', (path) => {
    expect(parseApiPath(path, '--api-path')).toBe(path);
  });
});

describe('--api-path that Git Bash rewrote into a Windows path', () => {
  function refusal(text: string, from: 'flag' | 'env' = 'flag'): UsageError {
    try {
      parseSettings(
        from === 'flag' ? { apiPath: text } : {},
        from === 'env' ? { UGS_API_PATH: text } : {},
      );
    } catch (error) {
      expect(error).toBeInstanceOf(UsageError);
      return error as UsageError;
    }
    throw new Error(`${text} was accepted`);
  }

  it.each([
    ['C:/Program Files/Git/api/user', '/api/user'],
    ['C:/Program Files/Git/api/user/', '/api/user/'],
    ['D:\\Tools\\Git\\v2\\user', '/v2/user'],
    ['C:/msys64/api/user', '/api/user'],
  ])('%s: says Git Bash rewrote %s, and how to keep it', (text, meant) => {
    const error = refusal(text);
    expect(error.message).toBe(
      `--api-path ${text} is a Windows path: Git Bash rewrote the API path ${meant} into one`,
    );
    expect(error.hint).toContain('MSYS_NO_PATHCONV=1');
    expect(error.hint).toContain(`/${meant}`);
  });

  it('from UGS_API_PATH too (Git Bash rewrites variables as well)', () => {
    expect(refusal('C:/Program Files/Git/api/user', 'env').message).toMatch(
      /^UGS_API_PATH .* Git Bash rewrote/,
    );
  });

  it('a relative path is still "must start with /"', () => {
    expect(refusal('api/user').message).toBe('--api-path must start with "/"');
  });
});
