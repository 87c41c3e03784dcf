/**
 * `ugs serve --debug` writes one access line per request on stderr: when, which group (its id),
 * and what came of it (created, found, rotated, refused), and never a token.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { quote } from '../../src/text/message.js';
import {
  getUser,
  logLines,
  rotate,
  type ServeProcess,
  serveUgs,
  startEmulator,
  userGroupOf,
} from '../kit/index.js';

const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z /;

const processes: ServeProcess[] = [];
afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
});

/** The access lines written so far, once `count` of them are there (the log follows the answer). */
async function accessLines(serve: ServeProcess, count: number): Promise<string[]> {
  const deadline = Date.now() + 5_000;
  for (;;) {
    const lines = serve
      .stderr()
      .split('\n')
      .filter((line) => ISO_TIME.test(line));
    if (lines.length >= count || Date.now() > deadline) return lines;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('ugs serve --debug access lines', () => {
  it('carry a timestamp, the id and the outcome of each request, never a token', async () => {
    const serve = await serveUgs(['--debug']);
    processes.push(serve);
    const apiToken = serve.tokenFor('Customer');
    const created = userGroupOf(
      await getUser(serve.url, apiToken, { user_group_id: 'acme', name: 'Acme' }),
    );
    const found = userGroupOf(
      await getUser(serve.url, apiToken, { user_group_id: 'acme', name: 'Acme' }),
    );
    const rotated = userGroupOf(await rotate(serve.url, apiToken, found.token));
    const unknown = await rotate(serve.url, apiToken, found.token);
    expect(unknown.status).toBe(404);
    const denied = await getUser(serve.url, 'not-a-valid-api-token', {
      user_group_id: 'acme',
      name: 'Acme',
    });
    expect(denied.status).toBe(401);
    const invalid = await getUser(serve.url, apiToken, { user_group_id: 'globex' });
    expect(invalid.status).toBe(400);

    const lines = await accessLines(serve, 6);
    expect(lines, serve.stderr()).toHaveLength(6);
    expect(lines[0]).toMatch(/ GET \/api\/user 200 \d+ms created id="acme"$/);
    expect(lines[1]).toMatch(/ GET \/api\/user 200 \d+ms found id="acme"$/);
    expect(lines[2]).toMatch(/ POST \/api\/user 200 \d+ms rotated id="acme"$/);
    // A refused token is named by its last 4: a rotated one says whose it was.
    expect(lines[3]).toMatch(
      new RegExp(
        ` POST /api/user 404 \\d+ms refused id="acme" token=…${found.token.slice(-4)} was rotated before \\(\\d{4}-[^)]+Z\\): a previous token of this group$`,
      ),
    );
    expect(lines[4]).toMatch(/ GET \/api\/user 401 \d+ms refused token=…oken$/);
    expect(lines[5]).toMatch(/ GET \/api\/user 400 \d+ms refused$/);
    // The timestamps are real times of this run, in order.
    const times = lines.map((line) => Date.parse(line.slice(0, 24)));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(Math.abs((times[0] ?? 0) - Date.now())).toBeLessThan(60_000);

    const log = serve.stderr();
    for (const secret of [
      ...serve.apiTokens.map((t) => t.token),
      created.token,
      rotated.token,
      'not-a-valid-api-token',
    ]) {
      expect(log.includes(secret), `a token in the log:\n${log}`).toBe(false);
      expect(log.includes(secret.slice(-8)), `part of a token in the log:\n${log}`).toBe(false);
    }
  });

  it('a refused rotation of a token never seen says "unknown"; the answer stays DRF\'s 404 either way', async () => {
    const lines: string[] = [];
    const emulator = await startEmulator({ log: (line) => lines.push(line) });
    try {
      const apiToken = emulator.tokenFor('Customer');
      const group = userGroupOf(
        await getUser(emulator.url, apiToken, { user_group_id: 'prev', name: 'Prev' }),
      );
      await rotate(emulator.url, apiToken, group.token);
      const spent = await rotate(emulator.url, apiToken, group.token);
      const never = await rotate(emulator.url, apiToken, 'never-issued-token-1234');
      for (const answer of [spent, never]) {
        expect(answer.status).toBe(404);
        expect(answer.json).toEqual({ success: 0, detail: 'Not found.' });
      }
      await logLines(lines, 4);
      expect(lines[2]).toContain(
        `refused id="prev" token=…${group.token.slice(-4)} was rotated before`,
      );
      expect(lines[3]).toMatch(/ 404 \d+ms refused token=…1234 unknown$/);
    } finally {
      await emulator.close();
    }
  });

  it('an id with control characters is quoted and escaped, and a fault is named', async () => {
    const lines: string[] = [];
    const emulator = await startEmulator({
      log: (line) => lines.push(line),
      faults: [{ kind: 'commit-reset', rate: 1 }],
    });
    try {
      const reply = await getUser(emulator.url, emulator.tokenFor('Customer'), {
        user_group_id: 'evil\u001b[2J\u009b',
        name: 'Evil',
      }).catch((error: Error) => error);
      // commit-reset: the group was created, the answer lost.
      expect(reply).toBeInstanceOf(Error);
      const deadline = Date.now() + 5_000;
      while (lines.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(ISO_TIME);
      expect(lines[0]).toContain(' created id="evil\\u001b[2J\\u009b" fault=commit-reset');
      // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for them is the point
      expect(lines[0]).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    } finally {
      await emulator.close();
    }
  });

  it('an id is quoted as ugs quotes a value: a line separator cannot split the line', async () => {
    const lines: string[] = [];
    const emulator = await startEmulator({ log: (line) => lines.push(line) });
    const id = 'two\u2028lines\u2029here\ufffd';
    try {
      const reply = await getUser(emulator.url, emulator.tokenFor('Customer'), {
        user_group_id: id,
        name: 'Two',
      });
      expect(reply.status).toBe(200);
      const deadline = Date.now() + 5_000;
      while (lines.length === 0 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(` created id=${quote(id)}`);
      expect(lines[0]).toContain(' created id="two\\u2028lines\\u2029here\\ufffd"');
      expect(lines[0]).not.toMatch(/[\u2028\u2029\ufffd]/);
    } finally {
      await emulator.close();
    }
  });
});
