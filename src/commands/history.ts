/**
 * `ugs history`: what reached the service, newest first, from the token history (history.ndjson
 * or `--history-file`). The global `-p` filters by profile here, and may name a profile only the
 * history knows: nothing here resolves a target or reads credentials. The reading code is
 * loaded by this command only (`import()`).
 */
import type { Command } from 'commander';
import { type DepsFactory, newCommand } from '../cli/shared.js';
import type { Deps } from '../context/factory.js';
import { CancelledError, UsageError } from '../errors.js';
import type { HistoryEvent } from '../history/event.js';
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
  limit: number;
  json: boolean;
  clear: boolean;
  /** `--yes`: clear without asking (required without a terminal). */
  yes: boolean;
}

interface HistoryFlags {
  id?: string;
  since?: string;
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
    'ugs history -p staging --limit 200 --json | jq .token_fingerprint',
    'ugs history --clear                 # asks to confirm',
    'ugs history --clear --yes',
  ])
    .option('--id <user_group_id>', 'only the events of this user group')
    .option('--since <date|duration>', 'only events since a date (2026-01-31) or for a while (7d)')
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
    const others = (['id', 'since', 'json'] as const).filter((flag) => flags[flag] !== undefined);
    if (others.length > 0) {
      throw new UsageError(`--clear cannot be used with --${others[0]}`);
    }
  } else if (flags.yes === true) {
    throw new UsageError('--yes goes with --clear only', {
      hint: 'ugs history --clear --yes deletes the history without asking',
    });
  }
  return {
    id: flags.id,
    sinceMs: flags.since === undefined ? undefined : parseSince(flags.since, now),
    limit: Number(limitText.trim()),
    json: flags.json === true,
    clear: flags.clear === true,
    yes: flags.yes === true,
  };
}

/** How far back `--since` reaches: whole numbers of seconds up to weeks. */
const SINCE_DURATION: DurationForm = { units: ['s', 'm', 'h', 'd', 'w'], fractions: false };

/**
 * `--since`: a date or time (`2026-01-31`, `2026-01-31T12:00:00Z`; a date alone is midnight UTC)
 * or a duration back from now (`90m`, `12h`, `7d`, `2w`, `1d12h`), read as every duration is.
 */
export function parseSince(text: string, now: Date): number {
  const back = readDuration(text, SINCE_DURATION);
  if (back !== undefined) return now.getTime() - back;
  const trimmed = text.trim().toLowerCase();
  if (/^\d{4}-\d\d-\d\d([t ][\d:.]+(z|[+-]\d\d:?\d\d)?)?$/.test(trimmed)) {
    const dateOnly = trimmed.length === 10;
    const parsed = Date.parse(dateOnly ? `${trimmed}T00:00:00Z` : trimmed.toUpperCase());
    if (!Number.isNaN(parsed)) return parsed;
  }
  throw new UsageError(message`--since expects a date or a duration, got "${text}"`, {
    hint: 'for example: --since 2026-01-31, --since 12h or --since 7d',
  });
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
