/**
 * Which proxy a request to the service goes through, decided as ugs's transport decides it
 * (src/transport/http.ts builds undici's EnvHttpProxyAgent from the same variables): lower-case variables
 * first, `https_proxy` falling back to `http_proxy` for https targets, `NO_PROXY` as undici reads
 * it (hosts, subdomains, `host:port`, `*`; no CIDR), and loopback never proxied.
 */

import { isLoopbackHost, proxyVariable, redactUrl } from '../input/parse.js';
import type { Env } from '../platform/io.js';

export type ProxyDecision =
  | { kind: 'none'; reason: 'unset' | 'loopback' }
  | { kind: 'bypassed'; proxy: string; variable: string; entry: string }
  | { kind: 'proxy'; proxy: URL; variable: string }
  | { kind: 'invalid'; variable: string; value: string };

export function proxyFor(target: URL, env: Env): ProxyDecision {
  const chosen = proxyVariable(target.protocol, env);
  if (chosen === undefined || chosen.value === '') return { kind: 'none', reason: 'unset' };
  const { name: variable, value } = chosen;
  if (isLoopbackHost(target.hostname)) return { kind: 'none', reason: 'loopback' };
  const port = Number(target.port || (target.protocol === 'https:' ? 443 : 80));
  const entry = noProxyEntry(target.hostname, port, env.no_proxy ?? env.NO_PROXY ?? '');
  if (entry !== undefined) return { kind: 'bypassed', proxy: redactUrl(value), variable, entry };
  let proxy: URL;
  try {
    proxy = new URL(value);
  } catch {
    return { kind: 'invalid', variable, value: redactUrl(value) };
  }
  if (proxy.protocol !== 'http:' && proxy.protocol !== 'https:') {
    return { kind: 'invalid', variable, value: redactUrl(value) };
  }
  return { kind: 'proxy', proxy, variable };
}

/** The NO_PROXY entry that makes `hostname:port` go direct, as undici matches them. */
export function noProxyEntry(hostname: string, port: number, noProxy: string): string | undefined {
  if (noProxy === '*') return '*';
  const host = hostname.toLowerCase();
  for (const entry of noProxy.split(/[,\s]/)) {
    if (entry === '') continue;
    const parsed = /^(.+):(\d+)$/.exec(entry);
    const entryHost = (parsed ? (parsed[1] as string) : entry).replace(/^\*?\./, '').toLowerCase();
    const entryPort = parsed ? Number.parseInt(parsed[2] as string, 10) : 0;
    if (entryPort !== 0 && entryPort !== port) continue;
    if (host === entryHost || host.endsWith(`.${entryHost}`)) return entry;
  }
  return undefined;
}

/** `proxy` for display, as every URL is shown (see redactUrl). */
export function displayProxy(proxy: URL): string {
  return redactUrl(proxy.href).replace(/\/$/, '');
}
