import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import type { Deps } from '../context/factory.js';
import type { Check, CheckStatus, DoctorOptions } from '../doctor/checks.js';
import { ChecksFailedError } from '../errors.js';
import { printJson } from '../output/results.js';
import { type Env, writeLine } from '../platform/io.js';

export interface DoctorRunOptions extends DoctorOptions {
  json: boolean;
}

/** The factory: the network probe, the clock and the platform included. */
export type DoctorDeps = Deps;

export function doctorCommand(makeDeps: DepsFactory, run = runDoctor): Command {
  return newCommand('doctor', 'Check the config, network, TLS and API token', [
    'ugs doctor',
    'ugs doctor --probe --profile staging',
    'ugs doctor --json',
  ])
    .option('--probe', 'also send one request that changes nothing, to test the token')
    .option('--json', 'print the checks as JSON on stdout')
    .addHelpText(
      'after',
      `The probe is GET <base URL>/api/user with the body {}: the service answers
400 (fields missing) to a good token and 401/403 to a bad one. Only its own
400 counts (JSON: "success": 0, or field errors), not a proxy's or a web page's.
Exit 0 when no check fails, 1 otherwise.
`,
    )
    .action(async (flags: { probe?: boolean; json?: boolean }, cmd: Command) => {
      const deps = makeDeps(cmd);
      await run(
        {
          probe: flags.probe === true,
          json: flags.json === true,
          profileSource: deps.settings.profileSource ?? 'default',
        },
        deps,
      );
    });
}

export async function runDoctor(opts: DoctorRunOptions, deps: DoctorDeps): Promise<void> {
  const { runChecks } = await import('../doctor/index.js');
  const checks = await runChecks(opts, deps);
  const failed = checks.filter((check) => check.status === 'fail');
  if (opts.json) {
    printJson(deps.output, { ok: failed.length === 0, checks });
  } else {
    printChecks(deps, checks);
  }
  if (failed.length > 0) {
    throw new ChecksFailedError(
      `${failed.length} of ${checks.length} checks failed: ${failed.map((c) => c.title).join(', ')}`,
      { hint: opts.json ? 'each failed check has a "fix"' : 'see the "fix:" lines above' },
    );
  }
}

const MARKS: Record<CheckStatus, { unicode: string; ascii: string; color: string }> = {
  pass: { unicode: '✓', ascii: 'ok', color: '\u001b[32m' },
  warn: { unicode: '!', ascii: '!!', color: '\u001b[33m' },
  fail: { unicode: '✗', ascii: 'XX', color: '\u001b[31m' },
  skip: { unicode: '–', ascii: '--', color: '\u001b[2m' },
};

/** Unicode marks only where they can show: a UTF-8 locale, and not a dumb terminal. */
export function unicodeOutput(env: Env): boolean {
  if (env.TERM === 'dumb') return false;
  const locale = env.LC_ALL || env.LC_CTYPE || env.LANG || '';
  return /utf-?8/i.test(locale);
}

function printChecks(deps: DoctorDeps, checks: readonly Check[]): void {
  const { io } = deps;
  const unicode = unicodeOutput(io.env);
  const color = deps.output.color('stdout');
  const width = Math.max(...checks.map((check) => check.title.length));
  const indent = ' '.repeat((unicode ? 1 : 2) + 1 + width + 2);
  for (const check of checks) {
    const mark = MARKS[check.status];
    const symbol = unicode ? mark.unicode : mark.ascii;
    const shown = color ? `${mark.color}${symbol}\u001b[0m` : symbol;
    writeLine(io.stdout, `${shown} ${check.title.padEnd(width)}  ${check.detail}`);
    if (check.fix !== undefined && (check.status === 'fail' || check.status === 'warn')) {
      writeLine(io.stdout, `${indent}fix: ${check.fix}`);
    } else if (check.fix !== undefined) {
      writeLine(io.stdout, `${indent}${check.fix}`);
    }
  }
}
