// undici's request(), its proxy-aware agent, and what that agent needs (see src/undici.ts).
// These are undici's internal files, not its public API: package.json pins undici exactly, and
// test/unit/undici-canary.test.ts fails when an update moves or changes them.

export { default as connect } from 'undici/lib/api/api-connect.js';
export { default as request } from 'undici/lib/api/api-request.js';
export { default as buildConnector } from 'undici/lib/core/connect.js';
export { default as Agent } from 'undici/lib/dispatcher/agent.js';
export { default as Dispatcher } from 'undici/lib/dispatcher/dispatcher.js';
export { default as EnvHttpProxyAgent } from 'undici/lib/dispatcher/env-http-proxy-agent.js';
