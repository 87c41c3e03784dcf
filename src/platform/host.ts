/**
 * What differs between the operating systems ugs runs on, in one place. The running platform is
 * read here and nowhere else below `main` (`main` gets it as `system.platform`); every function
 * that behaves differently takes the platform as a parameter, so tests give `win32` or `darwin`
 * on a Linux machine and check each behaviour without that operating system.
 */
import { hostname, platform } from 'node:os';
import { win32 } from 'node:path';

export type Platform = NodeJS.Platform;

/** The platform this process runs on: the default of functions that are not handed one. */
export function runningPlatform(): Platform {
  return platform();
}

/** This machine's name, as a lock file records its owner; empty when the OS does not say. */
export function runningHostname(): string {
  try {
    return hostname();
  } catch {
    return '';
  }
}

/**
 * Whether files have Unix permission bits. Windows protects files with ACLs: Node makes a mode
 * up from the read-only flag (every folder reads as 0777), so a mode there says nothing about
 * who may read or write.
 */
export function hasModeBits(on: Platform): boolean {
  return on !== 'win32';
}

/** The shell a command that ugs prints is pasted into: PowerShell on Windows, a POSIX shell elsewhere. */
export type Shell = 'posix' | 'powershell';

export function shellOf(on: Platform): Shell {
  return on === 'win32' ? 'powershell' : 'posix';
}

/**
 * Whether `path` is inside the user's profile (`homedir`: `C:\Users\<name>`) on Windows. A file
 * created there inherits an ACL that lets only the user, SYSTEM and Administrators in; anywhere
 * else (`D:\data`, a network share) it inherits its folder's ACL, often readable by every user.
 * Always true on other platforms, where ugs sets the file's mode itself.
 */
export function insideUserProfile(path: string, on: Platform, homedir: string): boolean {
  if (on !== 'win32') return true;
  if (homedir === '') return false;
  // Windows paths compare without case; `relative` says how to get from the profile to the path.
  const from = win32.resolve(homedir).toLowerCase();
  const to = win32.resolve(path).toLowerCase();
  const rel = win32.relative(from, to);
  return rel === '' || (!rel.startsWith('..') && !win32.isAbsolute(rel));
}
