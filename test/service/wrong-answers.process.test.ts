/**
 * A service whose "successful" answers are wrong, against the built binary: an answer for
 * another group than the one asked for (the interface's rule 2: `provided_id` is the request's
 * `user_group_id`), and a rotation that hands back the token that was sent. Neither may pass for
 * a success, and another group's token is never printed or recorded as this one's.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  describeRun,
  makeSandbox,
  okBody,
  runUgs,
  sendJson,
  startServer,
  type TestServer,
  userGroup,
} from '../kit/index.js';

let server: TestServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

const OTHER_TOKEN = 'ugt_other_customer_token_9d8c7b6a';
const SENT_TOKEN = 'ugt_sent_token_0123456789';

const env = (target: TestServer) => ({
  UGS_BASE_URL: target.url,
  UGS_API_TOKEN: 'api-token-0123456789',
});

/** Answers every request for group `umbrella`, whatever was asked. */
async function answeringForUmbrella(): Promise<TestServer> {
  return startServer(({ res }) =>
    sendJson(
      res,
      200,
      okBody({ user_group: userGroup({ provided_id: 'umbrella', token: OTHER_TOKEN }) }),
    ),
  );
}

describe('an answer for another group', () => {
  it.each([[[]], [['--json']], [['--field', 'token']]])(
    'get %j: exit 1, no token on stdout or stderr',
    async (extra) => {
      server = await answeringForUmbrella();
      const result = await runUgs(['get', '--id', 'acme', '--name', 'Acme', ...extra], {
        env: env(server),
      });
      const context = describeRun(result);
      expect(result.code, context).toBe(1);
      expect(result.stdout, context).toBe('');
      expect(result.stderr, context).not.toContain(OTHER_TOKEN);
      expect(result.stderr, context).toMatch(
        /^error: the service answered for user group "umbrella", not "acme"/m,
      );
    },
  );

  it('get --from: the row is failed without a token; rotate --from: mismatch with the new token', async () => {
    server = await answeringForUmbrella();
    const sandbox = makeSandbox();
    const groups = join(sandbox.root, 'groups.csv');
    writeFileSync(groups, 'user_group_id,name\nacme,Acme\n');
    const got = await runUgs(['get', '--from', groups], { sandbox, env: env(server) });
    expect(got.code, describeRun(got)).toBe(1);
    expect(got.stdout).not.toContain(OTHER_TOKEN);
    expect(JSON.parse(got.stdout)).toMatchObject({ row: 1, status: 'failed', token: null });

    const tokens = join(sandbox.root, 'tokens.csv');
    writeFileSync(tokens, `current_token,user_group_id,name\n${SENT_TOKEN},acme,Acme\n`);
    const out = join(sandbox.root, 'rotated.csv');
    const rotated = await runUgs(['rotate', '--from', tokens, '--output', out, '--yes'], {
      sandbox,
      env: env(server),
    });
    expect(rotated.code, describeRun(rotated)).toBe(1);
    const last = readFileSync(out, 'utf8').trim().split('\n').at(-1) ?? '';
    expect(last).toMatch(new RegExp(`^1,acme,Acme,mismatch,${OTHER_TOKEN},`));
  });
});

describe('a rotation answer carrying the token that was sent', () => {
  it.each([[[]], [['--json']], [['--field', 'token']]])(
    'rotate %j: exit 1, "not rotated", nothing on stdout',
    async (extra) => {
      server = await startServer(({ res }) =>
        sendJson(res, 200, okBody({ user_group: userGroup({ token: SENT_TOKEN }) })),
      );
      const result = await runUgs(['rotate', '--current-token-stdin', '--yes', ...extra], {
        env: env(server),
        stdin: SENT_TOKEN,
      });
      const context = describeRun(result);
      expect(result.code, context).toBe(1);
      expect(result.stdout, context).toBe('');
      expect(result.stderr, context).toMatch(/^error: not rotated/m);
    },
  );
});
