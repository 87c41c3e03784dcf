/**
 * `ugs list --all` end to end, as a user runs it: the built binary against `ugs serve --dialect
 * customer` (a real process on loopback). 2,500 groups are created with `ugs get --from` (no
 * pacing: the emulator has no rate limit unless `--rate-limit` is given, and `--rate` lifts the
 * client's 180/min), then `list --all --json` must return exactly those groups, with the tokens
 * `get` printed, in 3 pages of 1000, counted in the emulator's access log (`--debug`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeRun, makeSandbox, runUgs, type ServeProcess, serveUgs } from '../kit/index.js';

const GROUPS = 2500;

let serve: ServeProcess;

beforeAll(async () => {
  serve = await serveUgs(['--debug', '--dialect', 'customer']);
});

afterAll(async () => {
  await serve?.stop();
});

/** The emulator's access lines for List Customers (the path only: it never logs a query). */
function listRequests(): string[] {
  return serve
    .stderr()
    .split('\n')
    .filter((line) => / GET \/v2\/api\/customers\/ /.test(line));
}

describe('list --all against ugs serve --dialect customer', () => {
  it(`returns exactly the ${GROUPS} groups get --from created, in 3 requests`, async () => {
    const sb = makeSandbox();
    const env = {
      UGS_BASE_URL: serve.url,
      UGS_API_TOKEN: serve.tokenFor('Customer'),
      UGS_DIALECT: 'customer',
    };
    const ids = Array.from({ length: GROUPS }, (_, i) => `e2e-${String(i).padStart(4, '0')}`);
    const csv = join(sb.root, 'groups.csv');
    writeFileSync(csv, `user_group_id,name\n${ids.map((id) => `${id},Group ${id}`).join('\n')}\n`);

    // As fast as the emulator answers: 64 in flight, and a rate that never holds a request back.
    const created = await runUgs(
      ['get', '--from', csv, '--concurrency', '64', '--rate', '1000000/s'],
      { sandbox: sb, env, timeoutMs: 60_000 },
    );
    expect(created.code, describeRun(created)).toBe(0);
    const tokens = new Map<string, string>();
    for (const line of created.stdout.trim().split('\n')) {
      const record = JSON.parse(line) as { user_group_id: string; status: string; token: string };
      expect(record.status).toBe('created');
      tokens.set(record.user_group_id, record.token);
    }
    expect(tokens.size).toBe(GROUPS);

    const before = listRequests().length;
    // 100/s: the default 180/min would add a third of a second per page and show nothing more.
    const listed = await runUgs(['list', '--all', '--json', '--rate', '100/s'], {
      sandbox: sb,
      env,
      timeoutMs: 30_000,
    });
    expect(listed.code, describeRun(listed)).toBe(0);
    // No terminal: stderr carries no progress (nor anything else).
    expect(listed.stderr).toBe('');
    const customers = JSON.parse(listed.stdout) as { provided_id: string; token: string }[];
    expect(customers).toHaveLength(GROUPS);
    expect(customers.map((c) => c.provided_id).sort()).toEqual(ids);
    for (const customer of customers) {
      expect(customer.token, customer.provided_id).toBe(tokens.get(customer.provided_id));
    }
    // The access line is written after the answer: give the last one a moment.
    const deadline = Date.now() + 5_000;
    while (listRequests().length - before < 3 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const requests = listRequests().slice(before);
    expect(requests, serve.stderr().slice(-2000)).toHaveLength(3);
    for (const line of requests) expect(line).toMatch(/ 200 \d+ms listed\b/);
  });
});
