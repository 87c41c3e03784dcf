/**
 * The two parts of undici that ugs uses: `request()` and the proxy-aware agent. The package's
 * index loads all of undici (fetch, WebSocket, caches, mocks), which takes about twice as long to
 * start as these files do; a CLI pays that on every run.
 */
import type { Dispatcher, EnvHttpProxyAgent } from 'undici';

export interface Undici {
  request(
    dispatcher: Dispatcher,
    url: URL,
    options: RequestOptions,
  ): Promise<Dispatcher.ResponseData>;
  EnvHttpProxyAgent: typeof EnvHttpProxyAgent;
}

export type RequestOptions = Omit<Dispatcher.RequestOptions, 'origin' | 'path'>;

export async function loadUndici(): Promise<Undici> {
  // bin/ugs.js sets V8's --liftoff-only for the commands that send one request: a library loader
  // changes no process-wide setting.
  const { request, connect, Dispatcher, EnvHttpProxyAgent } = await import('./vendor/undici.js');
  // The proxy agent opens its tunnel with `dispatcher.connect()`, a method undici's index adds to
  // every dispatcher: without it every request through HTTP(S)_PROXY fails.
  Dispatcher.prototype.connect ??= connect;
  return {
    request: (dispatcher, url, options) =>
      request.call(dispatcher, {
        ...options,
        origin: url.origin,
        path: `${url.pathname}${url.search}`,
      }),
    EnvHttpProxyAgent,
  };
}
