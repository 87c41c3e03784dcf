// undici's agent and connector, and (loaded on demand, see loadProxyAgent) its proxy-aware
// agent (see src/transport/undici.ts). These are undici's internal files, not its public API: package.json
// pins undici exactly, and test/transport/undici-canary.test.ts fails when an update moves or changes
// them.

export { default as buildConnector } from 'undici/lib/core/connect.js';
export { default as Agent } from 'undici/lib/dispatcher/agent.js';

import util from 'undici/lib/core/util.js';

/**
 * A header name's bytes in lower case: well-known names come from undici's own table without a
 * string being made (src/transport/undici.ts reads the answer headers with it).
 */
export const headerNameToString: (name: Buffer) => string = util.headerNameToString;

/**
 * The proxy agent and what it needs (src/vendor/undici-proxy.ts): in the same bundle, so its
 * classes are the ones above, but run only when a proxy variable is set (about 2 ms otherwise).
 */
export function loadProxyAgent(): Promise<typeof import('./undici-proxy.js')> {
  return import('./undici-proxy.js');
}
