/**
 * Checks on values of unknown shape, used by the CLI and the emulator alike. Nothing is imported
 * here, so the emulator's lazily loaded bundle can share them without pulling in the CLI.
 */

/** A JSON object (not an array, not null): what every body, profile and state file must be. */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The `code` of a Node or undici error (`ENOENT`, `UND_ERR_SOCKET`), if it has one. */
export function errorCode(error: unknown): string | undefined {
  return isCoded(error) ? error.code : undefined;
}

/** Like `errorCode`, but also looks a few `cause`s down: undici wraps the socket's error. */
export function errorCodeInChain(error: unknown): string | undefined {
  for (let current: unknown = error, depth = 0; current && depth < 4; depth++) {
    if (isCoded(current)) return current.code;
    current = typeof current === 'object' && 'cause' in current ? current.cause : undefined;
  }
  return undefined;
}

function isCoded(value: unknown): value is { code: string } {
  return (
    typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'string'
  );
}
