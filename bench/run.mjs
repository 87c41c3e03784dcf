// `npm run bench`: times ugs against baselines on this machine and fails when a target is missed.
//
// Each pair runs alternately (A B A B ...) so that drift in the machine's speed hits both alike;
// the figure that counts is the median of the per-pair ratios A/B. Wall time is taken around each
// child process; peak memory (max RSS) comes from GNU time (`/usr/bin/time`, Debian package
// `time`). The service is the bundled emulator (`ugs serve`) on loopback.
//
// The single executable (dist/bin, `npm run build:binary`) is timed against `node -e 0` and
// against `ugs` installed by npm from the package's tarball (packed and installed here).
//
// Options: --runs N (default 20), --warmup N (default 3), --quick (5 runs, 1 warm-up).
// Runs twice, and a missed target in either pass fails the run: in the environment as it is
// (this machine sets NODE_EXTRA_CA_CERTS, which adds about 30 ms to every Node start), and in a
// clean one, as `env -i` with only PATH and HOME (plus the service's address and API token for
// the request commands): most users' case, where a 20 ms Node start leaves little to hide in.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  cleanEnv,
  fail,
  firstJsonLine,
  median,
  numberArg,
  printTable,
  startEmulator,
} from './common.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const args = process.argv.slice(2);
const quick = args.includes('--quick');
const runs = numberArg(args, '--runs', quick ? 5 : 20);
const warmup = numberArg(args, '--warmup', quick ? 1 : 3);
const TIME = '/usr/bin/time';

if (!existsSync(TIME)) fail(`${TIME} is missing: install GNU time (apt-get install time)`);
if (!existsSync(join(root, 'dist', 'main.cjs')))
  fail('dist/ is missing: run `npm run build` first');
const binary = join(
  root,
  'dist',
  'bin',
  `ugs-${process.platform}-${process.arch}${process.platform === 'win32' ? '.exe' : ''}`,
);
if (!existsSync(binary)) fail(`${binary} is missing: run \`npm run build:binary\` first`);

const work = mkdtempSync(join(tmpdir(), 'ugs-bench-'));
const installed = installFromTarball();
const { emulator, apiToken } = startEmulator(root, work);
let missed = 0;
try {
  const { url } = await firstJsonLine(emulator);
  const hasCurl = await commandExists('curl');
  const passes = [
    { label: 'environment as is', env: { ...process.env } },
    {
      label: 'clean environment (PATH and HOME only, no NODE_EXTRA_CA_CERTS)',
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
    },
  ];
  console.log(
    `ugs benchmark: ${runs} runs per command after ${warmup} warm-up, Node ${process.version}`,
  );
  for (const pass of passes) {
    const env = cleanEnv({
      ...pass.env,
      UGS_CONFIG_DIR: work,
      UGS_API_TOKEN: apiToken,
      UGS_BASE_URL: url,
      NO_COLOR: '1',
    });
    // Every timed rotation needs a token of its own: the one before is refused once rotated.
    const tokens = await createGroups(url, `rot-${pass.label}`, (runs + warmup) * 2);
    const ugs = [process.execPath, join(root, 'bin', 'ugs.js')];
    const node = (script) => [process.execPath, join(root, 'bench', script)];
    const cases = [
      {
        name: 'ugs --version',
        a: [...ugs, '--version'],
        b: [process.execPath, '-e', '0'],
        baseline: 'node -e 0',
        target: 1.3,
      },
      {
        name: 'ugs --help',
        a: [...ugs, '--help'],
        b: [process.execPath, '-e', '0'],
        baseline: 'node -e 0',
        target: 1.3,
      },
      {
        name: 'binary --version',
        a: [binary, '--version'],
        b: [process.execPath, '-e', '0'],
        baseline: 'node -e 0',
        target: 1.3,
      },
      {
        name: 'binary --version',
        a: [binary, '--version'],
        b: [installed, '--version'],
        baseline: 'npm ugs --version (info)',
      },
      {
        name: 'ugs get --json',
        a: [...ugs, 'get', '--id', 'bench', '--name', 'Bench', '--json'],
        b: node('reference-get.mjs'),
        baseline: 'fetch script',
        target: 0.9,
        memoryTarget: 1.1,
      },
      {
        name: 'ugs rotate --yes --json',
        a: [...ugs, 'rotate', '--yes', '--json', '--current-token-stdin'],
        b: node('reference-rotate.mjs'),
        baseline: 'fetch script',
        stdin: () => tokens.pop(),
        target: 0.9,
      },
      {
        // The cost of ugs itself: the same request, body included, by the smallest Node script
        // that sends it. Token from UGS_API_TOKEN, then from a profile saved by `ugs login`.
        name: 'ugs get --json',
        a: [...ugs, 'get', '--id', 'bench', '--name', 'Bench', '--json'],
        b: node('reference-get-http.mjs'),
        baseline: 'node:http script',
        target: 2.2,
      },
      {
        name: 'ugs get --json (profile)',
        a: [...ugs, 'get', '--id', 'bench', '--name', 'Bench', '--json'],
        aEnv: profileEnv(env),
        b: node('reference-get-http.mjs'),
        baseline: 'node:http script',
        target: 2.2,
      },
      {
        // A local mint: main.cjs, jose's bundle and one AES-GCM encryption, no request. The
        // secret comes from the environment, as in CI; jose loads for `jwt` alone
        // (test/platform/startup-loads.process.test.ts).
        name: 'ugs jwt (local mint)',
        a: [...ugs, 'jwt', '--id', 'bench', '--embed', 'bench-dashboard'],
        aEnv: {
          ...env,
          UGS_EMBED_SECRET: 'bench-embed-secret-0123456789abc',
          UGS_EMBED_KEY_ID: 'bench',
        },
        b: [process.execPath, '-e', '0'],
        baseline: 'node -e 0',
        target: 1.5,
      },
      {
        // What every run without a token in the OS credential store is spared: ugs loads the
        // native binding only for such a profile (test/config/secure-storage-lazy.process.test.ts).
        name: 'load @napi-rs/keyring',
        a: [
          process.execPath,
          '-e',
          `require(${JSON.stringify(join(root, 'node_modules', '@napi-rs', 'keyring'))})`,
        ],
        b: [process.execPath, '-e', '0'],
        baseline: 'node -e 0 (info)',
      },
    ];
    if (hasCurl) {
      const body = JSON.stringify({ name: 'Bench', user_group_id: 'bench' });
      cases.push({
        name: 'curl get (floor)',
        a: [
          'curl',
          '-sS',
          '-X',
          'GET',
          '-H',
          'content-type: application/json',
          '-H',
          `authorization: Token ${apiToken}`,
          '--data',
          body,
          `${url}/api/user`,
        ],
        b: node('reference-get.mjs'),
        baseline: 'fetch script (info)',
      });
    }
    console.log(`\n${pass.label}`);
    const rows = [];
    for (const c of cases) {
      const result = await measurePair(c, env);
      const ok =
        (c.target === undefined || result.ratio <= c.target) &&
        (c.memoryTarget === undefined || result.memoryRatio <= c.memoryTarget);
      if (!ok) missed++;
      rows.push([
        c.name,
        c.baseline,
        result.a.toFixed(1),
        result.b.toFixed(1),
        `${result.ratio.toFixed(2)}x${c.target === undefined ? '' : ` (<= ${c.target})`}`,
        `${result.aRss.toFixed(1)} / ${result.bRss.toFixed(1)}`,
        `${result.memoryRatio.toFixed(2)}x${c.memoryTarget === undefined ? '' : ` (<= ${c.memoryTarget})`}`,
        c.target === undefined && c.memoryTarget === undefined ? 'info' : ok ? 'ok' : 'MISSED',
      ]);
    }
    printTable(
      [
        'command',
        'baseline',
        'median ms',
        'baseline ms',
        'ratio (median of A/B)',
        'peak RSS MiB',
        'RSS ratio',
        '',
      ],
      rows,
    );
  }
} finally {
  emulator.kill('SIGTERM');
  rmSync(work, { recursive: true, force: true });
}
if (missed > 0) {
  console.error(`\n${missed} target(s) missed`);
  process.exitCode = 1;
} else {
  console.log('\nevery target met');
}

async function measurePair(c, env) {
  const ratios = [];
  const memoryRatios = [];
  const as = [];
  const bs = [];
  const aRss = [];
  const bRss = [];
  for (let i = 0; i < warmup + runs; i++) {
    const a = await timeOnce(c.a, c.aEnv ?? env, c.stdin?.());
    const b = await timeOnce(c.b, env, c.stdin?.());
    if (i < warmup) continue;
    as.push(a.ms);
    bs.push(b.ms);
    aRss.push(a.rssMiB);
    bRss.push(b.rssMiB);
    ratios.push(a.ms / b.ms);
    memoryRatios.push(a.rssMiB / b.rssMiB);
  }
  return {
    a: median(as),
    b: median(bs),
    ratio: median(ratios),
    aRss: median(aRss),
    bRss: median(bRss),
    memoryRatio: median(memoryRatios),
  };
}

async function timeOnce(command, env, stdinText) {
  const rssFile = join(work, `rss-${randomBytes(4).toString('hex')}`);
  const started = process.hrtime.bigint();
  const child = spawn(TIME, ['-f', '%M', '-o', rssFile, ...command], {
    env,
    stdio: [stdinText === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
  });
  if (stdinText !== undefined) child.stdin.end(stdinText);
  let stderr = '';
  child.stdout.resume();
  child.stderr.on('data', (chunk) => {
    stderr += chunk;
  });
  const code = await new Promise((resolve) => child.once('close', resolve));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  if (code !== 0) fail(`${command.join(' ')} exited ${code}: ${stderr.trim()}`);
  const rssKiB = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop());
  rmSync(rssFile, { force: true });
  return { ms, rssMiB: rssKiB / 1024 };
}

/**
 * `env` without the service's address and token, which `ugs login` has saved instead in a config
 * directory of its own (one profile, the token in the config file).
 */
function profileEnv(env) {
  const dir = join(work, `profile-${randomBytes(4).toString('hex')}`);
  const { UGS_API_TOKEN: token, UGS_BASE_URL: baseUrl, ...rest } = env;
  const profile = { ...rest, UGS_CONFIG_DIR: dir };
  const login = spawnSync(
    process.execPath,
    [join(root, 'bin', 'ugs.js'), 'login', '--with-token', '--base-url', baseUrl],
    { env: profile, input: token, encoding: 'utf8' },
  );
  if (login.status !== 0) fail(`ugs login exited ${login.status}: ${login.stderr.trim()}`);
  return profile;
}

async function createGroups(url, prefix, count) {
  const tokens = [];
  for (let i = 0; i < count; i++) {
    const body = JSON.stringify({ name: 'Bench rotation', user_group_id: `${prefix}-${i}` });
    const answer = await new Promise((resolve, reject) => {
      const req = request(`${url}/api/user`, {
        method: 'GET',
        headers: {
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
          authorization: `Token ${apiToken}`,
        },
      });
      req.on('response', (response) => {
        let text = '';
        response.on('data', (chunk) => {
          text += chunk;
        });
        response.on('end', () => resolve(JSON.parse(text)));
      });
      req.on('error', reject);
      req.end(body);
    });
    tokens.push(answer.user_group.token);
  }
  return tokens;
}

function commandExists(name) {
  return new Promise((resolve) => {
    const child = spawn(name, ['--version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}

/**
 * `ugs` as npm installs it from the tarball (bin/ugs.js run through its `#!/usr/bin/env node`
 * line), in a prefix of its own: what "ugs from npm" means for the binary's comparison.
 */
function installFromTarball() {
  const npm = (npmArgs) => {
    const result = spawnSync('npm', npmArgs, { cwd: root, encoding: 'utf8' });
    if (result.status !== 0) fail(`npm ${npmArgs.join(' ')}: ${result.stderr}`);
    return result.stdout;
  };
  const [packed] = JSON.parse(
    npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work]),
  );
  const prefix = join(work, 'npm-prefix');
  npm([
    'install',
    '-g',
    '--offline',
    '--no-audit',
    '--no-fund',
    '--prefix',
    prefix,
    join(work, packed.filename),
  ]);
  return join(prefix, 'bin', 'ugs');
}
