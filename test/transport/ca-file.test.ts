/**
 * `login --ca-file` is remembered: the profile keeps the CA file's absolute path, `status` and
 * `doctor` show it, later commands trust it, and `--ca-file`/`UGS_CA_FILE` still override it. A CA
 * that did not sign the service's certificate is named as the one that failed.
 */
import { X509Certificate } from 'node:crypto';
import { copyFileSync, writeFileSync } from 'node:fs';
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

describe('--ca-file reads DER as well as PEM', () => {
  /** The CA as the binary `.cer` Windows' certificate export writes by default. */
  function derFile(cert: string): string {
    const file = join(tempDir('der'), 'ca.cer');
    writeFileSync(file, new X509Certificate(cert).raw);
    return file;
  }

  it('a DER .cer verifies the service, as its PEM does', async () => {
    const sandbox = makeSandbox();
    const run = await runMain([...GET, '--base-url', server.url, '--ca-file', derFile(tls.cert)], {
      sandbox,
      env: { UGS_API_TOKEN: API_TOKEN },
    });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout).toBe('ugt_hardening_token_0001\n');
  });

  it('saved by login, then used by get and by doctor', async () => {
    const sandbox = await loggedIn(derFile(tls.cert));
    const get = await runMain(GET, { sandbox });
    expect(get.code, describeRun(get)).toBe(0);
    const doctor = await runMain(['doctor', '--json'], { sandbox });
    const checks = (JSON.parse(doctor.stdout) as { checks: { id: string; status: string }[] })
      .checks;
    expect(checks.find((check) => check.id === 'tls')?.status, doctor.stdout).toBe('pass');
  });

  it('a DER certificate of another CA is still the CA that failed', async () => {
    const run = await runMain(
      [...GET, '--base-url', server.url, '--ca-file', derFile(other.cert)],
      { env: { UGS_API_TOKEN: API_TOKEN } },
    );
    expect(run.code, describeRun(run)).toBe(4);
    expect(run.stderr).toMatch(/the CA in ca\.cer did not verify/);
  });

  it('a file that is neither: refused, naming both forms', async () => {
    const file = join(tempDir('der'), 'junk.cer');
    writeFileSync(file, Buffer.from([0x30, 0x03, 0x01, 0x02, 0x03]));
    const run = await runMain([...GET, '--base-url', server.url, '--ca-file', file], {
      env: { UGS_API_TOKEN: API_TOKEN },
    });
    expect(run.code, describeRun(run)).toBe(2);
    expect(run.stderr).toMatch(/contains no certificate \(PEM or DER\)/);
  });
});
