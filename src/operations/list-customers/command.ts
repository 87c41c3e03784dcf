/**
 * `ugs list` (`--dialect customer` only): the user groups of the API key's environment, a page at
 * a time (List Customers). At a terminal a table with each token cut to its last 4; `--json` and
 * `--ndjson` print the customers as the service sent them, whole tokens included, and `--field`
 * one field of each (masked under a CI runner first). `--all` follows every page at the dialect's rate, streaming with `--ndjson`
 * and `--json` so that no more than one page is held.
 */
import type { Command } from 'commander';
import { checkOffered, offeredIn } from '../../cli/dialects.js';
import { type DepsFactory, newCommand } from '../../cli/shared.js';
import { resolveTarget } from '../../context/credentials.js';
import type { Deps } from '../../context/factory.js';
import { UsageError } from '../../errors.js';
import type { JsonObject } from '../../input/parse.js';
import { printLine } from '../../output/messages.js';
import { renderField, withJsonErrorBody } from '../../output/results.js';
import { padColumns } from '../../output/text.js';
import { drained, isSet, writeLine } from '../../platform/io.js';
import { EXPLO_RATE } from '../../service/dialect.js';
import { parseRate, type Rate } from '../../service/rate.js';
import { arrayElementTexts, compactJson } from '../../text/json-text.js';
import { message } from '../../text/message.js';
import { fingerprint } from '../../text/redact.js';
import {
  type CustomerPage,
  DEFAULT_PAGE_SIZE,
  type ListCustomersRequest,
  listCustomers,
  MAX_PAGE_SIZE,
} from './operation.js';

/** `field`: one field of each customer a line (`--field token`), for scripts. */
export type ListFormat = 'table' | 'json' | 'ndjson' | 'field';

export interface ListOptions {
  page: number;
  pageSize: number;
  parent?: string;
  level?: string;
  /** `--all`: every page from `page` on. */
  all: boolean;
  /** `--all` starts its requests at this rate: `--rate`, else the vendor's 180/min. */
  rate: Rate;
  format: ListFormat;
  /** With the `field` format: the field printed (`--field`). */
  field?: string;
}

interface ListFlags {
  rate?: string;
  page?: string;
  pageSize?: string;
  parent?: string;
  level?: string;
  all?: boolean;
  json?: boolean;
  ndjson?: boolean;
  field?: string;
}

export function listCommand(makeDeps: DepsFactory, run = runList): Command {
  const command = newCommand('list', 'List the user groups (--dialect customer only)', [
    'ugs list',
    'ugs list --page 2 --page-size 100',
    'ugs list --all --ndjson > groups.ndjson     # every group, one JSON object per line',
    'ugs list --level Region --json | jq ".[].provided_id"',
    'ugs list --all --field provided_id          # one id per line, for scripts',
  ])
    .option('--page <n>', 'the page to show, from 1', undefined)
    .option(
      `--page-size <n>`,
      `groups per page, 1 to ${MAX_PAGE_SIZE} (default ${DEFAULT_PAGE_SIZE}; ${MAX_PAGE_SIZE} with --all)`,
    )
    .option('--parent <id>', 'only the groups under this parent (parent_provided_id)')
    .option('--level <name>', 'only the groups of this hierarchy level (hierarchy_level)')
    .option('--all', "follow every page (paced to the dialect's rate limit)")
    .option('--rate <n/s|n/min>', 'with --all: request pages at this rate (default: 180/min)')
    .option('--json', 'print the groups as one JSON array, as the service sent them')
    .option('--ndjson', 'print one group per line as JSON, as each page arrives')
    .option('--field <name>', 'print only this field of each group, one a line (e.g. provided_id)');
  return offeredIn(command, listCustomers).action(async (flags: ListFlags, cmd: Command) => {
    const options = parseListFlags(flags);
    await run(options, makeDeps(cmd));
  });
}

/** Flags to options: every usage error is found here, before anything is sent. */
export function parseListFlags(flags: ListFlags): ListOptions {
  const formats = (
    [
      ['--json', flags.json === true],
      ['--ndjson', flags.ndjson === true],
      ['--field', flags.field !== undefined],
    ] as const
  ).filter(([, given]) => given);
  if (formats.length > 1) {
    throw new UsageError(`${formats.map(([flag]) => flag).join(' and ')} cannot be used together`);
  }
  if (flags.field !== undefined && flags.field.trim() === '') {
    throw new UsageError('--field needs a field name, e.g. --field provided_id');
  }
  if (flags.all === true && flags.page !== undefined) {
    throw new UsageError('--all and --page cannot be used together: --all reads every page');
  }
  const page =
    flags.page === undefined ? 1 : count(flags.page, '--page', 1, Number.MAX_SAFE_INTEGER);
  const pageSize =
    flags.pageSize === undefined
      ? flags.all === true
        ? MAX_PAGE_SIZE
        : DEFAULT_PAGE_SIZE
      : count(flags.pageSize, '--page-size', 1, MAX_PAGE_SIZE);
  return {
    page,
    pageSize,
    ...(flags.parent !== undefined && { parent: flags.parent }),
    ...(flags.level !== undefined && { level: flags.level }),
    all: flags.all === true,
    rate: flags.rate === undefined ? EXPLO_RATE : parseRate(flags.rate, '--rate'),
    format:
      flags.json === true
        ? 'json'
        : flags.ndjson === true
          ? 'ndjson'
          : flags.field !== undefined
            ? 'field'
            : 'table',
    ...(flags.field !== undefined && { field: flags.field }),
  };
}

function count(text: string, flag: string, min: number, max: number): number {
  const value = /^\d+$/.test(text.trim()) ? Number(text.trim()) : Number.NaN;
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `at least ${min}` : `${min} to ${max}`;
    throw new UsageError(message`${flag} must be a whole number, ${range}, got "${text}"`);
  }
  return value;
}

export async function runList(opts: ListOptions, deps: Deps): Promise<void> {
  // Only the Customer API lists its groups: exit 2 in another dialect, before anything is sent.
  checkOffered(deps, 'list', listCustomers);
  const target = await resolveTarget(deps);
  const client = await deps.connect(target);
  const out = deps.output;
  const request: ListCustomersRequest = {
    page: opts.page,
    pageSize: opts.pageSize,
    ...(opts.parent !== undefined && { parent: opts.parent }),
    ...(opts.level !== undefined && { level: opts.level }),
  };
  const fetch = (page: number) =>
    withJsonErrorBody(
      out,
      { kind: opts.format === 'json' || opts.format === 'ndjson' ? 'json' : 'table' },
      () => client.listCustomers({ ...request, page }),
    );
  const writer = pageWriter(deps, opts.format, opts.field);
  let shown = 0;
  let total = 0;
  if (!opts.all) {
    const first =
      opts.format === 'table'
        ? await deps.progress.during('Listing user groups', () => fetch(opts.page))
        : await fetch(opts.page);
    await writer.page(first);
    shown = first.customers.length;
    total = first.totalCount;
  } else {
    // Paced as a bulk run is in this dialect (the vendor's 180/min): the pages of a large
    // environment would otherwise run into its rate limit. Loaded for --all only.
    const { Pacer } = await import('../../bulk/pacing.js');
    const pacer = new Pacer(opts.rate);
    const progress = PageProgress.at(deps);
    try {
      for (let page = opts.page; ; page++) {
        await pacer.slot();
        const answer = await fetch(page);
        // stdout may be the same terminal: the groups' lines go where the progress line was
        // (a table is written only at the end).
        if (out.stdoutIsTTY && opts.format !== 'table') progress?.erase();
        await writer.page(answer);
        shown += answer.customers.length;
        total = answer.totalCount;
        const pages = Math.max(page, Math.ceil(total / opts.pageSize));
        progress?.show(`page ${page} of ${pages}, ${groups(shown)} of ${groups(total)} groups`);
        // The last page is short, or reaches the count (an exact multiple of the page size).
        if (answer.customers.length < opts.pageSize || page * opts.pageSize >= total) break;
      }
    } finally {
      // Before anything else is written: the summary below, or main's error line.
      progress?.end();
    }
    if (progress !== undefined && opts.format !== 'table') {
      printLine(out, `read ${groups(shown)} of ${groups(total)} groups`);
    }
  }
  writer.end();
  if (opts.format === 'table') {
    printLine(
      out,
      opts.all
        ? `showing ${shown} of ${total}`
        : `showing ${shown} of ${total}; --all for every group`,
    );
  }
}

/** `2,500`: a count a person reads at a glance. */
function groups(count: number): string {
  return count.toLocaleString('en-US');
}

/**
 * `--all`'s progress for a person at a terminal: one line on stderr, redrawn in place after each
 * page (`page 2 of 3, 2,000 of 2,500 groups`) and erased when the list ends, so a long read shows
 * how far it is without leaving a line per page behind. A script reading stderr wants no counter
 * in it: nothing in a pipe or a CI log, with `--quiet`, with `--debug` (its trace lines would
 * break into the line) or on a terminal that cannot erase a line (TERM=dumb), as for the spinner.
 */
class PageProgress {
  private drawn = false;
  private readonly unsubscribe: (() => void) | undefined;

  static at(deps: Deps): PageProgress | undefined {
    const out = deps.output;
    const wanted =
      out.stderrIsTTY && !out.quiet && !out.debug && !isSet(out.env.CI) && out.env.TERM !== 'dumb';
    return wanted ? new PageProgress(deps) : undefined;
  }

  private constructor(private readonly deps: Deps) {
    // Ctrl+C ends the command with one line from main: the progress line goes first.
    this.unsubscribe = deps.io.onSignal?.(() => this.erase());
  }

  show(text: string): void {
    const out = this.deps.output;
    // One row, never wrapped: a wrapped line cannot be redrawn in place.
    const width = Math.max(1, out.stderrColumns() - 1);
    out.stderr.write(`\r${text.slice(0, width)}\u001b[K`);
    this.drawn = true;
  }

  erase(): void {
    if (!this.drawn) return;
    this.deps.output.stderr.write('\r\u001b[K');
    this.drawn = false;
  }

  end(): void {
    this.unsubscribe?.();
    this.erase();
  }
}

interface PageWriter {
  /** Resolves once stdout has taken the page (a slow reader holds the next request back). */
  page(answer: CustomerPage): Promise<void>;
  end(): void;
}

/**
 * Where each page goes as it arrives. `--ndjson` and `--json` write it at once (`--json` as one
 * array opened before the first page and closed after the last), so `--all` holds one page at a
 * time; the table needs every row for its column widths, and holds only the short cells.
 */
function pageWriter(deps: Deps, format: ListFormat, field = ''): PageWriter {
  const out = deps.output;
  // One write per page, not per customer: 100,000 groups were 100,000 writes (each a system
  // call into a file or a pipe), the larger part of the time a long list took.
  const write = async (chunk: string) => {
    if (!out.stdout.write(chunk)) await drained(out.stdout);
  };
  switch (format) {
    case 'ndjson':
      return {
        page: async (answer) => {
          const texts = customerTexts(deps, answer);
          if (texts.length > 0) await write(`${texts.join('\n')}\n`);
        },
        end: () => {},
      };
    case 'json': {
      // Opened with the first customer, so a failed first page leaves only the error body.
      let first = true;
      return {
        page: async (answer) => {
          const texts = customerTexts(deps, answer);
          if (texts.length === 0) return;
          await write(`${first ? '[\n  ' : ',\n  '}${texts.join(',\n  ')}`);
          first = false;
        },
        end: () => writeLine(out.stdout, first ? '[]' : '\n]'),
      };
    }
    case 'field':
      // Whole tokens too (`--field token`): masked under a CI runner before any is written.
      return {
        page: async ({ customers }) => {
          out.maskTokensIn(customers);
          const lines = customers.map((customer) =>
            renderField({ name: 'customer', fields: customer }, field, out),
          );
          if (lines.length > 0) await write(`${lines.join('\n')}\n`);
        },
        end: () => {},
      };
    case 'table': {
      const rows: string[][] = [['id', 'name', 'demo', 'level', 'token']];
      return {
        page: async ({ customers }) => {
          for (const customer of customers) rows.push(tableRow(customer));
        },
        end: () => {
          for (const line of padColumns(rows)) writeLine(out.stdout, line);
        },
      };
    }
  }
}

/**
 * A page's customers as JSON lines, as the service sent them: cut from the answer's text, numbers
 * exact, instead of printing each parsed customer again (which cost most of a long list's time
 * and changed numbers JSON.parse cannot hold). Printed from the parsed values only when the text
 * does not give them (an answer built in a test). Under a CI runner every token is masked first.
 */
function customerTexts(deps: Deps, { customers, text }: CustomerPage): string[] {
  deps.output.maskTokensIn(customers);
  const texts = text === undefined ? undefined : arrayElementTexts(text, ['results', 'customers']);
  return texts !== undefined && texts.length === customers.length
    ? texts
    : customers.map((customer) => compactJson(customer));
}

/** A customer's cells: its token by its last 4 only (`…abcd`), never whole on a screen. */
function tableRow(customer: JsonObject): string[] {
  const text = (value: unknown) =>
    value === null || value === undefined
      ? ''
      : typeof value === 'string'
        ? value
        : compactJson(value);
  const token = customer.token;
  return [
    text(customer.provided_id),
    text(customer.name),
    customer.is_demo_group === true
      ? 'yes'
      : customer.is_demo_group === false
        ? 'no'
        : text(customer.is_demo_group),
    text(customer.hierarchy_level),
    typeof token === 'string' ? fingerprint(token) : '',
  ];
}
