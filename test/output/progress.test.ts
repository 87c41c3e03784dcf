/**
 * Where the spinner may appear: only a person at a terminal who asked for the table gets one.
 * (What it shows, and that it is erased, is tested on a real pty in test/output/spinner.process.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { withProgress } from '../../src/cli/shared.js';
import {
  createProgress,
  noProgress,
  type Progress,
  retryReason,
  seconds,
} from '../../src/output/spinner.js';
import { defaultSettings, makeDeps, makeIO, terminalIO } from '../kit/fakes.js';

describe('createProgress', () => {
  it('a terminal on stderr gets a spinner', () => {
    expect(createProgress(terminalIO(), defaultSettings())).not.toBe(noProgress);
    expect(createProgress(makeIO({ stderrIsTTY: true }), defaultSettings())).not.toBe(noProgress);
  });

  it.each<[string, ReturnType<typeof makeIO>, Parameters<typeof defaultSettings>[0]]>([
    ['stderr is a pipe', makeIO({ stdinIsTTY: true, stdoutIsTTY: true }), {}],
    ['CI is set', terminalIO({ env: { CI: 'true' } }), {}],
    ['TERM=dumb', terminalIO({ env: { TERM: 'dumb' } }), {}],
    ['--debug', terminalIO(), { debug: true }],
    ['--quiet', terminalIO(), { quiet: true }],
  ])('none when %s', (_label, io, settings) => {
    expect(createProgress(io, defaultSettings(settings))).toBe(noProgress);
  });

  it('an empty CI variable is not CI', () => {
    expect(createProgress(terminalIO({ env: { CI: '' } }), defaultSettings())).not.toBe(noProgress);
  });
});

describe('withProgress', () => {
  const recording = (): Progress & { texts: string[] } => {
    const texts: string[] = [];
    return {
      texts,
      tracer: noProgress.tracer,
      during: (text, work) => {
        texts.push(text);
        return work();
      },
    };
  };

  it('wraps the call for table output only: --json and --field are read by scripts', async () => {
    const progress = recording();
    const deps = makeDeps({ progress });
    expect(await withProgress(deps, { kind: 'table' }, 'Working', async () => 1)).toBe(1);
    expect(await withProgress(deps, { kind: 'json' }, 'Working', async () => 2)).toBe(2);
    expect(
      await withProgress(deps, { kind: 'field', name: 'token' }, 'Working', async () => 3),
    ).toBe(3);
    expect(progress.texts).toEqual(['Working']);
  });
});

describe('retry wording', () => {
  it.each([
    ['HTTP 429', 'Rate limited'],
    ['HTTP 503', 'Service unavailable (HTTP 503)'],
    ['HTTP 502', 'Gateway error (HTTP 502)'],
    ['ECONNREFUSED', 'Connection refused'],
    ['EWHATEVER', 'EWHATEVER'],
  ])('%s reads "%s"', (reason, words) => {
    expect(retryReason(reason)).toBe(words);
  });

  it('delays read in seconds', () => {
    expect(seconds(3000)).toBe('3 s');
    expect(seconds(2600)).toBe('3 s');
    expect(seconds(225)).toBe('0.2 s');
  });
});
