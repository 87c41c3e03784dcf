/**
 * The test kit: everything tests share, in one place. Test files import from here (or from one
 * of the files below); no test file outside the kit spawns `ugs` or opens a server socket itself.
 *
 * - binary.ts   runUgs(args, { sandbox, env, stdin, stdout, uid, timeoutMs }) runs the BUILT
 *               binary in a sandbox (own HOME and UGS_CONFIG_DIR, stripped env); `executable`
 *               runs another ugs (the single executable, an npm-installed one); startUgs for
 *               runs a test signals; runShell for pipelines; makeSandbox/tempDir (removed once
 *               after each file); describeRun, errorLines, expectFailure (the failure shape:
 *               one error line, at most one hint, no stack), STACK_LINE, ANSI, stripAnsi.
 *               startUgsWorker(): the bundle's main() in one long-lived child, one run per
 *               request (many runs that must be separate processes); skipOutsideCi(context,
 *               reason): skip where a precondition is missing, fail under CI.
 * - main.ts     runMain(args, { sandbox, env, stdin, tty, columns, timeoutMs }): main() in the test
 *               process with the same sandbox and result shape as runUgs, for tests of output
 *               and exit codes that need no real process (milliseconds instead of a Node start).
 * - clock.ts    withTimersStopped(what, work): `work` with setTimeout stopped (and Date frozen on
 *               request): "ends quickly" without a wall-clock bound, since waiting on a timer
 *               never ends.
 * - terminal.ts startPty(sandbox, args, { env, columns }): the binary on a real pseudo-terminal
 *               (node-pty: prompts, Ctrl+C, output fitted to the width).
 * - server.ts   startServer([{ tls, port }], ...replies): one scripted server on 127.0.0.1 that
 *               records requests and connections; replies json/text/destroy/stall/delay/
 *               trickle/huge/headersThen, forwardTo(url) (e.g. to the emulator); closedPort();
 *               okBody()/userGroup() canned answers; selfSignedCertificate().
 * - drf.ts      drfSites(apiToken): the real Django REST Framework service (test/e2e/drf), one
 *               process per file, each site(route) a fresh store behind the recording server;
 *               hasRealDrf()/djangoRequiredInCi(): skip without Django, but fail under CI.
 * - emulator.ts startEmulator(opts): the real emulator in-process (port 0); useEmulator(opts): the
 *               same for a whole test file (started in beforeAll, closed in afterAll); serveUgs(extra): the
 *               `ugs serve` process (also of an `executable`), only for tests about that process
 *               (signals, --data locks, SIGKILL mid-write); call/getUser/rotate: a raw undici
 *               client; rawExchange/openSocket for raw sockets (pipelining, half-close);
 *               customerEnv(emulator) (UGS_BASE_URL + its Customer token) and
 *               loggedInTo(emulator) (a sandbox `ugs login --with-token` saved it in).
 * - fakes.ts    makeDeps/makeIO/terminalIO, FakePrompter, FakeService, MemoryConfigStore, canned
 *               service results: for calling a command's `run` in-process.
 * - http-client.ts useHttpClients(): real undici clients from src against kit servers.
 * - wiring.ts   parseArgv(argv): the real commander program, each command's `run` recording
 *               the options it receives (argv tables without a process).
 * - service.ts  startService/useService/serviceForTest(apiTokens): the emulator in-process behind the
 *               recording server: every request and answer recorded, faults scripted ahead;
 *               serviceWithProfile(apiToken): one with a sandbox whose default profile uses it.
 * - proxy.ts    startProxy(mode): a recording CONNECT proxy that tunnels to 127.0.0.1 only.
 * - built.ts    vitest global setup: fails the run at once when `npm run build` was not run.
 * - notices.ts  librariesInSourceMaps(dist)/hasNoticeFor: the bundled libraries, from source maps.
 * - wine.ts     runWindows/startWindows(args, { via: 'node' | 'exe', sandbox, env, stdin }): ugs for
 *               Windows under Wine, for the Windows lane only (test/windows/, `npm run
 *               test:windows`); not exported here, as it needs what that lane's script sets up.
 *
 * Only fakes.ts, wiring.ts, http-client.ts, main.ts and emulator.ts import from src/ (the types and
 * builders they fake or drive): a moved src module is fixed here, not in every test.
 */
export * from './binary.js';
export * from './clock.js';
export * from './drf.js';
export * from './emulator.js';
export * from './main.js';
export * from './notices.js';
export * from './proxy.js';
export * from './server.js';
export * from './service.js';
export * from './single-executable.js';
export * from './terminal.js';
