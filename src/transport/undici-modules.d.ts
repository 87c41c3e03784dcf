// Types for the two undici files that src/transport/undici.ts loads directly (the package has no exports
// map, so these paths are public in practice; undici is pinned exactly in package.json and
// test/transport/undici-canary.test.ts checks them on every update).
declare module 'undici/lib/dispatcher/env-http-proxy-agent.js' {
  import type { EnvHttpProxyAgent } from 'undici';

  const EnvHttpProxyAgentClass: typeof EnvHttpProxyAgent;
  export default EnvHttpProxyAgentClass;
}

declare module 'undici/lib/api/api-connect.js' {
  import type { Dispatcher } from 'undici';

  const connect: Dispatcher['connect'];
  export default connect;
}

declare module 'undici/lib/dispatcher/dispatcher.js' {
  import type { Dispatcher } from 'undici';

  const DispatcherClass: typeof Dispatcher;
  export default DispatcherClass;
}

declare module 'undici/lib/core/connect.js' {
  import type { buildConnector } from 'undici';

  const buildConnectorFunction: typeof buildConnector;
  export default buildConnectorFunction;
}

declare module 'undici/lib/dispatcher/agent.js' {
  import type { Agent } from 'undici';

  const AgentClass: typeof Agent;
  export default AgentClass;
}

declare module 'undici/lib/core/util.js' {
  const util: { headerNameToString(name: Buffer | string): string };
  export default util;
}
