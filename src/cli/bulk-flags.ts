/**
 * The flags of a bulk run (`--from` and its companions), shared by `get` and `rotate`, and the
 * rules for combining them with the single-row flags.
 */
import type { Command } from 'commander';
import type { BulkOptions } from '../bulk/options.js';
import type { OutputTokens } from '../bulk/records.js';
import { UsageError } from '../errors.js';
import {
  type BulkFlagSpec,
  DEFAULT_CONCURRENCY,
  inputFormatFor,
  MAX_CONCURRENCY,
  parseColumnFlag,
  parseConcurrency,
} from '../input/bulk-options.js';
import { parseDuration } from '../input/parse.js';
import { parseRate } from '../service/rate.js';
import { message } from '../text/message.js';
import { collect } from './shared.js';

export interface BulkFlags {
  from?: string;
  format?: string;
  concurrency?: string;
  output?: string;
  resume?: boolean;
  giveUpAfter?: string;
  delimiter?: string;
  strictColumns?: boolean;
  rate?: string;
  outputTokens?: string;
  column?: string[];
  dryRun?: boolean;
  /** `--json`: with `--dry-run`, one line per row (without it a single-row flag). */
  json?: boolean;
  /** `-y`/`--yes` as typed (commands without it leave it out). */
  yes?: boolean;
}

export function addBulkFlags(command: Command, bulk: BulkFlagSpec): Command {
  return command
    .option('--from <file|->', bulk.fromHelp)
    .option('--format <csv|ndjson|json>', 'the format of --from (default: from its extension)')
    .option(
      '--concurrency <n>',
      `requests in flight with --from, 1-${MAX_CONCURRENCY} (default ${DEFAULT_CONCURRENCY})`,
    )
    .option('--output <file>', 'append one result record per row to this .ndjson or .csv file')
    .option('--resume', 'with --output: skip rows the file shows done, settle unfinished ones')
    .option(
      '--give-up-after <duration>',
      'with --from: stop when no request has succeeded for this long (e.g. 90s, 10m, 1h; default 10m)',
    )
    .option(
      '--delimiter <char>',
      'the delimiter of a CSV --from: , ; tab or another character (default: from the header line)',
    )
    .option(
      '--strict-columns',
      'with a CSV --from: refuse columns ugs does not know (default: ignore them, with a note; at a terminal, ask first)',
    )
    .option(
      '--column <SRC=DEST>',
      'with a CSV --from: read column SRC as field DEST, e.g. Plan=properties.plan (repeatable)',
      collect,
      [],
    )
    .option(
      '--dry-run',
      'with --from: validate and show what each row would send (--json: one line per row); sends nothing, contacts no service, needs no API token',
    )
    .option(
      '--output-tokens <full|last4>',
      'with --output: full (default) keeps whole tokens in the file; last4 keeps only their last 4 and SHA-256 and sends the whole records to stdout, for runs whose tokens go elsewhere',
    )
    .option(
      '--rate <n/s|n/min>',
      'with --from: start requests evenly at this rate, e.g. 180/min (default: 180/min with --dialect explo, none otherwise)',
    );
}

/**
 * The bulk options, or undefined without `--from`. `singleRowFlags` are the names of the
 * single-row flags that were given: none may be combined with `--from`.
 */
export function parseBulkFlags(
  flags: BulkFlags,
  bulk: BulkFlagSpec,
  singleRowFlags: readonly string[],
  yes: boolean,
): Omit<BulkOptions, 'spec'> | undefined {
  const kind = bulk.command;
  if (flags.from === undefined) {
    const stray = (
      [
        ['--format', flags.format !== undefined],
        ['--concurrency', flags.concurrency !== undefined],
        ['--output', flags.output !== undefined],
        ['--resume', flags.resume === true],
        ['--give-up-after', flags.giveUpAfter !== undefined],
        ['--delimiter', flags.delimiter !== undefined],
        ['--strict-columns', flags.strictColumns === true],
        ['--rate', flags.rate !== undefined],
        ['--output-tokens', flags.outputTokens !== undefined],
        ['--column', (flags.column ?? []).length > 0],
        ['--dry-run', flags.dryRun === true],
      ] as const
    ).find(([, given]) => given);
    if (stray) {
      throw new UsageError(`${stray[0]} works only with --from`, {
        hint: `pass --from <file|-> to ${kind} many rows at once`,
      });
    }
    return undefined;
  }
  const dryRun = flags.dryRun === true;
  // A dry run's --json is its own: one line per row of what would be sent.
  const single = dryRun ? singleRowFlags.filter((flag) => flag !== '--json') : singleRowFlags;
  if (single.length > 0) {
    throw new UsageError(`--from cannot be combined with ${single.join(', ')}`, {
      hint:
        single.length === 1 && single[0] === '--json'
          ? 'each row of the --from file carries its own values; --dry-run --json prints what each row would send'
          : 'each row of the --from file carries its own values',
    });
  }
  if (flags.from === '') throw new UsageError('--from needs a file path, or - for stdin');
  if (flags.resume && flags.output === undefined) {
    throw new UsageError('--resume needs --output: it reads the results of the earlier run there');
  }
  if (flags.outputTokens !== undefined && flags.output === undefined && !dryRun) {
    throw new UsageError('--output-tokens needs --output: it says what the results file keeps', {
      hint: 'without --output the records, whole tokens included, go to stdout',
    });
  }
  // A dry run writes no results, so it needs no file for them.
  if (bulk.outputRequired !== undefined && flags.output === undefined && !dryRun) {
    throw new UsageError(`${kind} --from needs --output FILE`, { hint: bulk.outputRequired });
  }
  const format = inputFormatFor(flags.from, flags.format);
  if (format !== 'csv' && flags.delimiter !== undefined) {
    throw new UsageError(`--delimiter works only with a CSV --from, not ${format}`, {
      hint: 'name the file .csv, or pass --format csv',
    });
  }
  const columns = (flags.column ?? []).map(parseColumnFlag);
  if (format !== 'csv' && columns.length > 0) {
    throw new UsageError(`--column works only with a CSV --from, not ${format}`, {
      hint: 'JSON rows name their fields: rename the keys in the file',
    });
  }
  return {
    from: flags.from,
    format,
    ...(columns.length > 0 && { columns }),
    askColumns: flags.yes !== true,
    ...(dryRun && { dryRun: true, json: flags.json === true }),
    ...(flags.delimiter !== undefined && { delimiter: parseDelimiter(flags.delimiter) }),
    // JSON rows have no columns to ignore: their unknown fields are always refused.
    strictColumns: flags.strictColumns === true,
    concurrency:
      flags.concurrency === undefined ? DEFAULT_CONCURRENCY : parseConcurrency(flags.concurrency),
    output: flags.output,
    resume: flags.resume === true,
    yes,
    // Absent: the run's own default (DEFAULT_GIVE_UP_AFTER_MS, applied in bulk/service-watch.ts).
    ...(flags.giveUpAfter !== undefined && {
      giveUpAfterMs: parseDuration(flags.giveUpAfter, '--give-up-after'),
    }),
    ...(flags.rate !== undefined && { rate: parseRate(flags.rate, '--rate') }),
    ...(flags.outputTokens !== undefined && {
      outputTokens: parseOutputTokens(flags.outputTokens),
    }),
  };
}

/** `--output-tokens`: `full` or `last4` (what a results file keeps of each token). */
export function parseOutputTokens(text: string): OutputTokens {
  const value = text.trim().toLowerCase();
  if (value === 'full' || value === 'last4') return value;
  throw new UsageError(message`--output-tokens must be full or last4, got "${text}"`, {
    hint: 'last4 keeps only the last 4 characters and the SHA-256 of each token in the file; the whole tokens then go to stdout',
  });
}

/**
 * `--delimiter`: one character, or `tab` / `\t` for a tab (a tab is awkward to type in a shell).
 * Not a quote or a line break, which CSV itself uses.
 */
export function parseDelimiter(text: string): string {
  const delimiter = text === 'tab' || text === '\\t' ? '\t' : text;
  if (delimiter.length !== 1) {
    throw new UsageError(message`--delimiter must be one character, got "${text}"`, {
      hint: "for example --delimiter ';' or --delimiter tab",
    });
  }
  if (delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    throw new UsageError(
      message`--delimiter cannot be "${delimiter}": CSV uses it for quoting or rows`,
      {
        hint: "for example --delimiter ';' or --delimiter tab",
      },
    );
  }
  return delimiter;
}
