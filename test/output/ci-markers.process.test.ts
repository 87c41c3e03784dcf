/**
 * CI workflow-command injection through the built binary, stdout and stderr merged into one pipe
 * as a runner reads a step: no line carries a marker that came from outside. The in-process
 * checks of every output mode are in ci-markers.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  describeRun,
  makeSandbox,
  runShell,
  startServer,
  type TestServer,
  UGS_SHELL,
} from '../kit/index.js';
import {
  EVIL_NAME,
  GITHUB_OLD,
  hostileAnswer,
  offendingLines,
  RUNNERS,
} from './ci-markers-fixture.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(hostileAnswer);
});
afterAll(async () => {
  await server.close();
});

for (const [runner, env] of Object.entries(RUNNERS)) {
  describe(`${runner}: no marker from outside in any output line`, () => {
    it('the built binary, stdout and stderr merged as the runner reads them', async () => {
      const sandbox = makeSandbox();
      const result = await runShell(
        `${UGS_SHELL} get --id 'x ${GITHUB_OLD}' --name '${EVIL_NAME}' 2>&1; ${UGS_SHELL} get --id 'x' --name '${EVIL_NAME}' --field name 2>&1; echo "exit $?"`,
        {
          sandbox,
          env: { ...env, UGS_BASE_URL: server.url, UGS_API_TOKEN: 'api-token-0123456789' },
        },
      );
      expect(result.stdout, describeRun(result)).toMatch(/exit 1\n$/);
      expect(result.stdout, describeRun(result)).toMatch(/Acme \\u0023#vso/);
      expect(offendingLines(result.stdout), describeRun(result)).toEqual([]);
    });
  });
}
