/**
 * The checks of `ugs doctor`, in the order a request meets them: config file, profile, base URL,
 * proxy, DNS, TCP, TLS, API token, and (with `--probe`) one authenticated request. Each check
 * says what it found and, when it failed, what to do. A check that cannot run because an earlier
 * one failed is skipped rather than failed again.
 */
import { lstatSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  apiTokenProblem,
  type CaFileSetting,
  type Credentials,
  readApiToken,
  resolveApiPath,
  resolveCaFile,
  resolveCredentials,
  resolveDialect,
  withCaFile,
} from '../context/credentials.js';
import type { Deps } from '../context/factory.js';
import type { ProfileSource } from '../context/settings.js';
import { UgsError } from '../errors.js';
import {
  commandWordFor,
  endpointUrl,
  formatBaseUrl,
  isLoopbackHost,
  parseBaseUrl,
  repeatedSegment,
  shellWord,
} from '../input/parse.js';
import { errorCode, errorCodeInChain, isNotTlsCode } from '../platform/guards.js';
import { hasModeBits, insideUserProfile } from '../platform/host.js';
import { readFileCapped } from '../platform/io.js';
import { DEFAULT_DIALECT, isVendorDialect, NOT_THE_VENDOR_API } from '../service/dialect.js';
import { wireOf } from '../service/operation.js';
import { expectedRefusal, type ProbeResult, probe, probeBodyText } from '../service/probe.js';
import { loginCommandFor, type Target } from '../service/target.js';
import { message } from '../text/message.js';
import { maskToken } from '../text/redact.js';
import { caCertificatesText } from '../transport/http.js';
import { type DoctorNetwork, isIpAddress } from '../transport/network.js';
import { displayProxy, proxyFor } from './proxy.js';

/** `warn`: it works as set, but is probably not what was meant; doctor still exits 0. */
export type CheckStatus = 'pass' | 'warn' | 'fail' | 'skip';

export interface Check {
  id: string;
  title: string;
  status: CheckStatus;
  detail: string;
  /** What to do about a failure (or about a skipped check, when something can be done). */
  fix?: string;
}

export interface DoctorOptions {
  probe: boolean;
  /** Where the profile name came from: settings.ts does not keep it. */
  profileSource: ProfileSource;
}

const DAY_MS = 24 * 60 * 60 * 1000;
const MAX_CA_FILE_BYTES = 1024 * 1024;

const pass = (id: string, title: string, detail: string): Check => ({
  id,
  title,
  status: 'pass',
  detail,
});
const fail = (id: string, title: string, detail: string, fix: string): Check => ({
  id,
  title,
  status: 'fail',
  detail,
  fix,
});
const warn = (id: string, title: string, detail: string, fix: string): Check => ({
  id,
  title,
  status: 'warn',
  detail,
  fix,
});
const skip = (id: string, title: string, detail: string, fix?: string): Check => ({
  id,
  title,
  status: 'skip',
  detail,
  ...(fix === undefined ? {} : { fix }),
});

export async function runChecks(options: DoctorOptions, deps: Deps): Promise<Check[]> {
  const checks: Check[] = [];
  const config = checkConfigFile(deps);
  checks.push(config);
  let credentials: Credentials | undefined;
  try {
    credentials = resolveCredentials(deps);
  } catch {
    // The config file check has said why it cannot be read.
  }
  // A token kept in the OS credential store is read once, here: the profile, token and probe
  // checks need it as they need a token from the file, and a store out of reach is the token
  // check's failure (with readApiToken's message and hint), not a crash of doctor.
  let storeProblem: UgsError | undefined;
  if (credentials?.tokenLocation === 'credential store') {
    try {
      credentials = { ...credentials, apiToken: await readApiToken(deps, credentials) };
    } catch (error) {
      if (!(error instanceof UgsError)) throw error;
      storeProblem = error;
    }
  }
  checks.push(checkProfile(options, deps, credentials));
  const { check: baseCheck, url } = checkBaseUrl(deps, credentials);
  checks.push(baseCheck);
  const { check: proxyCheck, route } = checkProxy(deps, url);
  checks.push(proxyCheck);
  let reachable = false;
  if (route === undefined) {
    checks.push(
      skip('dns', 'DNS', 'nothing to look up'),
      skip('tcp', 'TCP connect', 'nothing to connect to'),
    );
  } else {
    reachable = await checkDnsAndTcp(deps, route, checks);
  }
  const caFile = credentials === undefined ? undefined : resolveCaFile(deps.settings, credentials);
  checks.push(await checkTls(deps, url, route, reachable, options.probe === true, caFile));
  const token =
    storeProblem === undefined
      ? checkToken(credentials)
      : fail('token', 'API token', storeProblem.message, storeProblem.hint ?? 'run `ugs login`');
  checks.push(token);
  checks.push(
    options.probe
      ? await checkProbe(deps, credentials, url, reachable && token.status === 'pass')
      : skip('probe', 'probe', 'not sent', 'add --probe to test the API token against the service'),
  );
  return checks;
}

function checkConfigFile(deps: Deps): Check {
  const title = 'config file';
  const { config, settings } = deps;
  const path = config.path;
  let fileMode: number;
  try {
    const stat = lstatSync(path);
    if (!stat.isFile()) {
      return fail(
        'config',
        title,
        message`${path} is not a regular file`,
        'replace it with a regular file (ugs never follows a symlink there)',
      );
    }
    fileMode = stat.mode & 0o777;
  } catch (error) {
    if (errorCode(error) === 'ENOENT') {
      return skip(
        'config',
        title,
        message`${path} does not exist`,
        `run \`${loginCommandFor(settings.profile)}\` to create it, or use UGS_API_TOKEN and UGS_BASE_URL`,
      );
    }
    return fail(
      'config',
      title,
      message`cannot read ${path}: ${errorCode(error) ?? String(error)}`,
      'check the file and its permissions, or point UGS_CONFIG_DIR at another directory',
    );
  }
  try {
    config.readProfile(settings.profile);
  } catch (error) {
    if (error instanceof UgsError) {
      return fail('config', title, error.message, error.hint ?? message`fix or delete ${path}`);
    }
    throw error;
  }
  const { platform, homedir } = deps.system;
  if (!hasModeBits(platform)) {
    // Windows: no mode to read. Outside the profile the file has its folder's ACL, which ugs
    // neither sets nor can judge: say so rather than pass it.
    if (insideUserProfile(path, platform, homedir)) return pass('config', title, message`${path}`);
    return warn(
      'config',
      title,
      message`${path} is outside your user profile: it has its folder's permissions, which may let other users read the API token`,
      `check them with \`icacls ${commandWordFor(platform)(dirname(path))}\`, or unset UGS_CONFIG_DIR to keep the config in your profile`,
    );
  }
  const dir = dirname(path);
  const dirMode = statSync(dir).mode & 0o777;
  const modes = `mode ${octal(fileMode)}, directory ${octal(dirMode)}`;
  if ((fileMode & 0o077) !== 0) {
    return fail(
      'config',
      title,
      message`${path} (${modes}): other users can read the API token`,
      `chmod 600 ${shellWord(path)}`,
    );
  }
  if ((dirMode & 0o022) !== 0) {
    return fail(
      'config',
      title,
      message`${path} (${modes}): others can replace the file`,
      `chmod 700 ${shellWord(dir)}`,
    );
  }
  return pass('config', title, message`${path} (${modes})`);
}

function checkProfile(
  options: DoctorOptions,
  deps: Deps,
  credentials: Credentials | undefined,
): Check {
  const title = 'profile';
  const { settings } = deps;
  const name = settings.profile;
  const from = {
    flag: 'from --profile',
    env: 'from UGS_PROFILE',
    config: 'the default, chosen with `ugs profile use`',
    default: 'the default',
  }[options.profileSource];
  if (credentials === undefined) {
    return skip('profile', title, message`"${name}" (${from}): the config file cannot be read`);
  }
  const apiPath = safeApiPath(deps, credentials);
  const dialect = resolveDialect(settings, credentials);
  const sources = [
    `base URL ${credentials.baseUrl ? `from ${sourceName(credentials.baseUrl.source, '--base-url', 'UGS_BASE_URL')}` : 'not set'}`,
    isVendorDialect(dialect.value)
      ? "API path the vendor's"
      : `API path ${apiPath === undefined ? 'invalid' : apiPath.source === 'default' ? 'default' : `from ${sourceName(apiPath.source, '--api-path', 'UGS_API_PATH')}`}`,
    `dialect ${dialect.value} (${dialect.source === 'default' ? 'default' : `from ${sourceName(dialect.source, '--dialect', 'UGS_DIALECT')}`})`,
    `token ${credentials.apiToken ? `from ${credentials.apiToken.source === 'profile' ? 'profile' : 'UGS_API_TOKEN'}` : 'not set'}`,
    `timeout ${settings.timeoutMs / 1000} s`,
  ].join(', ');
  if (credentials.profile === undefined) {
    const usable = credentials.baseUrl !== undefined && credentials.apiToken !== undefined;
    const detail = message`"${name}" (${from}) is not in the config file; ${sources}`;
    const fix = `run \`${loginCommandFor(settings.profile)}\``;
    return usable ? pass('profile', title, detail) : fail('profile', title, detail, fix);
  }
  return pass('profile', title, message`"${name}" (${from}): ${sources}`);
}

/**
 * The path the probe goes to, as `get` would send: the API path, or with the explo dialect the
 * vendor's own path. undefined: the API path is invalid, or given with the explo dialect.
 */
function safeApiPath(deps: Deps, credentials: Credentials) {
  const { settings } = deps;
  try {
    const dialect = resolveDialect(settings, credentials);
    if (isVendorDialect(dialect.value)) {
      if (settings.apiPath !== undefined) return undefined;
      return { value: wireOf(probe, dialect.value)?.path ?? '', source: 'default' as const };
    }
    return resolveApiPath(settings, credentials);
  } catch {
    return undefined;
  }
}

function checkBaseUrl(
  deps: Deps,
  credentials: Credentials | undefined,
): { check: Check; url: URL | undefined } {
  const title = 'base URL';
  const { settings } = deps;
  const base = credentials?.baseUrl;
  if (base === undefined) {
    return {
      check: fail(
        'base-url',
        title,
        'not set',
        `pass --base-url <url>, set UGS_BASE_URL, or run \`${loginCommandFor(settings.profile)}\``,
      ),
      url: undefined,
    };
  }
  let url: URL;
  try {
    url = parseBaseUrl(base.value, { insecureHttp: settings.insecureHttp });
  } catch (error) {
    if (!(error instanceof UgsError)) throw error;
    return {
      check: fail('base-url', title, error.message, error.hint ?? 'use a full https:// URL'),
      url: undefined,
    };
  }
  const apiPath = credentials ? safeApiPath(deps, credentials) : undefined;
  if (apiPath === undefined) {
    const vendorDialect =
      credentials === undefined ? undefined : resolveDialect(settings, credentials).value;
    const explo = isVendorDialect(vendorDialect);
    return {
      check: fail(
        'base-url',
        title,
        explo
          ? '--api-path (or UGS_API_PATH) applies to the interface dialect only'
          : 'the API path of the profile is invalid',
        explo
          ? `drop --api-path / unset UGS_API_PATH: the ${vendorDialect} dialect uses the vendor's paths`
          : 'run `ugs login --api-path <path>` again, or pass --api-path',
      ),
      url: undefined,
    };
  }
  const endpoint = endpointUrl(url, apiPath.value).href;
  const plain = url.protocol === 'http:';
  const note = !plain
    ? 'https'
    : isLoopbackHost(url.hostname)
      ? 'plain http to this machine'
      : 'plain http allowed by --insecure-http: the API token crosses the network unencrypted';
  // `--base-url http://host/api` with the API path /api/user asks for /api/api/user: shown with a
  // check mark, that URL looked right to everyone who read it.
  const repeated = repeatedSegment(url, apiPath.value);
  if (repeated !== undefined) {
    const without = new URL(url.href);
    without.pathname = url.pathname.replace(/\/+$/, '').slice(0, -(repeated.length + 1)) || '/';
    return {
      check: warn(
        'base-url',
        title,
        message`${endpoint} (${note}): /${repeated} twice, as the base URL's path ends in the API path's first segment`,
        message`use the base URL without it, ${formatBaseUrl(without)} (--base-url, UGS_BASE_URL or \`ugs login\`), unless the service really is at that URL`,
      ),
      url,
    };
  }
  return { check: pass('base-url', title, message`${endpoint} (${note})`), url };
}

interface Route {
  /** Where the TCP connection goes: the service, or the proxy in front of it. */
  host: string;
  port: number;
  viaProxy: boolean;
}

function checkProxy(deps: Deps, url: URL | undefined): { check: Check; route: Route | undefined } {
  const title = 'proxy';
  if (url === undefined)
    return { check: skip('proxy', title, 'no valid base URL'), route: undefined };
  const direct: Route = { host: bareHost(url.hostname), port: portOf(url), viaProxy: false };
  const decision = proxyFor(url, deps.io.env);
  switch (decision.kind) {
    case 'none':
      return {
        check: pass(
          'proxy',
          title,
          decision.reason === 'loopback'
            ? `none for ${url.hostname} (this machine is never reached through a proxy)`
            : 'none (HTTPS_PROXY, HTTP_PROXY not set)',
        ),
        route: direct,
      };
    case 'bypassed':
      return {
        check: pass(
          'proxy',
          title,
          message`${decision.variable}=${decision.proxy}, bypassed for ${url.hostname} by NO_PROXY entry "${decision.entry}"`,
        ),
        route: direct,
      };
    case 'invalid':
      return {
        check: fail(
          'proxy',
          title,
          message`${decision.variable}=${decision.value} is not an http(s) URL`,
          `fix ${decision.variable} (e.g. http://proxy.example.com:3128), or unset it`,
        ),
        route: undefined,
      };
    case 'proxy':
      return {
        check: pass(
          'proxy',
          title,
          message`${url.hostname} through ${displayProxy(decision.proxy)} (from ${decision.variable}; add the host to NO_PROXY to bypass it)`,
        ),
        route: {
          host: bareHost(decision.proxy.hostname),
          port: portOf(decision.proxy),
          viaProxy: true,
        },
      };
  }
}

/** Pushes the DNS and TCP checks; true when a connection could be made. */
async function checkDnsAndTcp(deps: Deps, route: Route, checks: Check[]): Promise<boolean> {
  const { network } = deps;
  const what = route.viaProxy ? `proxy ${route.host}` : route.host;
  if (isIpAddress(route.host)) {
    checks.push(pass('dns', 'DNS', `${what} is an IP address (no lookup)`));
  } else {
    const started = network.now();
    try {
      const addresses = await network.lookup(route.host);
      checks.push(
        pass('dns', 'DNS', `${what} -> ${addresses.join(', ')} (${elapsed(network, started)})`),
      );
    } catch (error) {
      const code = errorCodeInChain(error) ?? String(error);
      checks.push(
        fail(
          'dns',
          'DNS',
          `cannot resolve ${what} (${code})`,
          code === 'EAI_AGAIN'
            ? 'DNS did not answer: check your network connection and resolver'
            : `check the host name in ${route.viaProxy ? 'HTTPS_PROXY / HTTP_PROXY' : 'the base URL'}, and your DNS`,
        ),
      );
      checks.push(skip('tcp', 'TCP connect', 'host not resolved'));
      return false;
    }
  }
  const started = network.now();
  const hostPort = route.host.includes(':')
    ? `[${route.host}]:${route.port}`
    : `${route.host}:${route.port}`;
  const target = route.viaProxy ? `proxy ${hostPort}` : hostPort;
  try {
    await network.connect(route.host, route.port, deps.settings.timeoutMs);
    checks.push(pass('tcp', 'TCP connect', `${target} in ${elapsed(network, started)}`));
    return true;
  } catch (error) {
    const code = errorCodeInChain(error) ?? String(error);
    const fixes: Record<string, string> = {
      ECONNREFUSED: route.viaProxy
        ? 'the proxy is not listening there: check HTTPS_PROXY / HTTP_PROXY'
        : 'nothing listens there: check that the service runs and the port in the base URL',
      ETIMEDOUT:
        'no answer: a firewall may drop the connection; check the network, or the proxy settings',
    };
    checks.push(
      fail(
        'tcp',
        'TCP connect',
        `${target} failed (${code})`,
        fixes[code] ?? 'check your network connection and firewall',
      ),
    );
    return false;
  }
}

async function checkTls(
  deps: Deps,
  url: URL | undefined,
  route: Route | undefined,
  reachable: boolean,
  probing: boolean,
  caFile: CaFileSetting | undefined,
): Promise<Check> {
  const title = 'TLS';
  if (url === undefined || route === undefined) return skip('tls', title, 'no valid base URL');
  if (url.protocol !== 'https:') return skip('tls', title, 'not used (http://)');
  if (route.viaProxy) {
    // With --probe the probe below is that request: telling the user to add it would send them
    // round in a circle.
    return probing
      ? skip('tls', title, 'negotiated through the proxy tunnel: the probe below checks it')
      : skip(
          'tls',
          title,
          'negotiated through the proxy tunnel',
          'add --probe to send a request through it',
        );
  }
  if (!reachable) return skip('tls', title, 'no connection');
  const { settings, io } = deps;
  const customCa = [
    caFile === undefined ? undefined : message`${caFileOrigin(caFile)} ${caFile.value}`,
    io.env.NODE_EXTRA_CA_CERTS
      ? message`NODE_EXTRA_CA_CERTS ${io.env.NODE_EXTRA_CA_CERTS}`
      : undefined,
  ].filter((part): part is string => part !== undefined);
  let ca: string[] | undefined;
  if (caFile !== undefined) {
    try {
      ca = await caList(caFile.value, io.env.NODE_EXTRA_CA_CERTS);
    } catch (error) {
      return fail(
        'tls',
        title,
        message`cannot read the CA file ${caFile.value} (${caFileOrigin(caFile)}): ${errorCodeInChain(error) ?? String(error)}`,
        caFile.source === 'profile'
          ? 'run `ugs login --ca-file <pem>` again with the file where it is now'
          : 'point --ca-file (or UGS_CA_FILE) at a PEM file',
      );
    }
  }
  let info: Awaited<ReturnType<DoctorNetwork['tls']>>;
  try {
    info = await deps.network.tls({
      host: route.host,
      port: route.port,
      servername: url.hostname,
      ca,
      timeoutMs: settings.timeoutMs,
    });
  } catch (error) {
    const code = errorCodeInChain(error) ?? String(error);
    return fail(
      'tls',
      title,
      `handshake with ${url.host} failed (${code})`,
      isNotTlsCode(code)
        ? `the server does not speak TLS there: if it is plain HTTP, use http://${url.host}`
        : 'check the port and any proxy or load balancer in between',
    );
  }
  const days = Math.floor((info.validTo.getTime() - deps.now().getTime()) / DAY_MS);
  const caNote = customCa.length > 0 ? `custom CA: ${customCa.join(', ')}` : 'system CAs';
  const detail = message`${info.protocol ?? 'TLS'}, issuer ${info.issuer || 'unnamed'}, certificate expires in ${days} day${days === 1 ? '' : 's'}, ${caNote}`;
  if (!info.authorized) {
    const reason = info.authorizationError ?? 'not trusted';
    return fail(
      'tls',
      title,
      message`${detail}: not trusted (${reason})`,
      reason === 'ERR_TLS_CERT_ALTNAME_INVALID' || /altname/i.test(reason)
        ? `the certificate is not for ${url.hostname}: check the host name in the base URL`
        : 'if the service uses a private CA, pass --ca-file <pem> (or set UGS_CA_FILE or NODE_EXTRA_CA_CERTS)',
    );
  }
  if (days < 0)
    return fail('tls', title, `${detail}: expired`, 'the service must renew its certificate');
  return pass('tls', title, detail);
}

/** As the transport builds it: the public roots, the CA file, and NODE_EXTRA_CA_CERTS. */
/** Where a CA file came from, as a user would set it. */
function caFileOrigin(caFile: CaFileSetting): string {
  return caFile.source === 'flag'
    ? '--ca-file'
    : caFile.source === 'env'
      ? 'UGS_CA_FILE'
      : 'profile';
}

async function caList(caFile: string, extra: string | undefined): Promise<string[]> {
  const { rootCertificates } = await import('node:tls');
  // DER (a Windows `.cer`) as the transport reads it, converted to PEM.
  const bytes = await readFileCapped(caFile, MAX_CA_FILE_BYTES);
  const list = [...rootCertificates, (await caCertificatesText(bytes)) ?? bytes.toString('utf8')];
  if (extra) {
    try {
      list.push((await readFileCapped(extra, MAX_CA_FILE_BYTES)).toString('utf8'));
    } catch {
      // Node only warns about an unreadable NODE_EXTRA_CA_CERTS; so does the transport.
    }
  }
  return list;
}

function checkToken(credentials: Credentials | undefined): Check {
  const title = 'API token';
  if (credentials === undefined) return skip('token', title, 'the config file cannot be read');
  const token = credentials.apiToken;
  const login = loginCommandFor(credentials.profileName);
  if (token === undefined) {
    return fail('token', title, 'not set', `run \`${login}\`, or set UGS_API_TOKEN`);
  }
  const source =
    token.source === 'profile' ? message`profile "${credentials.profileName}"` : 'UGS_API_TOKEN';
  const problem = apiTokenProblem(token.value);
  if (problem !== undefined) {
    return fail(
      'token',
      title,
      `from ${source}: ${problem}`,
      token.source === 'profile'
        ? `run \`${login}\` to save it again`
        : 'set UGS_API_TOKEN to the token alone, without spaces or line breaks',
    );
  }
  return pass(
    'token',
    title,
    `${maskToken(token.value)} from ${source}, ${token.value.length} characters`,
  );
}

async function checkProbe(
  deps: Deps,
  credentials: Credentials | undefined,
  url: URL | undefined,
  ready: boolean,
): Promise<Check> {
  const title = 'probe';
  const token = credentials?.apiToken;
  const apiPath = credentials ? safeApiPath(deps, credentials) : undefined;
  if (
    !ready ||
    credentials === undefined ||
    url === undefined ||
    token === undefined ||
    apiPath === undefined
  ) {
    return skip('probe', title, 'not sent: fix the checks above first');
  }
  // The service client of `get` and `rotate`, from the same factory: whatever the probe meets
  // (headers, proxy, CA, deadline, a redirect followed or refused) is what they will meet.
  const target: Target = {
    baseUrl: url,
    apiToken: token.value,
    apiPath: apiPath.value,
    dialect: resolveDialect(deps.settings, credentials).value,
    profile: credentials.profileName,
    tokenSource: token.source === 'profile' ? 'profile' : 'env UGS_API_TOKEN',
    // The CA file as get would use it: --ca-file, UGS_CA_FILE, or the one saved with the profile.
    ...withCaFile(resolveCaFile(deps.settings, credentials)),
  };
  const started = deps.network.now();
  let result: ProbeResult;
  try {
    const client = await deps.connect(target);
    result = await client.probe();
  } catch (error) {
    if (error instanceof UgsError)
      return fail('probe', title, error.message, error.hint ?? 'run again with --debug');
    throw error;
  }
  const time = elapsed(deps.network, started);
  const said = result.detail === undefined ? '' : message` (${result.detail.slice(0, 120)})`;
  const sent = probeBodyText(target.dialect ?? DEFAULT_DIALECT);
  const where = message`${result.method} ${result.path} with ${sent}`;
  const explo = isVendorDialect(target.dialect);
  switch (result.verdict) {
    case 'accepted':
      return pass(
        'probe',
        title,
        `${where}: HTTP ${result.status} in ${time}, the token was accepted (an empty request changes nothing)`,
      );
    case 'read-only':
      // A warning, not a failure: DRF checks permissions only after the token authenticated,
      // so the token is good; it may only read, and the probe writes in this dialect (the
      // explo token refresh, the interface's get-or-create). The customer dialect's probe reads
      // and passes. What works with this token works; what changes data will not.
      return warn(
        'probe',
        title,
        `${where}: HTTP ${result.status}${said}: the token was accepted, but the service refused this call, which changes data: the token may be read-only`,
        `commands that create or change data will be refused with it: ${token.source === 'profile' ? `run \`${loginCommandFor(credentials.profileName)}\` with` : 'set UGS_API_TOKEN to'} a read-write API token for them`,
      );
    case 'refused':
      return fail(
        'probe',
        title,
        `${where}: HTTP ${result.status}${said}: the token was refused`,
        token.source === 'profile'
          ? `run \`${loginCommandFor(credentials.profileName)}\` with a valid API token`
          : 'set UGS_API_TOKEN to a valid API token',
      );
    case 'unexpected': {
      // `--api-path` is refused with the explo dialect (the vendor's paths are fixed).
      const fixes: Record<number, string> = explo
        ? {
            404: `check the base URL (a missing path prefix?); ${NOT_THE_VENDOR_API}`,
            405: `check the base URL: that server does not take this request there; ${NOT_THE_VENDOR_API}`,
          }
        : {
            404: 'check the base URL (a missing path prefix?) and --api-path (/api/user or /api/user/)',
            405: 'the service may want the trailing slash: pass --api-path /api/user/',
          };
      // The whole URL: an unexpected answer (a 404 above all) must name what was asked for, so
      // a doubled /api or a wrong host is seen at once.
      const tried = message`${result.method} ${url.origin}${result.path} with ${sent}`;
      const answered = message`${tried}: HTTP ${result.status} with ${result.contentType}${said}`;
      if (result.status === 400) {
        // The verdict of login: a 400 that is not the service's own refusal of `{}` says
        // nothing about the token.
        return fail(
          'probe',
          title,
          `${answered}, not the service's refusal of an empty request (${expectedRefusal(target.dialect ?? DEFAULT_DIALECT)})`,
          'a proxy, a load balancer or another server may have answered instead of the service: check the base URL and any proxy in between; --debug shows the answer',
        );
      }
      return fail(
        'probe',
        title,
        `${answered}, expected 400 (token good) or 401/403 (token refused)`,
        fixes[result.status] ??
          'check the base URL and any proxy in between; --debug shows the answer',
      );
    }
  }
}

function sourceName(source: 'flag' | 'env' | 'profile', flag: string, variable: string): string {
  return { flag, env: variable, profile: 'profile' }[source];
}

function elapsed(network: DoctorNetwork, started: number): string {
  return `${Math.max(0, Math.round(network.now() - started))} ms`;
}

function portOf(url: URL): number {
  return Number(url.port || (url.protocol === 'https:' ? 443 : 80));
}

/** `[::1]` -> `::1`: URL keeps the brackets, sockets do not want them. */
function bareHost(hostname: string): string {
  return hostname.startsWith('[') ? hostname.slice(1, -1) : hostname;
}

function octal(mode: number): string {
  return `0${mode.toString(8).padStart(3, '0')}`;
}
