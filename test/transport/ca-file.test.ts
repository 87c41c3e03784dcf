/**
 * `login --ca-file` is remembered: the profile keeps the CA file's absolute path, `status` and
 * `doctor` show it, later commands trust it, and `--ca-file`/`UGS_CA_FILE` still override it. A CA
 * that did not sign the service's certificate is named as the one that failed.
 */
import { copyFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acmeBody,
  describeRun,
  json,
  makeSandbox,
  readConfig,
  runMain,
  type SelfSigned,
  selfSignedCertificate,
  startServer,
  type TestServer,
  tempDir,
} from '../kit/index.js';

const API_TOKEN = 'api-token-ca-file-0123456789';
const GET = ['get', '--id', 'acme', '--name', 'Acme Corp', '--field', 'token'];

let tls: SelfSigned;
let other: SelfSigned;
let server: TestServer;
beforeAll(async () => {
  tls = selfSignedCertificate();
  other = selfSignedCertificate();
  server = await startServer({ tls }, json(200, acmeBody()));
});
afterAll(async () => {
  await server.close();
});

async function loggedIn(caFile: string) {
  const sandbox = makeSandbox();
  const login = await runMain(
    // The server answers every request as a found group, which the login's check would refuse.
    ['login', '--no-verify', '--base-url', server.url, '--ca-file', caFile, '--with-token'],
    { sandbox, stdin: API_TOKEN },
  );
  expect(login.code, describeRun(login)).toBe(0);
  return sandbox;
}

describe('login --ca-file is saved with the profile', () => {
  it('as an absolute path, even when given relative; later commands trust it without the flag', async () => {
    // A relative path resolves against the working directory of the login.
    const sandbox = await loggedIn(relative(process.cwd(), tls.certFile));
    const config = readConfig(sandbox) as { profiles: { default: { caFile?: string } } };
    expect(config.profiles.default.caFile).toBe(tls.certFile);

    const get = await runMain(GET, { sandbox });
    expect(get.code, describeRun(get)).toBe(0);
    expect(get.stdout).toBe('ugt_hardening_token_0001\n');
  });

  it('status and doctor show it, with where it came from', async () => {
    const sandbox = await loggedIn(tls.certFile);
    const status = await runMain(['status', '--json'], { sandbox });
    expect(JSON.parse(status.stdout)).toMatchObject({
      caFile: tls.certFile,
      caFileSource: 'profile',
    });
    const table = await runMain(['status'], { sandbox });
    expect(table.stdout).toContain(`CA file\t${tls.certFile} (profile)\n`);
    const doctor = await runMain(['doctor', '--json'], { sandbox });
    const checks = (JSON.parse(doctor.stdout) as { checks: { id: string; detail: string }[] })
      .checks;
    expect(checks.find((check) => check.id === 'tls')?.detail).toContain(`profile ${tls.certFile}`);
  });

  it('UGS_CA_FILE and --ca-file still override the saved one', async () => {
    const sandbox = await loggedIn(tls.certFile);
    const viaEnv = await runMain(GET, { sandbox, env: { UGS_CA_FILE: other.certFile } });
    expect(viaEnv.code, describeRun(viaEnv)).toBe(4);
    const viaFlag = await runMain([...GET, '--ca-file', other.certFile], { sandbox });
    expect(viaFlag.code, describeRun(viaFlag)).toBe(4);
  });

  it('a CA that did not sign the certificate is named, and "pass --ca-file" is not suggested', async () => {
    const dir = tempDir('wrong-ca');
    const wrong = join(dir, 'corp-root.pem');
    copyFileSync(other.certFile, wrong);
    const result = await runMain([...GET, '--ca-file', wrong], {
      env: { UGS_BASE_URL: server.url, UGS_API_TOKEN: API_TOKEN },
    });
    expect(result.code, describeRun(result)).toBe(4);
    expect(result.stderr).toMatch(
      new RegExp(
        `^error: TLS connection to .* failed: the CA in ${basename(wrong)} did not verify`,
        'm',
      ),
    );
    expect(result.stderr).not.toContain('pass --ca-file');
  });
});
