// `--version` and `--help` answer from texts that the build recorded from the real program
// (dist/early.json), without loading dist/main.cjs: that is what lets them start within 1.3x of a
// bare `node -e 0` in a clean environment (timings: `npm run bench`). These checks pin down that
// the short path is taken, and that it prints exactly what the full path prints.
import { describe, expect, it } from 'vitest';
import { describeRun, makeSandbox, PACKAGE_VERSION, runUgs } from '../kit/index.js';
import { startPty } from '../kit/terminal.js';

/** NODE_DEBUG=module makes Node name every CommonJS file it loads on stderr. */
const TRACE_LOADS = { NODE_DEBUG: 'module' };
const loadsMain = (stderr: string) => /load "[^"]*dist\/main\.cjs"/.test(stderr);

describe('--version and --help without loading the program', () => {
  it('the trace sees dist/main.cjs load when a command needs it', async () => {
    const result = await runUgs(['help'], { env: TRACE_LOADS });
    expect(result.code, describeRun(result)).toBe(0);
    expect(loadsMain(result.stderr), result.stderr).toBe(true);
  });

  it.each([['--version'], ['-V']])('ugs %s prints the version, main never loaded', async (flag) => {
    const result = await runUgs([flag], { env: TRACE_LOADS });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stdout).toBe(`${PACKAGE_VERSION}\n`);
    expect(loadsMain(result.stderr), result.stderr).toBe(false);
  });

  it.each([[['--help']], [['-h']], [[]]])(
    'ugs %j prints what `ugs help` prints, main never loaded',
    async (args) => {
      const sandbox = makeSandbox();
      const full = await runUgs(['help'], { sandbox });
      const early = await runUgs(args, { sandbox, env: TRACE_LOADS });
      expect(early.code, describeRun(early)).toBe(0);
      expect(early.stdout).toBe(full.stdout);
      expect(early.stdout).toContain('Usage: ugs');
      expect(loadsMain(early.stderr), early.stderr).toBe(false);
    },
  );

  it('a colour variable changes nothing in a pipe: the same help', async () => {
    const sandbox = makeSandbox();
    const full = await runUgs(['help'], { sandbox });
    for (const env of [{ NO_COLOR: '1' }, { FORCE_COLOR: '1' }, { FORCE_COLOR: '0' }]) {
      const result = await runUgs(['--help'], { sandbox, env });
      expect(result.code, describeRun(result)).toBe(0);
      expect(result.stdout, JSON.stringify(env)).toBe(full.stdout);
    }
  });

  it('at a terminal, `ugs --help` shows what `ugs help` shows there', async () => {
    const sandbox = makeSandbox();
    const early = startPty(sandbox, ['--help']);
    const full = startPty(sandbox, ['help']);
    const [earlyExit, fullExit] = await Promise.all([early.finish(), full.finish()]);
    expect(earlyExit.code, early.text()).toBe(0);
    expect(fullExit.code, full.text()).toBe(0);
    expect(early.raw).toContain('Usage: ugs');
    expect(early.raw).toBe(full.raw);
  });
});
