/**
 * Which saved profile a run uses, and the error for a name that is not saved: `ugs get -p stagin`
 * used to say "run `ugs login --profile stagin`", inviting the typo. Now it is exit 2 with
 * "did you mean ...?" (suggest.ts), checked by main before a command runs; `ugs profile use` and
 * `remove` check their argument the same way.
 */

import { ConfigError, UsageError } from '../errors.js';
import { pasteProblem, quoteVisible, shellWord } from '../input/parse.js';
import { loginCommandFor } from '../service/target.js';
import { message } from '../text/message.js';
import { orList, suggestNames } from '../text/suggest.js';
import type { Deps } from './factory.js';

/** The profile a command uses when neither `--profile` nor UGS_PROFILE names one. */
export function defaultProfile(deps: Pick<Deps, 'config'>): {
  name: string;
  source: 'config' | 'default';
} {
  const chosen = deps.config.readDefaultProfile();
  return chosen === undefined || chosen === ''
    ? { name: 'default', source: 'default' }
    : { name: chosen, source: 'config' };
}

/**
 * Throws when the run's profile was named (by `--profile`, UGS_PROFILE or `ugs profile use`) and
 * is not saved. Not when the environment gives both the base URL and the API token: a CI job that
 * sets UGS_PROFILE for its logs needs no config file. A config file that cannot be read is left
 * to the command, which reports it (doctor as one of its findings).
 */
export function checkProfileSaved(deps: Deps): void {
  const { settings, io } = deps;
  const source = settings.profileSource ?? 'default';
  if (source === 'default') return;
  const envToken = io.env.UGS_API_TOKEN;
  if (settings.baseUrl !== undefined && envToken !== undefined && envToken !== '') return;
  let names: string[];
  try {
    names = Object.keys(deps.config.listProfiles());
  } catch (error) {
    if (error instanceof ConfigError) return;
    throw error;
  }
  if (names.includes(settings.profile)) return;
  const given = { flag: '--profile', env: 'UGS_PROFILE', config: 'the default profile' }[source];
  throw unknownProfileError(settings.profile, names, given, {
    create: source === 'config' ? undefined : loginCommandFor(settings.profile),
    ...(source === 'config' && { instead: 'choose another with `ugs profile use <name>`' }),
  });
}

/**
 * `no saved profile "stagin" (--profile)`, and a hint: the close names when there are any (and
 * then no `ugs login` that would save the typo), else the saved names and how to create it.
 */
export function unknownProfileError(
  name: string,
  saved: readonly string[],
  given: string,
  options: { create?: string | undefined; instead?: string } = {},
): UsageError {
  const guesses = suggestNames(name, saved).map((guess) => shellWord(guess));
  const list = '`ugs profile list` shows them';
  let hint: string;
  if (guesses.length > 0) {
    hint = `did you mean ${orList(guesses)}? ${list}`;
  } else if (saved.length === 0) {
    hint = 'no profile is saved yet';
  } else {
    const shown = saved.slice(0, 10).map((other) => shellWord(other));
    const more = saved.length > 10 ? ` (and ${saved.length - 10} more)` : '';
    hint = `${saved.length === 1 ? 'the one saved profile is' : 'the saved profiles are'} ${shown.join(', ')}${more}`;
  }
  if (guesses.length === 0 && options.create !== undefined) {
    hint += `; \`${options.create}\` creates it`;
  }
  if (options.instead !== undefined) hint += `; ${options.instead}`;
  return new UsageError(message`no saved profile "${name}" (${given})`, { hint });
}

/**
 * A profile name is typed back in commands: every hint that names it (`next: ugs get --profile
 * ...`, `ugs login --profile ...`) must paste as it is. A control character (LF, ESC, DEL, C1)
 * would be shown escaped or break the line, an invisible or bidi character would be dropped or
 * reorder the line: pasted, such a hint names another profile. So a profile is never saved or
 * made the default under such a name (exit 2); one saved by hand can still be removed.
 */
export function checkProfileName(name: string, given: string): void {
  const problem = pasteProblem(name);
  if (problem === undefined) return;
  throw new UsageError(`profile name ${quoteVisible(name)} ${problem} (${given})`, {
    hint: 'a profile name is typed back in commands and hints, so it must paste as it is: use letters, digits, - or _',
  });
}
