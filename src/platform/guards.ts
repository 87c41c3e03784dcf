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

/**
 * TLS error codes that mean the server answered the handshake with something that is not TLS:
 * OpenSSL reads a plain-HTTP answer (`HTTP/1.1 400`) as a record of a wrong version or length.
 * A certificate was never looked at, so "pass --ca-file" would send the user the wrong way.
 */
export function isNotTlsCode(code: string): boolean {
  return (
    code === 'EPROTO' ||
    code === 'ERR_SSL_WRONG_VERSION_NUMBER' ||
    code === 'ERR_SSL_PACKET_LENGTH_TOO_LONG' ||
    code === 'ERR_SSL_UNKNOWN_PROTOCOL' ||
    code === 'ERR_SSL_HTTP_REQUEST'
  );
}

function isCoded(value: unknown): value is { code: string } {
  return (
    typeof value === 'object' && value !== null && 'code' in value && typeof value.code === 'string'
  );
}
