// Part of undici's bundle (src/vendor/undici.ts loads it with import(), which the build keeps in
// the same bundle): the proxy-aware agent, and what it needs that undici's index would add.

export { default as connect } from 'undici/lib/api/api-connect.js';
export { default as Dispatcher } from 'undici/lib/dispatcher/dispatcher.js';
export { default as EnvHttpProxyAgent } from 'undici/lib/dispatcher/env-http-proxy-agent.js';
