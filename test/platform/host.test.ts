/**
 * What differs by operating system, asked of src/platform/host.ts with the platform given: file
 * modes, the shell a printed command is pasted into, and the user's profile on Windows. Config
 * and cache locations per platform: test/config/store.process.test.ts (configDir) and
 * test/platform/compile-cache.process.test.ts (userCacheDir).
 */
import { describe, expect, it } from 'vitest';
import { hasModeBits, insideUserProfile, shellOf } from '../../src/platform/host.js';

describe('per platform', () => {
  it.each([
    ['linux', true, 'posix'],
    ['darwin', true, 'posix'],
    ['win32', false, 'powershell'],
  ] as const)('%s: modes %s, commands for %s', (platform, modes, shell) => {
    expect(hasModeBits(platform)).toBe(modes);
    expect(shellOf(platform)).toBe(shell);
  });
});

describe('insideUserProfile on Windows', () => {
  const home = 'C:\\Users\\Ada';
  it.each([
    ['C:\\Users\\Ada\\AppData\\Roaming\\ugs\\Config', true],
    ['c:\\users\\ada\\results.csv', true],
    ['C:/Users/Ada/Documents/out.ndjson', true],
    ['C:\\Users\\Ada', true],
    ['C:\\Users\\Adalbert\\out.csv', false],
    ['C:\\Users\\Ada\\..\\Public\\out.csv', false],
    ['D:\\data\\results.csv', false],
    ['\\\\fileserver\\share\\ugs\\history.ndjson', false],
  ])('%s: %s', (path, inside) => {
    expect(insideUserProfile(path, 'win32', home)).toBe(inside);
  });

  it('no known profile: nothing counts as inside it', () => {
    expect(insideUserProfile('C:\\Users\\Ada\\x', 'win32', '')).toBe(false);
  });

  it.each(['linux', 'darwin'] as const)(
    '%s: always true (ugs sets the mode itself)',
    (platform) => {
      expect(insideUserProfile('/srv/shared/results.csv', platform, '/home/ada')).toBe(true);
    },
  );
});
