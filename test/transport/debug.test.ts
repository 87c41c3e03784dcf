/**
 * `--debug` traces every request and response through a StreamTracer; secrets never reach it
 * whole: the Authorization header, any JSON field named like a token, and every known secret
 * value are shown as a fingerprint (`…` and the last 4 characters); cookies are `[REDACTED]`.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { StreamTracer } from '../../src/output/debug.js';
import { controlCharacters } from '../../src/platform/io.js';
import { fingerprint, REDACTED } from '../../src/text/redact.js';
import { API_TOKEN, failure, GET_REQUEST, useHttpClients } from '../kit/http-client.js';
import { closedPort, destroy, json, okBody, text } from '../kit/server.js';

const h = useHttpClients();

class Capture extends Writable {
  text = '';
  override _write(chunk: Buffer | string, _encoding: string, callback: () => void): void {
    this.text += chunk.toString();
    callback();
  }
}

function tracing(secrets: string[] = [API_TOKEN]) {
  const out = new Capture();
  return { out, tracer: new StreamTracer(out, secrets) };
}

const GROUP_TOKEN = 'ugt_group_token_1234';
const OLD_TOKEN = 'ugt_old_SECRET_abcd';
const NEW_TOKEN = 'ugt_new_SECRET_wxyz';

describe('debug trace', () => {
  it('shows method, URL, headers, bodies, status and timing of a Get User call', async () => {
    const server = await h.server(json(200, okBody(), { 'x-request-id': 'req-77' }));
    const { out, tracer } = tracing();
    const { service } = await h.client(`${server.url}/prefix/`, { tracer });

    await service.getUser({ ...GET_REQUEST, properties: { plan: 'gold' } });

    const lines = out.text.split('\n');
    expect(lines).toContain(`[debug] > GET ${server.url}/prefix/api/user`);
    expect(lines).toContain('[debug] > content-type: application/json');
    expect(lines).toContain('[debug] > accept: application/json');
    expect(lines).toContain('[debug] > authorization: Token …5b4a');
    expect(lines).toContain('[debug] > user-agent: ugs/test node/20');
    expect(lines).toContain(
      '[debug] > {"name":"Acme","user_group_id":"acme-1","properties":{"plan":"gold"}}',
    );
    expect(out.text).toMatch(/^\[debug\] < HTTP 200 \(\d+ ms\)$/m);
    expect(lines).toContain('[debug] < content-type: application/json');
    expect(lines).toContain('[debug] < x-request-id: req-77');
    expect(out.text).toContain('"token":"…1234"');
    expect(out.text).toContain('"provided_id":"acme-1"');
    // the secrets themselves never appear
    expect(out.text).not.toContain(API_TOKEN);
    expect(out.text).not.toContain(GROUP_TOKEN);
    // every line is a debug line
    expect(lines.filter((l) => l !== '').every((l) => l.startsWith('[debug] '))).toBe(true);
  });

  it('redacts the current and the new token of a rotation', async () => {
    const server = await h.server(
      json(200, okBody({ user_group: { ...(okBody().user_group as object), token: NEW_TOKEN } })),
    );
    // Only the API token is known up front: the body fields are fingerprinted by name.
    const { out, tracer } = tracing();
    const { service } = await h.client(server.url, { tracer });

    const result = await service.rotateToken(OLD_TOKEN);

    expect(result.userGroup.token).toBe(NEW_TOKEN);
    expect(out.text).toContain(`[debug] > POST ${server.url}/api/user`);
    expect(out.text).toContain('[debug] > {"current_token":"…abcd"}');
    expect(out.text).toContain('"token":"…wxyz"');
    for (const secret of [API_TOKEN, OLD_TOKEN, NEW_TOKEN]) expect(out.text).not.toContain(secret);
  });

  it('redacts known secrets wherever a server echoes them: non-JSON bodies and headers', async () => {
    const server = await h.server(({ request, res }) => {
      const page = `<html>bad token ${OLD_TOKEN}; you sent ${request.headers.authorization}</html>`;
      res.writeHead(502, {
        'content-type': 'text/html',
        'x-echo': String(request.headers.authorization),
        'set-cookie': 'session=abc123secret',
      });
      res.end(page);
    });
    const { out, tracer } = tracing();
    tracer.addSecret(OLD_TOKEN); // as `ugs rotate` does with the token it was given
    const { service } = await h.client(server.url, { tracer });

    await failure(service.rotateToken(OLD_TOKEN));

    expect(out.text).toContain('< HTTP 502');
    expect(out.text).toContain(`< x-echo: Token ${fingerprint(API_TOKEN)}`);
    expect(out.text).toContain(`< set-cookie: ${REDACTED}`);
    expect(out.text).toContain('bad token …abcd');
    for (const secret of [API_TOKEN, OLD_TOKEN, 'abc123secret']) {
      expect(out.text).not.toContain(secret);
    }
  });

  it('redacts token-named fields at any depth, in arrays too', async () => {
    const body = okBody({
      access_token: 'tok_SECRET_access',
      nested: {
        deeper: { refresh_token: 'tok_SECRET_refresh' },
        list: [{ token: 'tok_SECRET_l' }],
      },
      previous_tokens: ['tok_SECRET_prev1', 'tok_SECRET_prev2'],
    });
    const server = await h.server(json(200, body));
    const { out, tracer } = tracing();
    const { service } = await h.client(server.url, { tracer });

    await service.getUser(GET_REQUEST);

    expect(out.text).toContain('"access_token":"…cess"');
    expect(out.text).toContain('"refresh_token":"…resh"');
    expect(out.text).toContain('"previous_tokens":["…rev1","…rev2"]');
    expect(out.text).toContain('"provided_id":"acme-1"');
    expect(out.text).not.toContain('SECRET');
  });

  it('traces retries and failures, still without secrets', async () => {
    const server = await h.server(
      json(503, { success: 0, error: `overloaded for ${API_TOKEN}` }),
      destroy(),
      json(200, okBody()),
    );
    const { out, tracer } = tracing();
    const { service } = await h.client(server.url, { tracer, random: () => 0.5 });

    await service.getUser(GET_REQUEST);

    expect(out.text).toContain('[debug] < HTTP 503');
    expect(out.text).toContain('[debug] * retrying in 225 ms: HTTP 503');
    expect(out.text).toContain(`[debug] > GET ${server.url}/api/user (retry 1)`);
    expect(out.text).toMatch(/^\[debug\] ! .+ \(after \d+ ms\)$/m);
    expect(out.text).toMatch(/^\[debug\] \* retrying in 450 ms: \S+$/m);
    expect(out.text).toContain(`[debug] > GET ${server.url}/api/user (retry 2)`);
    expect(out.text).toMatch(/^\[debug\] < HTTP 200 /m);
    expect(out.text).toContain('overloaded for …5b4a');
    expect(out.text).not.toContain(API_TOKEN);
    expect(out.text).not.toContain(GROUP_TOKEN);
  });

  it('traces a refused connection', async () => {
    const port = await closedPort();
    const { out, tracer } = tracing();
    const { service } = await h.client(`http://127.0.0.1:${port}`, { tracer, random: () => 0 });

    await failure(service.getUser(GET_REQUEST));

    expect(out.text).toContain(
      `[debug] ! could not connect to 127.0.0.1:${port}: connection refused (after`,
    );
    expect(out.text).toContain('[debug] * retrying in 150 ms: ECONNREFUSED');
    expect(out.text.match(/^\[debug\] > GET /gm)).toHaveLength(3);
    expect(out.text).not.toContain(API_TOKEN);
  });

  it('a silent client writes nothing (no tracer given)', async () => {
    const server = await h.server(text(200, JSON.stringify(okBody()), 'application/json'));
    const { out } = tracing();
    const { service } = await h.client(server.url);

    await service.getUser(GET_REQUEST);

    expect(out.text).toBe('');
  });
});

describe('debug trace of hostile answers (deep nesting, escape sequences, 100 Continue)', () => {
  const response = (body: string, headers: Record<string, string> = {}) => {
    const { out, tracer } = tracing();
    tracer.response({ status: 200, headers, body, elapsedMs: 1 });
    return out.text;
  };

  it('keeps __proto__ keys of a JSON body, token-named values fingerprinted inside them', () => {
    const text = response('{"__proto__":{"token":"ugt_inner_1234","plan":"pro"},"a":1}');
    expect(text).toContain('< {"__proto__":{"token":"…1234","plan":"pro"},"a":1}');
  });

  it('escapes controls in header values and non-JSON bodies; JSON strings keep \\u escapes', () => {
    const text = response('<p>\u001b]0;x\u0007\u009b31m</p>', { 'x-evil': 'a\u009b31m\u001b[2J' });
    expect(text).toContain('< x-evil: a\\u009b31m\\u001b[2J');
    expect(text).toContain('< <p>\\u001b]0;x\\u0007\\u009b31m</p>');
    const json = response('{"m":"\u009b31m","e":"\\u001b[2J"}');
    expect(json).toContain('< {"m":"\\u009b31m","e":"\\u001b[2J"}');
    for (const out of [text, json]) {
      expect(out.replace(/\n/g, '')).not.toMatch(controlCharacters());
    }
  });

  it('prints a 100,000-level JSON body without recursion, numbers as sent, tokens fingerprinted', () => {
    const deep = `${'['.repeat(100_000)}1e400${']'.repeat(100_000)}`;
    const text = response(`{"n":12345678901234567890123,"d":${deep},"token":"ugt_deep_99"}`);
    expect(text).toContain(`< {"n":12345678901234567890123,"d":${deep},"token":"…p_99"}\n`);
    expect(text).not.toContain('ugt_deep_99');
  });
});
