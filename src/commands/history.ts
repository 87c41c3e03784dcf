/**
 * `ugs history`: what reached the service, newest first, from the token history (history.ndjson
 * or `--history-file`). The global `-p` filters by profile here, and may name a profile only the
 * history knows: nothing here resolves a target or reads credentials. The reading code is
 * loaded by this command only (`import()`).
 */
import type { Command } from 'commander';
import { collect, type DepsFactory, newCommand } from '../cli/shared.js';
import type { Deps } from '../context/factory.js';
import { CancelledError, UsageError } from '../errors.js';
import { HISTORY_OUTCOMES, type HistoryEvent, type HistoryOutcome } from '../history/event.js';
import type { HistoryLocation } from '../history/log.js';
import { type DurationForm, readDuration } from '../input/parse.js';
import { printLine } from '../output/messages.js';
import { padColumns } from '../output/text.js';
import { canPrompt, escapeControls } from '../platform/io.js';
import { message } from '../text/message.js';

export interface HistoryOptions {
  id: string | undefined;
  /** Events at or after this time (ms since the epoch). */
  sinceMs: number | undefined;
  /** Events at or before this time (ms since the epoch). */
  untilMs?: number | undefined;
  /** Only events with one of these outcomes; undefined: all. */
  outcomes?: readonly HistoryOutcome[] | undefined;
  limit: number;
  json: boolean;
  clear: boolean;
  /** `--yes`: clear without asking (required without a terminal). */
  yes: boolean;
}

interface HistoryFlags {
  id?: string;
  since?: string;
  until?: string;
  outcome?: string[];
  limit?: string;
  json?: boolean;
  clear?: boolean;
  yes?: boolean;
}

/** A person reads a screenful; a script asks for more with --limit. */
export const DEFAULT_HISTORY_LIMIT = 50;

export function historyCommand(makeDeps: DepsFactory, run = runHistory): Command {
  return newCommand('history', 'Show the token history: what reached the service, newest first', [
    'ugs history',
    'ugs history --id acme --since 7d',
    'ugs history --since yesterday --until 2026-11-28 --outcome rotated,stale',
    'ugs history -p staging --limit 200 --json | jq .token_fingerprint',
    'ugs history --clear                 # asks to confirm',
    'ugs history --clear --yes',
  ])
    .option('--id <user_group_id>', 'only the events of this user group')
    .option(
      '--since <when>',
      'only events since a time: today, yesterday, a date (2026-01-31, UTC), an ISO time, or a while back (7d)',
    )
    .option(
      '--until <when>',
      'only events up to a time, as --since takes it (a date or yesterday: to the end of that day)',
    )
    .option(
      '--outcome <outcome>',
      `only events with this outcome (repeatable, or a comma list): ${HISTORY_OUTCOMES.join(', ')}`,
      collect,
      [],
    )
    .option('--limit <n>', `at most this many events (0 for all)`, String(DEFAULT_HISTORY_LIMIT))
    .option('--json', 'print the events as NDJSON on stdout (one per line)')
    .option('--clear', 'delete the history (and its rotated file); the key stays')
    .option('-y, --yes', 'clear without asking for confirmation (required without a terminal)')
    .action(async (flags: HistoryFlags, cmd: Command) => {
      const deps = makeDeps(cmd, { acceptsUnknownProfile: true });
      await run(parseHistoryFlags(flags, deps.now()), deps);
    });
}

export function parseHistoryFlags(flags: HistoryFlags, now: Date): HistoryOptions {
  const limitText = flags.limit ?? String(DEFAULT_HISTORY_LIMIT);
  if (!/^\d+$/.test(limitText.trim())) {
    throw new UsageError(message`--limit expects a whole number, got "${limitText}"`, {
      hint: 'for example: --limit 20 (0 for all)',
    });
  }
  if (flags.clear === true) {
    const others: string[] = (['id', 'since', 'until', 'json'] as const).filter(
      (flag) => flags[flag] !== undefined,
    );
    if ((flags.outcome ?? []).length > 0) others.push('outcome');

    if (others.length > 0) {
      throw new UsageError(`--clear cannot be used with --${others[0]}`);
    }
  } else if (flags.yes === true) {
    throw new UsageError('--yes goes with --clear only', {
      hint: 'ugs history --clear --yes deletes the history without asking',
    });
  }
  const sinceMs = flags.since === undefined ? undefined : parseSince(flags.since, now);
  const untilMs = flags.until === undefined ? undefined : parseUntil(flags.until, now);
  if (sinceMs !== undefined && untilMs !== undefined && untilMs < sinceMs) {
    throw new UsageError('--until is before --since: no event can match', {
      hint: 'for example: --since 2026-11-01 --until 2026-11-28',
    });
  }
  const outcomes = parseOutcomes(flags.outcome ?? []);
  return {
    id: flags.id,
    sinceMs,
    ...(untilMs !== undefined && { untilMs }),
    ...(outcomes !== undefined && { outcomes }),
    limit: Number(limitText.trim()),
    json: flags.json === true,
    clear: flags.clear === true,
    yes: flags.yes === true,
  };
}

/**
 * `--outcome`: repeatable, and each may be a comma list (`rotated,stale`); every word must be an
 * outcome the history writes, or a typo would quietly match nothing. Undefined: none given.
 */
export function parseOutcomes(values: readonly string[]): HistoryOutcome[] | undefined {
  const words = values.flatMap((value) => value.split(',')).map((word) => word.trim());
  if (words.length === 0) return undefined;
  const outcomes = new Set<HistoryOutcome>();
  for (const word of words) {
    const outcome = HISTORY_OUTCOMES.find((known) => known === word.toLowerCase());
    if (outcome === undefined) {
      throw new UsageError(message`--outcome "${word}" is not an outcome of the history`, {
        hint: `outcomes: ${HISTORY_OUTCOMES.join(', ')} (repeat --outcome or give a comma list)`,
      });
    }
    outcomes.add(outcome);
  }
  return [...outcomes];
}

/** How far back `--since` and `--until` reach: whole numbers of seconds up to weeks. */
const SINCE_DURATION: DurationForm = { units: ['s', 'm', 'h', 'd', 'w'], fractions: false };

const DAY_MS = 86_400_000;

/**
 * A time as `--since` and `--until` take it, as the start of a span: a duration back from now
 * (`90m`, `12h`, `7d`, `2w`, `1d12h`, read as every duration is); `today`, `yesterday` or a date
 * (`2026-01-31`), each the midnight UTC that starts that day (the history's times are UTC); an
 * ISO time (`2026-01-31T12:00:00Z`). `day` says whether a whole day was named.
 */
function parseTime(text: string, now: Date, flag: string): { ms: number; day: boolean } {
  const back = readDuration(text, SINCE_DURATION);
  if (back !== undefined) return { ms: now.getTime() - back, day: false };
  const trimmed = text.trim().toLowerCase();
  const today = Math.floor(now.getTime() / DAY_MS) * DAY_MS;
  if (trimmed === 'today') return { ms: today, day: true };
  if (trimmed === 'yesterday') return { ms: today - DAY_MS, day: true };
  if (/^\d{4}-\d\d-\d\d([t ][\d:.]+(z|[+-]\d\d:?\d\d)?)?$/.test(trimmed)) {
    const dateOnly = trimmed.length === 10;
    const parsed = Date.parse(dateOnly ? `${trimmed}T00:00:00Z` : trimmed.toUpperCase());
    if (!Number.isNaN(parsed)) return { ms: parsed, day: dateOnly };
  }
  throw new UsageError(message`${flag} expects a date or a duration, got "${text}"`, {
    hint: `for example: ${flag} today, ${flag} yesterday, ${flag} 2026-01-31, ${flag} 2026-01-31T12:00:00Z or ${flag} 7d`,
  });
}

/** `--since`: events at or after this time (a day named: from its start). */
export function parseSince(text: string, now: Date): number {
  return parseTime(text, now, '--since').ms;
}

/**
 * `--until`: events at or before this time. A day named (`yesterday`, `2026-11-28`) counts whole,
 * to its last millisecond: `--until 2026-11-28` includes that day's events, as a person means.
 */
export function parseUntil(text: string, now: Date): number {
  const { ms, day } = parseTime(text, now, '--until');
  return day ? ms + DAY_MS - 1 : ms;
}

/** Where the history is, for the commands that read it (`history`, `whois`); an error when off. */
export function requireHistoryLocation(deps: Deps): HistoryLocation {
  const location = deps.history.location;
  if (location === undefined) {
    throw new UsageError('the token history is off (--no-history or UGS_NO_HISTORY)', {
      hint: 'run without --no-history, and unset UGS_NO_HISTORY',
    });
  }
  return location;
}

export async function runHistory(opts: HistoryOptions, deps: Deps): Promise<void> {
  const location = requireHistoryLocation(deps);
  const read = await import('../history/read.js');
  if (opts.clear) {
    await clearHistory(location, opts.yes, deps, read);
    return;
  }
  const { settings } = deps;
  // The default profile filters nothing: `ugs history` shows every profile's events.
  const profile =
    settings.profileSource === 'flag' || settings.profileSource === 'env'
      ? settings.profile
      : undefined;
  const events = read.selectEvents(await read.readHistory(location), {
    id: opts.id,
    profile,
    sinceMs: opts.sinceMs,
    untilMs: opts.untilMs,
    outcomes: opts.outcomes,
    limit: opts.limit === 0 ? undefined : opts.limit,
  });
  if (opts.json) {
    deps.io.stdout.write(events.map((event) => `${JSON.stringify(event)}\n`).join(''));
    return;
  }
  if (events.length === 0) {
    printLine(deps.output, message`No events in ${location.path} match.`);
    return;
  }
  await printEventTable(deps, events);
}

/**
 * `--clear`: the file may be whatever --history-file or UGS_HISTORY_FILE names, so it is deleted
 * only when it is a history (read.ts checks), and only once a person said yes or the caller
 * passed --yes: nothing brings a deleted file back.
 */
async function clearHistory(
  location: HistoryLocation,
  yes: boolean,
  deps: Deps,
  read: typeof import('../history/read.js'),
): Promise<void> {
  const interactive = canPrompt(deps.io, deps.settings.noInput);
  if (!yes && !interactive) {
    throw new UsageError('--yes is required to clear the history when not running interactively', {
      hint: 'clearing deletes the history for good (the key stays); add --yes: ugs history --clear --yes',
    });
  }
  const targets = await read.historyFilesToClear(location);
  if (targets.length === 0) {
    printLine(deps.output, message`No history to clear at ${location.path}.`);
    return;
  }
  const names = targets.map((target) => target.path).join(' and ');
  if (!yes) {
    const confirmed = await deps.prompter.confirm(
      message`Delete the token history ${names}? (its key stays)`,
      { default: false },
    );
    if (!confirmed) throw new CancelledError('nothing was deleted');
  }
  const removed = await read.removeHistoryFiles(targets);
  printLine(
    deps.output,
    removed.length === 0
      ? message`No history to clear at ${location.path}.`
      : message`Cleared the token history: ${removed.join(', ')}`,
  );
}

/** `…a1b2 3fa2b1c0d9e8`: what a person compares with the token they hold. */
function tokenText(last4: string | null, fingerprint: string | null): string {
  if (fingerprint === null) return '';
  return last4 === null ? fingerprint : `…${last4} ${fingerprint}`;
}

/** The token column: `old -> new` for a rotation, the token alone for a get. */
export function tokensColumn(event: HistoryEvent): string {
  const sent = tokenText(event.sent_last4, event.sent_fingerprint);
  const answered = tokenText(event.token_last4, event.token_fingerprint);
  if (sent === '') return answered;
  return `${sent} -> ${answered === '' ? '?' : answered}`;
}

/** `2026-11-26 13:52:18Z`: the time to the second, in UTC as stored. */
export function shortTime(time: string): string {
  return time.replace('T', ' ').replace(/\.\d+Z$/, 'Z');
}

/**
 * A table at a terminal (a header, columns padded); tab-separated lines without a header into a
 * pipe, as gh does, for `cut` and `awk`.
 */
async function printEventTable(deps: Deps, events: readonly HistoryEvent[]): Promise<void> {
  const rows = events.map((event) =>
    [
      shortTime(event.time),
      `${event.user}@${event.host}`,
      event.profile,
      event.user_group_id ?? '-',
      event.outcome,
      tokensColumn(event),
    ].map(escapeControls),
  );
  const out = deps.output;
  if (!out.stdoutIsTTY) {
    deps.io.stdout.write(rows.map((row) => `${row.join('\t')}\n`).join(''));
    return;
  }
  const style = await out.style('stdout');
  const header = ['TIME', 'WHO', 'PROFILE', 'ID', 'OUTCOME', 'TOKEN (OLD -> NEW)'];
  const [head = '', ...lines] = padColumns([header, ...rows]);
  deps.io.stdout.write(`${style.bold(head)}\n${lines.map((line) => `${line}\n`).join('')}`);
}
