/**
 * Attacks on the emulator itself: bodies nested deep enough to hurt a recursive
 * parser, `__proto__` keys, clients that half-close their socket, pipelined requests followed
 * by garbage, and an empty --host. Raw sockets where the attack is below HTTP.
 */
import { readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseServeFlags } from '../../src/commands/serve.js';
import { EmulatorStartError, type RunningEmulator } from '../../src/emulator/server.js';
import { UsageError } from '../../src/errors.js';
import {
  call,
  getUser,
  rawExchange,
  rotate,
  runUgs,
  startEmulator,
  tempDir,
  tokenOf,
  userGroupOf,
} from '../kit/index.js';

let emu: RunningEmulator;
let customer: string;

beforeAll(async () => {
  emu = await startEmulator({ port: 0 });
  customer = tokenOf(emu, 'Customer');
});

afterAll(async () => {
  await emu.close();
});

let counter = 0;
function freshId(prefix: string): string {
  counter += 1;
  return `${prefix}-${counter}-${Date.now()}`;
}

/** `{"a":{"a":...{}...}}` with `levels` objects in all. */
function nested(levels: number, open = '{"a":', close = '}', leaf = '{}'): string {
  return open.repeat(levels - 1) + leaf + close.repeat(levels - 1);
}

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Splits a byte stream of HTTP/1.1 answers (each with Content-Length) into answers. */
function splitAnswers(stream: string): RawAnswer[] {
  const answers: RawAnswer[] = [];
  let rest = stream;
  while (rest.length > 0) {
    const end = rest.indexOf('\r\n\r\n');
    if (end < 0) throw new Error(`truncated answer: ${JSON.stringify(rest)}`);
    const [statusLine = '', ...lines] = rest.slice(0, end).split('\r\n');
    const headers: Record<string, string> = {};
    for (const line of lines) {
      const colon = line.indexOf(':');
      headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
    }
    const length = Number(headers['content-length'] ?? 0);
    const bodyStart = end + 4;
    answers.push({
      status: Number(statusLine.split(' ')[1]),
      headers,
      body: rest.slice(bodyStart, bodyStart + length),
    });
    rest = rest.slice(bodyStart + length);
  }
  return answers;
}

function rawRequest(
  method: string,
  body: string,
  token: string,
  extra: Record<string, string> = {},
): string {
  const headers = {
    Host: 'localhost',
    'Content-Type': 'application/json',
    Authorization: `Token ${token}`,
    'Content-Length': String(Buffer.byteLength(body)),
    ...extra,
  };
  const head = Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n');
  return `${method} /api/user HTTP/1.1\r\n${head}\r\n\r\n${body}`;
}

describe('deeply nested bodies', () => {
  it.each([
    [
      'properties 65 levels deep',
      (id: string) => `{"user_group_id":"${id}","name":"n","properties":${nested(64)}}`,
    ],
    [
      'properties 100,000 levels deep',
      (id: string) => `{"user_group_id":"${id}","name":"n","properties":${nested(100_000)}}`,
    ],
    [
      'arrays 200 levels deep',
      (id: string) =>
        `{"user_group_id":"${id}","name":"n","properties":{"x":${nested(199, '[', ']', '[]')}}}`,
    ],
    [
      'an unterminated 100,000-level text',
      (id: string) => `{"user_group_id":"${id}","name":"n","p":${'['.repeat(100_000)}`,
    ],
  ])('refuses %s with 400 and creates nothing', async (_label, makeBody) => {
    const id = freshId('deep');
    const reply = await call(emu.url, { token: customer, body: makeBody(id) });
    expect(reply.status).toBe(400);
    expect(reply.json).toEqual({
      success: 0,
      detail: expect.stringMatching(/^JSON parse error - nesting deeper than 64 levels/),
    });
    const after = await getUser(emu.url, customer, { user_group_id: id, name: 'n' });
    expect(after.json?.new_user_group).toBe(true);
  });

  it('accepts exactly 64 levels, the body object included', async () => {
    const body = `{"user_group_id":"${freshId('deep-ok')}","name":"n","properties":${nested(63)}}`;
    const reply = await call(emu.url, { token: customer, body });
    expect(reply.status).toBe(200);
  });

  it('counts only structure: brackets inside strings are text', async () => {
    const text = `${'[{'.repeat(5000)}\\"`;
    const body = JSON.stringify({
      user_group_id: freshId('brackets'),
      name: text,
      mapping: { k: text },
    });
    const reply = await call(emu.url, { token: customer, body });
    expect(reply.status).toBe(200);
    expect(userGroupOf(reply).name).toBe(text);
  });

  it('refuses a deep value under mapping as well', async () => {
    const body = `{"user_group_id":"${freshId('deep-map')}","name":"n","mapping":{"k":${nested(80)}}}`;
    const reply = await call(emu.url, { token: customer, body });
    expect(reply.status).toBe(400);
    expect(String(reply.json?.detail)).toContain('nesting deeper than 64 levels');
  });

  it('refuses a deep rotation body too, before looking at any token', async () => {
    const body = `{"current_token":"x","pad":${nested(1000)}}`;
    const reply = await call(emu.url, { method: 'POST', token: customer, body });
    expect(reply.status).toBe(400);
    expect(String(reply.json?.detail)).toContain('nesting deeper than 64 levels');
  });

  it('still answers normally after a flood of deep bodies', async () => {
    const deep = `{"user_group_id":"x","name":"n","properties":${nested(500_000)}}`;
    const replies = await Promise.all(
      Array.from({ length: 8 }, () => call(emu.url, { token: customer, body: deep })),
    );
    for (const r of replies) expect(r.status).toBe(400);
    const ok = await getUser(emu.url, customer, { user_group_id: freshId('after'), name: 'n' });
    expect(ok.status).toBe(200);
  });
});

describe('__proto__ keys are data', () => {
  it('keeps __proto__ in mapping and properties, stored and answered as own keys', async () => {
    const dir = tempDir('proto');
    const dataFile = path.join(dir, 'state.json');
    const apiTokens = [{ token: 'proto-token', environment: 'Customer' as const }];
    try {
      const first = await startEmulator({ port: 0, dataFile, apiTokens });
      const body =
        '{"user_group_id":"p","name":"P","mapping":{"__proto__":"evil_db","s":"d"},' +
        '"properties":{"__proto__":{"polluted":true},"plan":"x"}}';
      const reply = await call(first.url, { token: 'proto-token', body });
      expect(reply.status).toBe(200);
      // The raw text, not a parsed object: a parsed "__proto__" could hide in a prototype.
      expect(reply.text).toContain('"properties":{"__proto__":{"polluted":true},"plan":"x"}');
      const group = userGroupOf(reply);
      expect(Object.getPrototypeOf(group.properties)).toBe(Object.prototype);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      await first.close();

      const saved = JSON.parse(await readFile(dataFile, 'utf8'));
      const stored = saved.user_groups[0];
      expect(Object.hasOwn(stored.mapping, '__proto__')).toBe(true);
      expect(Object.getOwnPropertyDescriptor(stored.mapping, '__proto__')?.value).toBe('evil_db');
      expect(Object.hasOwn(stored.properties, '__proto__')).toBe(true);

      // Loaded back after a restart, it is still data: the rotation finds the same group.
      const second = await startEmulator({ port: 0, dataFile, apiTokens });
      try {
        const rotated = userGroupOf(await rotate(second.url, 'proto-token', group.token));
        expect(rotated.team_id).toBe(group.team_id);
      } finally {
        await second.close();
      }
      const again = JSON.parse(await readFile(dataFile, 'utf8'));
      expect(
        Object.getOwnPropertyDescriptor(again.user_groups[0].mapping, '__proto__')?.value,
      ).toBe('evil_db');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('reports a bad value under a __proto__ mapping key as a field error of that key', async () => {
    const body = '{"user_group_id":"q","name":"Q","mapping":{"__proto__":1}}';
    const reply = await call(emu.url, { token: customer, body });
    expect(reply.status).toBe(400);
    expect(reply.text).toContain('"mapping":{"__proto__":["Not a valid string."]}');
  });
});

describe('half-closed and pipelined connections', () => {
  // Every request waits 150 ms (the 'slow' fault), so the client's FIN or garbage arrives while
  // the answer is still being made: the race these tests are about, made certain.
  let slow: RunningEmulator;
  let token: string;
  beforeAll(async () => {
    slow = await startEmulator({ port: 0, faults: [{ kind: 'slow', rate: 1 }], slowMs: 150 });
    token = tokenOf(slow, 'Customer');
  });
  afterAll(async () => {
    await slow.close();
  });

  it('answers a client that half-closes (FIN) right after sending its request', async () => {
    const id = freshId('half');
    const body = JSON.stringify({ user_group_id: id, name: 'half' });
    const stream = await rawExchange(slow.url, rawRequest('GET', body, token), true);
    const answers = splitAnswers(stream);
    expect(answers).toHaveLength(1);
    expect(answers[0]?.status).toBe(200);
    expect(JSON.parse(answers[0]?.body ?? '{}')).toMatchObject({
      success: 1,
      user_group: { provided_id: id },
    });
  });

  it('answers a half-closed rotation, so the new token is not lost', async () => {
    const group = userGroupOf(
      await getUser(slow.url, token, { user_group_id: freshId('half-rot'), name: 'r' }),
    );
    const body = JSON.stringify({ current_token: group.token });
    const answers = splitAnswers(
      await rawExchange(slow.url, rawRequest('POST', body, token), true),
    );
    expect(answers.map((a) => a.status)).toEqual([200]);
    const rotated = JSON.parse(answers[0]?.body ?? '{}').user_group;
    const found = userGroupOf(
      await getUser(slow.url, token, { user_group_id: group.provided_id, name: 'r' }),
    );
    expect(found.token).toBe(rotated.token);
  });

  it('answers every pipelined request in order, also when the client half-closes', async () => {
    const ids = [freshId('pipe'), freshId('pipe'), freshId('pipe')];
    const requests = ids
      .map((id) => rawRequest('GET', JSON.stringify({ user_group_id: id, name: id }), token))
      .join('');
    const answers = splitAnswers(await rawExchange(slow.url, requests, true));
    expect(answers.map((a) => a.status)).toEqual([200, 200, 200]);
    expect(answers.map((a) => JSON.parse(a.body).user_group.provided_id)).toEqual(ids);
  });

  it('answers valid pipelined requests before the 400 for garbage after them', async () => {
    {
      const ids = [freshId('garbage'), freshId('garbage')];
      const valid = ids
        .map((id) => rawRequest('GET', JSON.stringify({ user_group_id: id, name: 'g' }), token))
        .join('');
      const stream = await rawExchange(slow.url, `${valid}THIS IS NOT HTTP\r\n\r\n`, false);
      const answers = splitAnswers(stream);
      expect(answers.map((a) => a.status)).toEqual([200, 200, 400]);
      expect(answers.slice(0, 2).map((a) => JSON.parse(a.body).user_group.provided_id)).toEqual(
        ids,
      );
      expect(JSON.parse(answers[2]?.body ?? '{}')).toMatchObject({ success: 0 });
      expect(answers[2]?.headers.connection).toBe('close');
      // Both requests ran exactly once: they exist now.
      for (const id of ids) {
        const again = await getUser(slow.url, token, { user_group_id: id, name: 'g' });
        expect(again.json?.new_user_group).toBe(false);
      }
    }
  });

  it('does not wait forever for a request whose chunked body the garbage cut off', async () => {
    const id = freshId('cut');
    const valid = rawRequest('GET', JSON.stringify({ user_group_id: id, name: 'c' }), token);
    const cut =
      'POST /api/user HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n' +
      `Authorization: Token ${token}\r\nTransfer-Encoding: chunked\r\n\r\n` +
      '5\r\n{"cur\r\nNOT-A-CHUNK-SIZE\r\n\r\n';
    const answers = splitAnswers(await rawExchange(slow.url, valid + cut, false));
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expect(JSON.parse(answers[0]?.body ?? '{}').user_group.provided_id).toBe(id);
  });

  it('answers a valid request and then the 400 when garbage follows without delay', async () => {
    const id = freshId('garbage-fast');
    const valid = rawRequest('GET', JSON.stringify({ user_group_id: id, name: 'g' }), token);
    const answers = splitAnswers(
      await rawExchange(slow.url, `${valid}\x00\x01garbage\r\n\r\n`, false),
    );
    expect(answers.map((a) => a.status)).toEqual([200, 400]);
    expect(JSON.parse(answers[0]?.body ?? '{}').user_group.provided_id).toBe(id);
  });
});

describe('an empty --host', () => {
  it.each(['', ' '])('is refused by startEmulator (%j)', async (host) => {
    await expect(startEmulator({ port: 0, host })).rejects.toThrow(EmulatorStartError);
    await expect(startEmulator({ port: 0, host })).rejects.toThrow(/every interface/);
  });

  it('is a usage error of ugs serve', () => {
    const flags = { port: '0', host: '', apiToken: [], fault: [] };
    expect(() => parseServeFlags(flags, false)).toThrow(UsageError);
  });

  it('makes the built binary exit 2 without listening', async () => {
    const result = await runUgs(['serve', '--port', '0', '--host', '']);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/^error: .*--host is empty/m);
    expect(result.stderr).toMatch(/^hint: /m);
    expect(result.stdout).toBe('');
  });
});
