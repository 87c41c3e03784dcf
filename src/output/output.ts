/**
 * What every writer of output needs to know about this run, decided once (as gh's `IOStreams`):
 * the streams and whether each is a terminal, their widths, the colour style, `--quiet`,
 * `--debug`, and the CI runner whose log must not see a token. Render functions take this one
 * object instead of the IO and the settings. Nothing is loaded to build it: chalk is imported by
 * `style()` only when colour is on and something is coloured.
 */
import type { Writable } from 'node:stream';
import {
  colorEnabled,
  type Env,
  type IO,
  stderrColumns,
  stdoutColumns,
  unicodeTerminal,
} from '../platform/io.js';
import { type CiSystem, detectCi, maskSecret, maskTokensIn, underCiRunner } from './ci.js';
import { loadColorStyle, plainStyle, type Style } from './style.js';

/**
 * The global options output depends on. The run's settings are one (they are passed as they
 * are); this module does not import them, as the settings sit above output.
 */
export interface OutputPreferences {
  /** `--no-color`. */
  noColor: boolean;
  /** `--quiet`: no notes, warnings, spinner or progress on stderr; errors still. */
  quiet: boolean;
  /** `--debug`: errors with their stacks. */
  debug: boolean;
}

export type OutputStream = 'stdout' | 'stderr';

export interface Output {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdoutIsTTY: boolean;
  readonly stderrIsTTY: boolean;
  /** The run's environment (NO_COLOR, TERM, the locale, the CI runner's variables). */
  readonly env: Env;
  readonly quiet: boolean;
  readonly debug: boolean;
  readonly noColor: boolean;
  /** Whether the terminal can draw box characters (see `unicodeTerminal`). */
  readonly unicode: boolean;
  /** The CI runner whose log this is, if any: errors become annotations, tokens are masked. */
  readonly ci: CiSystem | undefined;
  /**
   * Whether a runner may obey workflow commands in this output (either runner's variable, any
   * value but empty, `false` or `0`): wider than `ci`, so text from outside is escaped for both.
   */
  readonly underCiRunner: boolean;
  /**
   * Columns of stdout's terminal, 80 when it is not one. Read when asked, not once: a terminal
   * may be resized during a long run.
   */
  stdoutColumns(): number;
  /** Columns of stderr's terminal, 80 when it is not one. */
  stderrColumns(): number;
  /** Whether `stream` gets colour (NO_COLOR, FORCE_COLOR, --no-color, TERM=dumb, a terminal). */
  color(stream: OutputStream): boolean;
  /** The colours for `stream`: chalk's when it gets colour, plain text otherwise. */
  style(stream: OutputStream): Promise<Style>;
  /** Under a CI runner, registers `value` as a secret before it is written (ci.ts). */
  maskSecret(value: string | null | undefined): void;
  /** Masks every token in `value` (an answer, a record) ahead of printing it. */
  maskTokensIn(value: unknown): void;
}

export function createOutput(io: IO, preferences: OutputPreferences): Output {
  let colors: Promise<Style> | undefined;
  const output: Output = {
    stdout: io.stdout,
    stderr: io.stderr,
    stdoutIsTTY: io.stdoutIsTTY,
    stderrIsTTY: io.stderrIsTTY,
    env: io.env,
    quiet: preferences.quiet,
    debug: preferences.debug,
    noColor: preferences.noColor,
    unicode: unicodeTerminal(io.env),
    ci: detectCi(io.env),
    underCiRunner: underCiRunner(io.env),
    stdoutColumns: () => stdoutColumns(io),
    stderrColumns: () => stderrColumns(io),
    color: (stream) => colorEnabled(io, preferences.noColor, stream),
    style(stream) {
      if (!output.color(stream)) return Promise.resolve(plainStyle);
      colors ??= loadColorStyle();
      return colors;
    },
    maskSecret: (value) => maskSecret(io, value),
    maskTokensIn: (value) => maskTokensIn(io, value),
  };
  return output;
}
