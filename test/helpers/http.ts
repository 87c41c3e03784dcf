/**
 * Canned answers shared by the local test servers (test/http/server.ts,
 * test/hardening/harness.ts).
 */
import type { ServerResponse } from 'node:http';

/** Answers `status` with `body` serialised as JSON (a string body is sent as is). */
export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}
