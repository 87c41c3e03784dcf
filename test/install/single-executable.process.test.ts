// The single executable (built by the kit's `singleExecutable()` while other test files run):
// copied alone into an empty directory and run with a PATH that has no `node`, it must do
// everything the npm package does. Start-up time against `node -e 0` and the npm install: `npm run bench`.
import { copyFileSync, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  BINARY_BUILD_TIMEOUT_MS,
  BINARY_NAME,
  describeRun,
  hasNoticeFor,
  librariesInSourceMaps,
  makeSandbox,
  PACKAGE_VERSION,
  ROOT,
  type RunOptions,
  runUgs,
  selfSignedCertificate,
  serveUgs,
  singleExecutable,
  startServer,
  tempDir,
} from '../kit/index.js';

const NAME = BINARY_NAME;

let binary: string;
/** A PATH with nothing on it: no `node` for the binary to lean on. */
let emptyPath: string;

beforeAll(async () => {
  const built = await singleExecutable();
  binary = join(tempDir('alone'), NAME);
  copyFileSync(built, binary);
  emptyPath = tempDir('empty-path');
}, BINARY_BUILD_TIMEOUT_MS);

function alone(options: RunOptions = {}): RunOptions {
  return { ...options, executable: binary, env: { PATH: emptyPath, ...options.env } };
}

describe('the licences the single executable carries', () => {
  // The binary is a copy of Node.js with every library bundled: their notices must go with it.
  it('LICENSE and THIRD-PARTY-NOTICES (Node.js, then every bundled library) beside it', () => {
    const licence = readFileSync(join(ROOT, 'dist', 'bin', 'LICENSE'), 'utf8');
    expect(licence).toBe(readFileSync(join(ROOT, 'LICENSE'), 'utf8'));
    const notices = readFileSync(join(ROOT, 'dist', 'bin', 'THIRD-PARTY-NOTICES'), 'utf8');
    // Node's licence first, for the Node that built the binary (its version is in the binary:
    // the suite may run under another Node, as scripts/test-node-versions.sh does).
    const builtWith = /^Node\.js (v\d+\.\d+\.\d+) \(/m.exec(notices)?.[1];
    expect(builtWith).toBeDefined();
    expect(readFileSync(binary).includes(Buffer.from(builtWith ?? 'none'))).toBe(true);
    expect(notices).toContain('Node.js is licensed for use as follows');
    // The binary bundles what dist/ does (bin/ugs.js with src/main.ts and every vendor bundle).
    const libraries = librariesInSourceMaps(join(ROOT, 'dist'));
    expect(libraries.length).toBeGreaterThan(20);
    for (const library of libraries) expect(hasNoticeFor(notices, library), library).toBe(true);
  });

  it('the same texts inside the binary, so a copy of the file alone still carries them', () => {
    const bytes = readFileSync(binary);
    expect(bytes.includes(readFileSync(join(ROOT, 'LICENSE')))).toBe(true);
    expect(bytes.includes('Node.js is licensed for use as follows')).toBe(true);
    expect(bytes.includes('Copyright (c) 2011 TJ Holowaychuk')).toBe(true);
  });
});

describe('the single executable, alone in a directory, no node on PATH', () => {
  it('the test environment really has no node to find', async () => {
    const result = await runUgs(['--version'], alone({ env: { PATH: emptyPath } }));
    expect(result.code, describeRun(result)).toBe(0);
    // The same PATH leaves the npm package's `#!/usr/bin/env node` with nothing to run.
    const viaEnv = await runUgs(['--version'], {
      executable: join(ROOT, 'bin', 'ugs.js'),
      env: { PATH: emptyPath },
    });
    // env's own "not found" (127), not some other failure of the script.
    expect(viaEnv.code, describeRun(viaEnv)).toBe(127);
    expect(viaEnv.stderr).toMatch(/node.*No such file or directory/);
  });

  it('--version prints the package version', async () => {
    const result = await runUgs(['--version'], alone());
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${PACKAGE_VERSION}\n`);
    expect(result.stderr).toBe('');
  });

  it('--help and a command help print what the npm package prints', async () => {
    const sandbox = makeSandbox();
    for (const args of [['--help'], ['get', '--help']]) {
      const result = await runUgs(args, alone({ sandbox }));
      const npm = await runUgs(args, { sandbox });
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout).toContain('Usage: ugs');
      expect(result.stdout).toBe(npm.stdout);
      expect(result.stderr).toBe('');
    }
  });

  it('serve, login --with-token, get, rotate: end to end', async () => {
    const sandbox = makeSandbox();
    const server = await serveUgs([], { sandbox, executable: binary, env: { PATH: emptyPath } });
    try {
      const apiToken = server.tokenFor('Customer');
      const login = await runUgs(
        ['login', '--base-url', server.url, '--with-token'],
        alone({ sandbox, stdin: apiToken }),
      );
      expect(login.code, describeRun(login)).toBe(0);

      const get = await runUgs(
        ['get', '--id', 'acme', '--name', 'Acme', '--json'],
        alone({ sandbox }),
      );
      expect(get.code, describeRun(get)).toBe(0);
      const created = JSON.parse(get.stdout) as {
        new_user_group: boolean;
        user_group: { token: string };
      };
      expect(created.new_user_group).toBe(true);

      const rotate = await runUgs(
        ['rotate', '--current-token-stdin', '--yes', '--field', 'token'],
        alone({ sandbox, stdin: created.user_group.token }),
      );
      expect(rotate.code, describeRun(rotate)).toBe(0);
      const rotated = rotate.stdout.trim();
      expect(rotated).toMatch(/^[0-9a-f]{64}$/);
      expect(rotated).not.toBe(created.user_group.token);
      // It carries V8's code cache itself: it keeps none in the user's cache directory.
      expect(existsSync(join(sandbox.home, '.cache', 'ugs'))).toBe(false);

      const again = await runUgs(
        ['get', '--id', 'acme', '--name', 'Acme', '--field', 'token'],
        alone({ sandbox }),
      );
      expect(again.code, describeRun(again)).toBe(0);
      expect(again.stdout.trim()).toBe(rotated);
    } finally {
      const stopped = await server.stop();
      expect(stopped.code).toBe(0);
    }
  });

  it('HTTPS with --ca-file: the modules loaded on demand are inside too', async () => {
    const { key, cert, certFile } = selfSignedCertificate();
    const server = await startServer({ tls: { key, cert } });
    try {
      const result = await runUgs(
        [
          'get',
          '--id',
          'acme-1',
          '--name',
          'Acme',
          '--base-url',
          server.url,
          '--ca-file',
          certFile,
        ],
        alone({ env: { UGS_API_TOKEN: 'api-token-for-the-binary' } }),
      );
      expect(result.code, describeRun(result)).toBe(0);
      expect(server.requests).toHaveLength(1);
    } finally {
      await server.close();
    }
  });
});
