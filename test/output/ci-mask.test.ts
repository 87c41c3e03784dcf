/**
 * Under a CI runner (GITHUB_ACTIONS=true, TF_BUILD=True) every user group token ugs writes
 * anywhere (table, --json, --field, the rotation's headline, bulk records on stdout or in
 * --output files) is preceded by its mask command on stderr, and errors are also annotations.
 * Workflow-command data is escaped, so a hostile answer cannot issue a command of its own.
 * The built binary with both streams in one pipe: ci-mask.process.test.ts.
 */
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  json,
  makeSandbox,
  okBody,
  runMain,
  startServer,
  userGroup,
} from '../kit/index.js';
import { expectAllMasked, useCiEmulator } from './ci-mask-fixture.js';

const { ciEnv, newGroupToken } = useCiEmulator();

describe('GitHub Actions: tokens are masked before they are written', () => {
  it('get: table, --json and --field token each mask the token first (pipe capture)', async () => {
    const sandbox = makeSandbox();
    for (const extra of [[], ['--json'], ['--field', 'token']]) {
      const result = await runMain(['get', '--id', 'ci-get', '--name', 'CI Get', ...extra], {
        sandbox,
        env: ciEnv(),
      });
      const context = describeRun(result);
      expect(result.code, context).toBe(0);
      const tokens = expectAllMasked(result.stderr, [result.stdout, result.stderr], context);
      expect(tokens, context).toHaveLength(1);
      // stdout stays exactly what a script captures: no workflow command on it.
      expect(result.stdout, context).not.toContain('::');
    }
    const field = await runMain(['get', '--id', 'ci-get', '--name', 'CI Get', '--field', 'token'], {
      sandbox,
      env: ciEnv(),
    });
    expect(field.stdout).toMatch(/^[0-9a-f]{64}\n$/);
  });

  it('rotate: the new token of the headline and table is masked on stderr', async () => {
    const sandbox = makeSandbox();
    const current = await newGroupToken(sandbox, 'ci-rotate');
    const result = await runMain(['rotate', '--current-token-stdin', '--yes'], {
      sandbox,
      env: ciEnv(),
      stdin: current,
    });
    const context = describeRun(result);
    expect(result.code, context).toBe(0);
    const tokens = expectAllMasked(result.stderr, [result.stdout, result.stderr], context);
    expect(
      tokens.filter((t) => t !== current),
      context,
    ).toHaveLength(1);
  });

  it('an error is also an ::error annotation (after the error and hint lines)', async () => {
    const sandbox = makeSandbox();
    const result = await runMain(['get', '--id', 'x'], { sandbox, env: ciEnv() });
    expect(result.code, describeRun(result)).toBe(2);
    const lines = result.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^error: missing --name/);
    expect(lines[1]).toMatch(/^hint: /);
    expect(lines[2]).toMatch(/^::error title=ugs::missing --name.*%0Apass --name/);
    expect(lines).toHaveLength(3);
  });

  it('outside a CI runner nothing of this is written', async () => {
    const sandbox = makeSandbox();
    const result = await runMain(['get', '--id', 'no-ci', '--name', 'No CI', '--json'], {
      sandbox,
      env: ciEnv({ GITHUB_ACTIONS: undefined }),
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toBe('');
  });
});

describe('Azure Pipelines (TF_BUILD=True, any case)', () => {
  it('sets every token as a secret and logs errors as issues', async () => {
    const sandbox = makeSandbox();
    const env = ciEnv({ GITHUB_ACTIONS: undefined, TF_BUILD: 'True' });
    const result = await runMain(['get', '--id', 'az', '--name', 'Azure', '--field', 'token'], {
      sandbox,
      env,
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toBe(`##vso[task.setsecret]${result.stdout.trim()}\n`);
    const failed = await runMain(['get', '--id', 'az'], {
      sandbox,
      env: { ...env, TF_BUILD: 'true' },
    });
    expect(failed.stderr).toMatch(/^##vso\[task\.logissue type=error\]ugs: missing --name/m);
  });
});

describe('hostile values cannot issue workflow commands', () => {
  const HOSTILE_TOKEN = 'tok%0A::warning::pwned\n::set-env name=X::1\r\n##vso[task.complete]x';
  const HOSTILE_DETAIL = 'no\n::add-mask::%0A\n::warning::forged, title=x:y';

  it('escapes %, CR and LF in masks and annotations (GitHub and Azure)', async () => {
    const server = await startServer(
      json(200, okBody({ user_group: userGroup({ token: HOSTILE_TOKEN, provided_id: 'h' }) })),
      json(400, { success: 0, detail: HOSTILE_DETAIL }),
    );
    try {
      const sandbox = makeSandbox();
      for (const runner of [{ GITHUB_ACTIONS: 'true' }, { TF_BUILD: 'TRUE' }]) {
        server.script(
          json(200, okBody({ user_group: userGroup({ token: HOSTILE_TOKEN, provided_id: 'h' }) })),
          json(400, { success: 0, detail: HOSTILE_DETAIL }),
        );
        const env = { UGS_BASE_URL: server.url, UGS_API_TOKEN: 'api-token', ...runner };
        const ok = await runMain(['get', '--id', 'h', '--name', 'H', '--json'], { sandbox, env });
        const failed = await runMain(['get', '--id', 'h', '--name', 'H'], { sandbox, env });
        const context = `${describeRun(ok)}\n${describeRun(failed)}`;
        expect(ok.code, context).toBe(0);
        expect(failed.code, context).toBe(1);
        // Every line of stderr that a runner would read as a command is one ugs meant.
        for (const line of `${ok.stderr}${failed.stderr}`.split(/\r?\n|\r/)) {
          if (line.startsWith('::')) {
            expect(line, context).toMatch(/^::(add-mask|error title=ugs)::/);
          }
          if (line.startsWith('##vso[')) {
            expect(line, context).toMatch(/^##vso\[task\.(setsecret|logissue type=error)\]/);
          }
        }
        if ('GITHUB_ACTIONS' in runner) {
          expect(ok.stderr).toContain(
            `::add-mask::tok%250A::warning::pwned%0A::set-env name=X::1%0D%0A\\u0023#vso[task.complete]x\n`,
          );
          // The escaped form ugs prints in --json is masked too.
          expect(ok.stderr).toContain(
            '::add-mask::tok%250A::warning::pwned\\n::set-env name=X::1\\r\\n\\u0023#vso[task.complete]x\n',
          );
          // The percent of the hostile text is escaped, so the runner shows it as it was sent.
          expect(failed.stderr).toMatch(/^::error title=ugs::.*no ::add-mask::%250A ::warning/m);
        } else {
          expect(ok.stderr).toContain(
            '##vso[task.setsecret]tok%AZP250A::warning::pwned%0A::set-env name=X::1%0D%0A\\u0023#vso[task.complete]x\n',
          );
        }
      }
    } finally {
      await server.close();
    }
  });
});
