// `ugs login --secure-storage` against a real Secret Service: gnome-keyring-daemon in a D-Bus
// session that the test starts itself (dbus-run-session), its keyring files in the sandbox's HOME,
// so a later session sees what an earlier one saved, as after a reboot. `secret-tool` checks what
// the store really holds. Without a D-Bus session, the failures a headless server meets.
import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  describeRun,
  type EnvChanges,
  expectFailure,
  makeSandbox,
  type RunResult,
  readConfig,
  runShell,
  runUgs,
  type Sandbox,
  UGS_SHELL,
  useService,
  writeConfig,
} from '../kit/index.js';

const API_TOKEN = 'apitoken-keyring-test-0a1b2c3d';
const OTHER_TOKEN = 'apitoken-file-other-9f8e7d6c';

const TOOLS = ['dbus-run-session', 'dbus-send', 'gnome-keyring-daemon', 'secret-tool'];
const missingTools = TOOLS.filter(
  (tool) => spawnSync('sh', ['-c', `command -v ${tool}`], { stdio: 'ignore' }).status !== 0,
);
const SKIP_REASON = `skipped: ${missingTools.join(', ')} not installed (Debian: gnome-keyring dbus libsecret-tools; .ci/run installs them)`;

const service = useService([API_TOKEN]);

/**
 * The entry ugs keeps a profile's token under: service "ugs", account "<profile> (<config>)", the
 * config directory named by its real path.
 */
function accountOf(sb: Sandbox, profile = 'default'): string {
  const dir = existsSync(sb.configDir) ? realpathSync(sb.configDir) : sb.configDir;
  return `${profile} (${join(dir, 'config.json')})`;
}

/** Each sandbox's own runtime directory: two keyring daemons must not share a control socket. */
function runtimeDir(sb: Sandbox): string {
  const dir = join(sb.root, 'runtime');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

/**
 * Runs bash `script` in a new D-Bus session with gnome-keyring's Secret Service, its login keyring
 * unlocked (created on first use). The daemon runs in the foreground so the script can stop it;
 * ugs starts only once the daemon owns the Secret Service name (asking earlier would make D-Bus
 * start a second daemon). The session bus's own chatter goes to a log; the script's stderr is
 * the result's (fd 9 carries it past dbus-run-session).
 */
function inKeyringSession(
  sb: Sandbox,
  script: string,
  env: EnvChanges = {},
  options: { busConfig?: string } = {},
): Promise<RunResult> {
  // With a bus configuration of its own (no service files), nothing is started for the script.
  const startKeyring = `echo -n keyring-password | gnome-keyring-daemon --foreground --unlock --components=secrets >/dev/null 2>&1 &
keyring=$!
trap 'kill $keyring 2>/dev/null; wait $keyring 2>/dev/null' EXIT
for _ in $(seq 200); do
  dbus-send --session --print-reply --dest=org.freedesktop.DBus / org.freedesktop.DBus.NameHasOwner string:org.freedesktop.secrets 2>/dev/null | grep -q 'boolean true' && break
  sleep 0.05
done`;
  const inner = `exec 2>&9 9>&-
${options.busConfig === undefined ? startKeyring : ''}
${script}`;
  const config = options.busConfig === undefined ? '' : ' --config-file="$BUS_CONFIG"';
  return runShell(
    `dbus-run-session${config} -- bash -c '${inner.replace(/'/g, "'\\''")}' 9>&2 2>>"$SANDBOX_ROOT/dbus.log"`,
    {
      sandbox: sb,
      env: {
        SANDBOX_ROOT: sb.root,
        XDG_RUNTIME_DIR: runtimeDir(sb),
        XDG_DATA_HOME: join(sb.home, '.local', 'share'),
        DISPLAY: undefined,
        ...(options.busConfig !== undefined && { BUS_CONFIG: options.busConfig }),
        ...env,
      },
    },
  );
}

/** `ugs <args>` in a keyring session, the API token piped in as TOKEN. */
function ugsInSession(sb: Sandbox, args: string, env: EnvChanges = {}): Promise<RunResult> {
  return inKeyringSession(sb, `${UGS_SHELL} ${args}`, env);
}

/** What the Secret Service holds for the profile, read with secret-tool in a new session. */
async function storedSecret(sb: Sandbox, profile = 'default'): Promise<string | undefined> {
  const lookup = await inKeyringSession(sb, 'secret-tool lookup service ugs username "$ACCOUNT"', {
    ACCOUNT: accountOf(sb, profile),
  });
  // secret-tool says "no such entry" with exit 1 and no output at all; exit 1 with a message on
  // stderr is a lookup that failed (no bus, a locked keyring), which must not read as "removed".
  if (lookup.code === 1 && lookup.stdout === '' && lookup.stderr === '') return undefined;
  expect(lookup.code, describeRun(lookup)).toBe(0);
  return lookup.stdout;
}

async function secureLogin(sb: Sandbox, token = API_TOKEN): Promise<void> {
  const login = await ugsInSession(
    sb,
    'login --secure-storage --with-token --base-url "$URL" <<< "$TOKEN"',
    { URL: service.url, TOKEN: token },
  );
  expect(login.code, describeRun(login)).toBe(0);
  expect(login.stderr).toContain('the API token is in the Secret Service');
}

/** Every file under the config directory, concatenated: where a token must not be. */
function configFilesText(sb: Sandbox): string {
  if (!existsSync(sb.configDir)) return '';
  return readdirSync(sb.configDir)
    .map((name) => readFileSync(join(sb.configDir, name), 'utf8'))
    .join('\n');
}

const GET = ['get', '--id', 'acme', '--name', 'Acme Corp', '--json'];
// --debug: the trace shows the request, so a token read from the store must be redacted there too.
const GET_SHELL = "get --id acme --name 'Acme Corp' --json --debug";

/** A headless machine: no session bus address, no display, a runtime directory with no bus. */
function noDbusEnv(sb: Sandbox): EnvChanges {
  return {
    DBUS_SESSION_BUS_ADDRESS: undefined,
    DISPLAY: undefined,
    XDG_RUNTIME_DIR: runtimeDir(sb),
  };
}

describe.skipIf(missingTools.length > 0)(
  'the Secret Service (gnome-keyring in dbus-run-session)',
  () => {
    it('login --secure-storage puts the token in the store and only there; get and status read it from a later session', async () => {
      const sb = makeSandbox();
      await secureLogin(sb);

      expect(readConfig(sb)).toEqual({
        profiles: { default: { baseUrl: service.url, tokenStore: 'keyring' } },
      });
      expect(configFilesText(sb)).not.toContain(API_TOKEN);
      expect(await storedSecret(sb)).toBe(API_TOKEN);

      const requestsBefore = service.requests.length;
      const get = await ugsInSession(sb, GET_SHELL);
      expect(get.code, describeRun(get)).toBe(0);
      expect(service.requests.slice(requestsBefore).map((r) => r.headers.authorization)).toEqual([
        `Token ${API_TOKEN}`,
      ]);
      expect(get.stderr).toContain(`Token …${API_TOKEN.slice(-4)}`);
      expect(get.stdout + get.stderr).not.toContain(API_TOKEN);

      const status = await ugsInSession(sb, 'status --json');
      expect(status.code, describeRun(status)).toBe(0);
      expect(JSON.parse(status.stdout)).toMatchObject({
        tokenSource: 'profile',
        tokenLocation: 'credential store',
        token: `****${API_TOKEN.slice(-4)}`,
      });
      const table = await ugsInSession(sb, 'status');
      expect(table.stdout).toMatch(/^token stored in\tcredential store \(Secret Service\)$/m);
    });

    it('UGS_API_TOKEN overrides the store: no D-Bus needed, and status says environment', async () => {
      const sb = makeSandbox();
      await secureLogin(sb);
      const env = { ...noDbusEnv(sb), UGS_API_TOKEN: API_TOKEN };
      const get = await runUgs(GET, { sandbox: sb, env });
      expect(get.code, describeRun(get)).toBe(0);
      const status = await runUgs(['status', '--json'], { sandbox: sb, env });
      expect(JSON.parse(status.stdout)).toMatchObject({ tokenLocation: 'environment' });
    });

    it("a later plain login stores in the file again and removes the store's copy", async () => {
      const sb = makeSandbox();
      await secureLogin(sb);
      const plain = await ugsInSession(
        sb,
        'login --no-verify --with-token --base-url "$URL" <<< "$TOKEN"',
        {
          URL: service.url,
          TOKEN: OTHER_TOKEN,
        },
      );
      expect(plain.code, describeRun(plain)).toBe(0);
      expect(plain.stderr).not.toContain('warning');
      expect(readConfig(sb)).toEqual({
        profiles: { default: { baseUrl: service.url, apiToken: OTHER_TOKEN } },
      });
      expect(await storedSecret(sb)).toBeUndefined();
    });

    it('logout removes the token from the store and the reference from the profile', async () => {
      const sb = makeSandbox();
      await secureLogin(sb);
      const logout = await ugsInSession(sb, 'logout');
      expect(logout.code, describeRun(logout)).toBe(0);
      expect(logout.stderr).toContain('from the Secret Service');
      expect(await storedSecret(sb)).toBeUndefined();
      expect(readConfig(sb)).toEqual({ profiles: { default: { baseUrl: service.url } } });
      expectFailure(await runUgs(GET, { sandbox: sb, env: noDbusEnv(sb) }), 3);
    });

    it('the entry is keyed on the real config directory: login through a symlink, logout through the real path', async () => {
      const sb = makeSandbox();
      mkdirSync(sb.configDir, { recursive: true, mode: 0o700 });
      const link = join(sb.root, 'config-link');
      symlinkSync(sb.configDir, link);
      const login = await ugsInSession(
        sb,
        'login --secure-storage --with-token --base-url "$URL" <<< "$TOKEN"',
        { URL: service.url, TOKEN: API_TOKEN, UGS_CONFIG_DIR: `${link}/.` },
      );
      expect(login.code, describeRun(login)).toBe(0);
      expect(await storedSecret(sb)).toBe(API_TOKEN);

      // Another spelling reads the same entry; the real path logs out of it.
      const status = await ugsInSession(sb, 'status --json', {
        UGS_CONFIG_DIR: join(link, '..', 'config'),
      });
      expect(JSON.parse(status.stdout)).toMatchObject({ token: `****${API_TOKEN.slice(-4)}` });
      const logout = await ugsInSession(sb, 'logout');
      expect(logout.code, describeRun(logout)).toBe(0);
      expect(logout.stderr).toContain(
        'Removed the API token of profile "default" from the Secret Service',
      );
      expect(await storedSecret(sb)).toBeUndefined();
      const all = await inKeyringSession(sb, 'secret-tool search --all service ugs 2>&1');
      expect(all.stdout).not.toMatch(/attribute\.username/);
    });

    it('a D-Bus session without a Secret Service on it: login --secure-storage exits 2, saves nothing', async () => {
      const sb = makeSandbox();
      // A session bus that activates nothing, as on a server whose user bus has no keyring.
      const busConfig = join(sb.root, 'bare-session.conf');
      writeFileSync(
        busConfig,
        `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:tmpdir=${sb.root}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
      );
      const login = await inKeyringSession(
        sb,
        `${UGS_SHELL} login --secure-storage --with-token --base-url "$URL" <<< "$TOKEN"`,
        { URL: service.url, TOKEN: API_TOKEN },
        { busConfig },
      );
      const { error } = expectFailure(login, 2);
      expect(error).toMatch(
        /^cannot save the API token in the Secret Service: no Secret Service on the D-Bus session bus/,
      );
      expect(existsSync(sb.configDir)).toBe(false);
    });

    it('profiles and config directories keep separate entries', async () => {
      const sb = makeSandbox();
      await secureLogin(sb);
      const staging = await ugsInSession(
        sb,
        // OTHER_TOKEN is not one the service accepts: saved unchecked.
        'login --no-verify --profile staging --secure-storage --with-token --base-url "$URL" <<< "$TOKEN"',
        { URL: service.url, TOKEN: OTHER_TOKEN },
      );
      expect(staging.code, describeRun(staging)).toBe(0);
      // The same profile name in another config directory, the same keyring.
      const otherDir = join(sb.root, 'other-config');
      const other = await ugsInSession(
        sb,
        'login --no-verify --secure-storage --with-token --base-url "$URL" <<< "$TOKEN"',
        { URL: service.url, TOKEN: OTHER_TOKEN, UGS_CONFIG_DIR: otherDir },
      );
      expect(other.code, describeRun(other)).toBe(0);

      expect(await storedSecret(sb)).toBe(API_TOKEN);
      expect(await storedSecret(sb, 'staging')).toBe(OTHER_TOKEN);
      const all = await inKeyringSession(sb, 'secret-tool search --all service ugs 2>&1');
      expect(all.stdout.match(/^attribute\.username = .*$/gm)?.sort()).toEqual(
        [
          `attribute.username = ${accountOf(sb)}`,
          `attribute.username = ${accountOf(sb, 'staging')}`,
          `attribute.username = default (${join(otherDir, 'config.json')})`,
        ].sort(),
      );
    });
  },
);

// The Secret Service is Linux's store; elsewhere a missing D-Bus does not make the store unreachable.
describe.runIf(process.platform === 'linux')('no D-Bus session (a headless server)', () => {
  it('login --secure-storage fails with exit 2, says why, and leaves the config file byte-identical', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, apiToken: OTHER_TOKEN } } });
    const before = readFileSync(sb.configPath);
    const login = await runUgs(
      ['login', '--secure-storage', '--with-token', '--base-url', service.url],
      { sandbox: sb, env: noDbusEnv(sb), stdin: `${API_TOKEN}\n` },
    );
    const { error, hint } = expectFailure(login, 2);
    expect(error).toMatch(/^cannot save the API token in the Secret Service: no D-Bus session bus/);
    expect(error).toContain('nothing was saved');
    expect(hint).toContain('without --secure-storage');
    expect(readFileSync(sb.configPath).equals(before)).toBe(true);
    expect(readdirSync(sb.configDir)).toEqual(['config.json']);
    expect(login.stderr).not.toContain(API_TOKEN);
  });

  it('login --secure-storage with no config yet creates nothing', async () => {
    const sb = makeSandbox();
    const login = await runUgs(
      ['login', '--secure-storage', '--with-token', '--base-url', service.url],
      { sandbox: sb, env: noDbusEnv(sb), stdin: `${API_TOKEN}\n` },
    );
    expectFailure(login, 2);
    expect(existsSync(sb.configDir)).toBe(false);
  });

  it.each([
    ['get', GET],
    ['status', ['status']],
  ])(
    '%s of a profile whose token is in the store: exit 2 with a hint, never a stack',
    async (_name, args) => {
      const sb = makeSandbox();
      writeConfig(sb, { profiles: { default: { baseUrl: service.url, tokenStore: 'keyring' } } });
      const result = await runUgs(args, { sandbox: sb, env: noDbusEnv(sb) });
      const { error, hint } = expectFailure(result, 2, { stdout: 'any' });
      expect(error).toMatch(
        /^cannot read the API token of profile "default" from the Secret Service: no D-Bus session bus/,
      );
      expect(hint).toContain('UGS_API_TOKEN');
      expect(hint).toContain('ugs login --secure-storage');
    },
  );

  it('logout of a profile whose token is in the store fails with exit 2 and changes nothing', async () => {
    const sb = makeSandbox();
    writeConfig(sb, { profiles: { default: { baseUrl: service.url, tokenStore: 'keyring' } } });
    const before = readFileSync(sb.configPath);
    const { hint } = expectFailure(
      await runUgs(['logout'], { sandbox: sb, env: noDbusEnv(sb) }),
      2,
    );
    expect(hint).toContain('ugs logout');
    expect(readFileSync(sb.configPath).equals(before)).toBe(true);
  });
});

it.runIf(missingTools.length > 0)(SKIP_REASON, () => {
  // CI installs the tools (.ci/run): there, a missing one is a failure, not a skip.
  expect(process.env.CI, SKIP_REASON).toBeFalsy();
});
