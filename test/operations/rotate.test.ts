import { describe, expect, it } from 'vitest';
import {
  closedPort,
  describeRun,
  destroy,
  errorLines,
  json,
  makeSandbox,
  runMain,
  type Sandbox,
  type Service,
  STACK_LINE,
  serviceForTest,
  stall,
  startServer,
  text as textReply,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-rotate-test-9012ijkl';

async function setup(): Promise<{ sb: Sandbox; service: Service; oldToken: string }> {
  const service = await serviceForTest([API_TOKEN]);
  const sb = makeSandbox();
  writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: API_TOKEN } } });
  const oldToken = (await service.seed('acme', 'Acme Corp')).token;
  return { sb, service, oldToken };
}

describe('ugs rotate (main in-process)', () => {
  it('--current-token-stdin --yes --json rotates once and prints the body', async () => {
    const { sb, service, oldToken } = await setup();
    const result = await runMain(['rotate', '--current-token-stdin', '--yes', '--json'], {
      sandbox: sb,
      stdin: `${oldToken}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests).toHaveLength(1);
    expect(service.requests[0]?.method).toBe('POST');
    expect(service.requests[0]?.url).toBe('/api/user');
    expect(service.requests[0]?.json).toEqual({ current_token: oldToken });
    expect(service.requests[0]?.headers.authorization).toBe(`Token ${API_TOKEN}`);

    const sent = service.answers.at(-1)?.body;
    expect(result.stdout).toBe(`${JSON.stringify(sent, null, 2)}\n`);
    const newToken = (await service.group('acme')).token;
    expect(newToken).not.toBe(oldToken);
    expect(JSON.parse(result.stdout).user_group.token).toBe(newToken);
    // The warning goes to stderr, so stdout stays parseable.
    expect(result.stderr).toMatch(/previous token may stop working/i);
    expect(result.stderr).not.toContain(API_TOKEN);
    expect(result.stderr).not.toContain(oldToken);

    // The old token no longer matches: the service says so and ugs exits 1.
    const again = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox: sb,
      stdin: oldToken,
    });
    expect(again.code, describeRun(again)).toBe(1);
    const refusal = service.answers.at(-1)?.body as { detail?: unknown };
    expect(typeof refusal.detail).toBe('string');
    expect(errorLines(again.stderr)[0]).toContain(String(refusal.detail));
  });

  it('into a pipe: key<TAB>value on stdout, the headline and warning (not the token) on stderr', async () => {
    const { sb, service, oldToken } = await setup();
    const result = await runMain(['rotate', '--current-token', oldToken, '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(0);
    const newToken = (await service.group('acme')).token ?? '';
    const lines = result.stderr.split('\n');
    expect(lines[0]).toBe('Rotated token of user group acme');
    expect(lines[1]).toMatch(/previous token may stop working/i);
    expect(result.stderr).not.toContain(newToken);
    expect(result.stdout).toContain(`token\t${newToken}\n`);
    expect(result.stdout).toMatch(/^api_environment_tag\tCustomer$/m);
  });

  it('--field token prints only the new token', async () => {
    const { sb, service, oldToken } = await setup();
    const result = await runMain(['rotate', '--current-token-stdin', '--yes', '--field', 'token'], {
      sandbox: sb,
      stdin: oldToken,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${(await service.group('acme')).token}\n`);
  });

  it('--current-token - reads the token from stdin (as --from - and whois - do), never sends the dash', async () => {
    const { sb, service, oldToken } = await setup();
    const result = await runMain(['rotate', '--current-token', '-', '--yes', '--field', 'token'], {
      sandbox: sb,
      stdin: `${oldToken}\n`,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(service.requests.map((r) => r.json)).toEqual([{ current_token: oldToken }]);
    expect(result.stdout).toBe(`${(await service.group('acme')).token}\n`);
    // No "--current-token puts the token in your shell history" warning: it did not.
    expect(result.stderr).not.toMatch(/shell history/);
  });

  it('--field naming no field of the rotation answer (a typo): exit 2, listing them, nothing sent', async () => {
    const { sb, service, oldToken } = await setup();
    const result = await runMain(['rotate', '--current-token-stdin', '--yes', '--field', 'Token'], {
      sandbox: sb,
      stdin: oldToken,
    });
    expect(result.code, describeRun(result)).toBe(2);
    expect(result.stdout).toBe('');
    expect(errorLines(result.stderr)[0]).toContain('"Token"');
    expect(result.stderr).toMatch(
      /hint: fields: team_id, token, name, provided_id, api_environment_tag/,
    );
    expect(service.requests).toHaveLength(0);
    expect((await service.group('acme')).token).toBe(oldToken);
  });

  it('a documented field the answer lacks: the token was rotated, so exit 5 with the recovery command', async () => {
    const server = await startServer(
      json(200, {
        success: 1,
        user_group: {
          team_id: 3,
          token: 'new-token-5678efgh',
          name: 'Acme Corp',
          provided_id: 'acme',
        },
      }),
    );
    try {
      const result = await runMain(
        ['rotate', '--current-token-stdin', '--yes', '--field', 'api_environment_tag'],
        {
          stdin: 'old-token-1234abcd',
          env: { UGS_BASE_URL: server.url, UGS_API_TOKEN: API_TOKEN },
        },
      );
      expect(result.code, describeRun(result)).toBe(5);
      expect(server.requests).toHaveLength(1);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain('the token WAS rotated');
      expect(result.stderr).toContain(
        "ugs get --id acme --name 'Acme Corp' --must-exist --field token",
      );
      expect(result.stderr).not.toMatch(STACK_LINE);
    } finally {
      await server.close();
    }
  });

  it.each([
    [
      '429',
      json(
        429,
        { detail: 'Request was throttled. Expected available in 30 seconds.' },
        { 'retry-after': '30' },
      ),
      /try again in 30 s/,
    ],
    [
      '413 from a gateway',
      textReply(
        413,
        '<html><body><h1>413 Request Entity Too Large</h1></body></html>',
        'text/html',
      ),
      /too large for the service or a proxy in front of it/,
    ],
  ])('a %s says the token was not rotated (exit 1)', async (_status, reply, hint) => {
    const server = await startServer(reply);
    try {
      const result = await runMain(
        ['rotate', '--current-token-stdin', '--yes', '--field', 'token'],
        {
          stdin: 'old-token-1234abcd',
          env: { UGS_BASE_URL: server.url, UGS_API_TOKEN: API_TOKEN },
        },
      );
      expect(result.code, describeRun(result)).toBe(1);
      expect(server.requests).toHaveLength(1);
      expect(errorLines(result.stderr)[0]).toMatch(/the token was not rotated/);
      expect(result.stderr).toMatch(hint);
    } finally {
      await server.close();
    }
  });

  it('without --yes and without a terminal: exit 2 and nothing is sent', async () => {
    const { sb, service, oldToken } = await setup();
    const results = await Promise.all([
      runMain(['rotate', '--current-token-stdin', '--json'], { sandbox: sb, stdin: oldToken }),
      runMain(['rotate', '--current-token', oldToken], { sandbox: sb }),
      runMain(['rotate', '--current-token-stdin', '--no-input'], { sandbox: sb, stdin: oldToken }),
    ]);
    for (const result of results) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toMatch(/^error: .*--yes/m);
      expect(result.stdout).toBe('');
    }
    expect(service.requests).toHaveLength(0);
    expect((await service.group('acme')).token).toBe(oldToken);
  });

  it('missing or empty current token, or both sources: exit 2 and nothing is sent', async () => {
    const { sb, service, oldToken } = await setup();
    const results = await Promise.all([
      runMain(['rotate', '--yes'], { sandbox: sb }),
      runMain(['rotate', '--yes', '--current-token-stdin'], { sandbox: sb, stdin: '\n' }),
      runMain(['rotate', '--yes', '--current-token', ''], { sandbox: sb }),
      runMain(['rotate', '--yes', '--current-token', oldToken, '--current-token-stdin'], {
        sandbox: sb,
        stdin: oldToken,
      }),
    ]);
    for (const result of results) {
      expect(result.code, describeRun(result)).toBe(2);
      expect(result.stderr).toMatch(/^error: /m);
    }
    expect(service.requests).toHaveLength(0);
  });

  it('socket destroyed after the request: exit 5, not retried, says how to check', async () => {
    const { sb, service, oldToken } = await setup();
    service.failAlways(destroy());
    const result = await runMain(['rotate', '--current-token-stdin', '--yes', '--json'], {
      sandbox: sb,
      stdin: oldToken,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(service.requests).toHaveLength(1);
    expect(result.stdout).toBe('');
    expect(errorLines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: .*may or may not/m);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
    expect(result.stderr).not.toMatch(STACK_LINE);
    expect(result.stderr).not.toContain(oldToken);
  });

  it('no answer within --timeout: exit 5, not retried', async () => {
    const { sb, service, oldToken } = await setup();
    service.failAlways(stall());
    const result = await runMain(['rotate', '--current-token-stdin', '--yes', '--timeout', '1'], {
      sandbox: sb,
      stdin: oldToken,
    });
    expect(result.code, describeRun(result)).toBe(5);
    expect(service.requests).toHaveLength(1);
    expect(result.stderr).toMatch(/^error: .*may or may not/m);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
  });

  it('connection refused: nothing reached a server, so exit 4 (not 5)', async () => {
    const sb = makeSandbox();
    const port = await closedPort();
    writeConfig(sb, {
      profiles: { default: { baseUrl: `http://127.0.0.1:${port}`, apiToken: API_TOKEN } },
    });
    const result = await runMain(['rotate', '--current-token', 'ugt_x1234567', '--yes'], {
      sandbox: sb,
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(errorLines(result.stderr)).toHaveLength(1);
    expect(result.stderr).toMatch(/^hint: /m);
  });

  it('a 2xx answer that cannot be read: the rotation may have happened (exit 5)', async () => {
    const { sb, service, oldToken } = await setup();
    service.failAlways(textReply(200, 'ok', 'text/plain'));
    const result = await runMain(['rotate', '--current-token', oldToken, '--yes'], { sandbox: sb });
    expect(result.code, describeRun(result)).toBe(5);
    expect(service.requests).toHaveLength(1);
    expect(result.stderr).toMatch(/^hint: .*ugs get --id/m);
  });
});
