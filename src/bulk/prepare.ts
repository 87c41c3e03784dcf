/**
 * Preparing a bulk run, before its first request: the options read, the results file checked and
 * opened, the input validated (the first pass), the `--resume` plan made, the rotation confirmed,
 * and the connection pool and the history batch opened.
 */

import { inheritedPermissionsWarning } from '../config/config.js';
import { dryRunTarget, NO_BASE_URL, resolveTarget } from '../context/credentials.js';
import type { ConnectOptions, Deps } from '../context/factory.js';
import {
  checkProductionYes,
  confirmOnProduction,
  onPlace,
  placeOf,
} from '../context/production.js';
import { CancelledError, UsageError } from '../errors.js';
import type { HistoryBatch } from '../history/log.js';
import { type EntryBase, entryBase } from '../history/record.js';
import { lookalikeRows } from '../history/typo.js';
import type { RowSchema } from '../input/bulk-options.js';
import { printLine, printNote, printWarningNote } from '../output/messages.js';
import type { Output } from '../output/output.js';
import { insideUserProfile } from '../platform/host.js';
import { canPrompt } from '../platform/io.js';
import type { ServiceClient } from '../service/client.js';
import {
  type Dialect,
  EXPLO_RATE,
  EXPLO_THROTTLE_WAIT_MS,
  isVendorDialect,
} from '../service/dialect.js';
import { message } from '../text/message.js';
import { inputSource, isStdinPath, stdinSource } from './input-source.js';
import { ResultFile } from './journal.js';
import type { BulkHooks, BulkOptions } from './options.js';
import type { Pacing } from './pacing.js';
import { Pacer, RequestGate } from './pacing.js';
import { rowsText } from './progress.js';
import { type OutputFormat, outputFormatFor, withTokenTails } from './records.js';
import { planResume, type ResumePlan, readResumeState } from './resume.js';
import { columnTargets } from './row-fields.js';
import { RowLines } from './row-lines.js';
import type { BulkRow } from './spec.js';
import { type BulkInput, openBulkInput } from './validate.js';

/** What a run has to do: its options and its rows. */
export interface RunPlan {
  opts: BulkOptions;
  /** The input's counts: its rows, and the CSV rows with every cell empty (no rows). */
  input: Pick<BulkInput<BulkRow>, 'rowCount' | 'blankRows'>;
  /** `--resume`: the rows done, to settle, sent before (empty without it). */
  resume: ResumePlan;
  /** Rows an earlier run finished: not sent again. */
  alreadyDone: number;
  /**
   * ` on prod (https://...)` where the profile could be mistaken for another (onPlace), else '':
   * the summary line says where the rows went, as a single command's headline does.
   */
  where: string;
}

/** The token history of a run: its batch, and what every event of the run has in common. */
export interface RunHistory {
  batch: HistoryBatch;
  base: EntryBase;
}

/** What a run works with. */
export interface RunParts {
  deps: Deps;
  /** The results file (`--output`); undefined: records go to stdout. */
  file: ResultFile | undefined;
  /** One line per row at a terminal (row-lines.ts); undefined: NDJSON records. */
  rowLines: RowLines | undefined;
  pacing: Pacing;
  /** Undefined with the history off (`--no-history`). */
  history: RunHistory | undefined;
}

/** A run ready to send: what it does and works with, the validated input, the connection. */
export interface PreparedRun {
  plan: RunPlan;
  parts: RunParts;
  input: BulkInput<BulkRow>;
  connecting: Promise<ServiceClient>;
}

/**
 * A dry run (`--dry-run`) prepares as a real run does, up to the first request: its client hands
 * each request to `capture` (nothing is loaded or sent), and it needs no API token, asks nothing,
 * and opens no results file or history.
 */
export interface DryRun {
  capture: NonNullable<ConnectOptions['capture']>;
}

export async function prepareRun(
  opts: BulkOptions,
  deps: Deps,
  hooks: BulkHooks,
  dry?: DryRun,
): Promise<PreparedRun> {
  const { io } = deps;
  const interactive = canPrompt(io, deps.settings.noInput);
  const risk = opts.spec.risk;
  if (risk !== undefined && !opts.yes && !interactive && dry === undefined) {
    throw new UsageError(risk.needsYes.message, { hint: risk.needsYes.hint });
  }
  // --output-tokens last4 leaves the whole tokens to stdout alone: not a terminal, where they
  // would stay in the scrollback (and row lines would show only their last 4, losing them).
  const last4 = opts.outputTokens === 'last4' && opts.output !== undefined;
  if (last4 && deps.output.stdoutIsTTY) {
    throw new UsageError(
      '--output-tokens last4 writes the whole tokens to stdout only, and stdout is a terminal; nothing was sent',
      {
        hint: 'send stdout to where the tokens go (a pipe into your secret store, or a file kept secret), or leave out --output-tokens',
      },
    );
  }
  const outputFormat: OutputFormat | undefined =
    opts.output === undefined ? undefined : outputFormatFor(opts.output);
  const target = dry === undefined ? await resolveTarget(deps) : dryRunTarget(deps);
  // A production profile: without a terminal, `--yes` or nothing (before the input is read). A
  // dry run sends nothing, so it needs no `--yes` there either.
  const place =
    dry === undefined
      ? checkProductionYes(deps, target, {
          yes: opts.production?.yes ?? opts.yes,
          action: `${opts.production?.verb ?? 'change'} user groups with --from`,
        })
      : placeOf(deps, target);
  // A dry run that knows no base URL says the profile alone.
  const where =
    target.baseUrl.href === NO_BASE_URL
      ? place.named
        ? message` on ${place.profile}`
        : ''
      : onPlace(place);
  // The run's spec in its dialect: the rest of the run, settling included, uses this one.
  const spec = opts.spec.forDialect?.(target.dialect) ?? opts.spec;
  // The results file's records: without whole tokens with --output-tokens last4 (stdout gets
  // the records as the spec writes them).
  const fileRecords = last4 ? withTokenTails(spec.records) : spec.records;
  // The vendor publishes its limit (180 requests a minute per client IP): a run in its dialect
  // keeps to it unless told otherwise, since a 429 there costs a whole minute.
  const rate = opts.rate ?? (isVendorDialect(target.dialect) ? EXPLO_RATE : undefined);
  const pacer = rate === undefined ? undefined : new Pacer(rate, hooks.clock);
  const gate = new RequestGate(pacer);
  // Loading the HTTP stack (undici and its parser) overlaps the validation pass: nothing is
  // sent before every row is checked, but the first request need not wait for the import.
  const connecting = deps.connect(
    target,
    dry === undefined
      ? {
          bulk: true,
          connections: opts.concurrency,
          // A transport retry passes the gate too: its slot, an outage, and never after a stop.
          pace: () => gate.admit(),
        }
      : { capture: dry.capture },
  );
  connecting.catch(() => undefined); // awaited below, unless the input is refused first
  // An existing results file: ours, this command's, not the input (nothing is sent otherwise).
  if (opts.output !== undefined && outputFormat !== undefined) {
    await ResultFile.preflight({
      path: opts.output,
      format: outputFormat,
      records: fileRecords,
      uid: deps.system.uid,
      from: opts.from,
      resume: opts.resume,
    });
  }
  // The results file is read before the input: the validation pass then also checks that the
  // file was written for this input (each record's row holds the same user_group_id here).
  const state =
    opts.resume && opts.output !== undefined && outputFormat !== undefined
      ? await readResumeState(opts.output, outputFormat, fileRecords)
      : undefined;
  const mismatches: string[] = [];
  const lookalikes = spec.noteLookalikeIds === true ? await lookalikeRows(deps) : undefined;
  const check = (row: { row: number; user_group_id?: string | undefined }) => {
    lookalikes?.check(row);
    const earlier = state?.outcomes.get(row.row)?.user_group_id;
    if (earlier == null || row.user_group_id === undefined || earlier === row.user_group_id) return;
    mismatches.push(
      message`row ${row.row} is "${row.user_group_id}" here and "${earlier}" in the results`,
    );
  };
  const command = spec.records.command;
  const rows = withDialectFields(spec.rows, target.dialect);
  // `--column` names fields of this operation: checked before the input is read.
  const renames =
    opts.columns === undefined ? undefined : columnTargets(opts.columns, rows, command);
  // The rows sent are the rows checked (validate.ts keeps them); an input at risk may be as large
  // as input-source.ts lets a rotate run hold.
  const source =
    opts.from === '-' || isStdinPath(opts.from)
      ? await stdinSource(io.stdin, io.stdinIsTTY)
      : await inputSource(opts.from, { keep: risk !== undefined });
  const input = await openBulkInput(source, opts.format, rows, check, {
    delimiter: opts.delimiter,
    strictColumns: opts.strictColumns,
    renames,
    command,
  });
  await noteIgnoredColumns(deps.output, input);
  lookalikes?.report();

  let plan: ResumePlan = { done: new Set(), settle: new Map(), sent: new Set(), sentAt: new Map() };
  if (state !== undefined && opts.output !== undefined) {
    let beyond = 0;
    for (const row of state.outcomes.keys()) if (row > beyond) beyond = row;
    if (beyond > input.rowCount) {
      mismatches.push(`the results have row ${beyond}; this input has ${rowsText(input.rowCount)}`);
    }
    if (mismatches.length > 0) {
      throw new UsageError(
        message`--resume: ${opts.output} holds the results of another input (${mismatches[0] ?? ''}${mismatches.length > 1 ? `, and ${mismatches.length - 1} more` : ''})`,
        {
          hint: 'resume with the input that file was written for, or name a new --output file to start over',
        },
      );
    }
    if (state.tornLines > 0) {
      printNote(
        deps.output,
        `--resume: ${state.tornLines} incomplete line(s) in the results were ignored`,
      );
    }
    plan = planResume(state);
  }
  // A results file with a row past the input's end was refused above: every done row counts.
  const alreadyDone = plan.done.size;

  // A dry run asks nothing: it sends nothing, and its summary names the columns left out.
  if (dry !== undefined) {
    return {
      plan: { opts: { ...opts, spec }, input, resume: plan, alreadyDone, where },
      parts: {
        deps,
        file: undefined,
        rowLines: undefined,
        pacing: { pacer, gate, throttleWaitMs: undefined },
        history: undefined,
      },
      input,
      connecting,
    };
  }

  // A column left out is data the service never gets, and a rerun cannot add it to the groups
  // it made: at a terminal the person decides, after validation and before anything is sent.
  if (input.ignoredColumnCount > 0 && interactive && opts.askColumns !== false) {
    const count = input.ignoredColumnCount;
    const send = await deps.prompter.confirm(
      `${count === 1 ? '1 column' : `${count} columns`} would be ignored: ${input.ignoredColumns.join(', ')}. Send anyway?`,
      { default: false },
    );
    if (!send) {
      throw new CancelledError(
        'cancelled; nothing was sent (map a column to a field with --column SRC=DEST, as the note says)',
      );
    }
  }

  const count = input.rowCount - alreadyDone;
  if (risk !== undefined && !opts.yes) {
    // The question names the place where it could be mistaken (context/production.ts).
    const question = risk.question(count).replace(/\?/, `${onPlace(place)}?`);
    const confirmed = await deps.prompter.confirm(question, { default: false });
    if (!confirmed) throw new CancelledError(risk.cancelled);
  } else if (opts.production !== undefined) {
    await confirmOnProduction(deps, target, {
      yes: opts.production.yes,
      action: `${opts.production.verb} ${count} user ${count === 1 ? 'group' : 'groups'}`,
    });
  }

  // A person at a terminal reads one line per row; a pipe gets the NDJSON records (row-lines.ts).
  const rowLines =
    opts.output === undefined && deps.output.stdoutIsTTY
      ? new RowLines(
          input,
          await deps.output.style('stdout'),
          deps.output.unicode ? '\u2026' : '...',
        )
      : undefined;
  // Results hold tokens. On Windows the file takes its folder's ACL, which ugs does not set:
  // private in the user's profile, anybody's to read perhaps elsewhere. Said once, before it is made.
  const { platform, homedir } = deps.system;
  if (opts.output !== undefined && !insideUserProfile(opts.output, platform, homedir)) {
    printLine(deps.output, inheritedPermissionsWarning('--output', opts.output, platform));
  }
  const file =
    opts.output === undefined || outputFormat === undefined
      ? undefined
      : await ResultFile.open({
          path: opts.output,
          format: outputFormat,
          records: fileRecords,
          uid: deps.system.uid,
          ...(hooks.fs !== undefined && { fs: hooks.fs }),
        });
  // Every answered row is an event of the token history, written in batches (log.ts).
  // With the history off (`--no-history`), no event is built for any row: bulk pays nothing.
  const history =
    deps.history.location === undefined
      ? undefined
      : { batch: deps.history.batch(), base: entryBase(deps, target) };
  return {
    plan: { opts: { ...opts, spec }, input, resume: plan, alreadyDone, where },
    parts: {
      deps,
      file,
      rowLines,
      pacing: {
        pacer,
        gate,
        throttleWaitMs: isVendorDialect(target.dialect) ? EXPLO_THROTTLE_WAIT_MS : undefined,
      },
      history,
    },
    input,
    connecting,
  };
}

/**
 * The columns a CSV input has that ugs does not know, each with its fix: said as a warning, as
 * the rows are sent without them (unless a person at a terminal declines).
 */
async function noteIgnoredColumns(output: Output, input: BulkInput<BulkRow>): Promise<void> {
  if (input.ignoredColumns.length === 0) return;
  const one = input.ignoredColumnCount === 1;
  await printWarningNote(
    output,
    `--from: ignored ${one ? 'a column' : 'columns'} ugs does not know: ${input.ignoredColumns.join(', ')} (--strict-columns refuses them)`,
  );
  for (const fix of input.ignoredColumnFixes) printLine(output, `  ${fix}`);
}

/**
 * The schema for a run in `dialect`: a row that sets a field its dialect has not (`is_demo_group`
 * outside the vendor's APIs, a Customer API field outside `customer`) is refused with the others'
 * problems, as the service would ignore it or refuse it.
 */
function withDialectFields<Row extends BulkRow>(
  schema: RowSchema<Row>,
  dialect: Dialect | undefined,
): RowSchema<Row> {
  const refused = [
    ...(isVendorDialect(dialect)
      ? []
      : (schema.exploOnly ?? []).map((field) => ({
          field,
          needs: 'needs --dialect explo (the interface has no such field)',
        }))),
    ...(dialect === 'customer'
      ? []
      : (schema.customerOnly ?? []).map((field) => ({
          field,
          needs: `needs --dialect customer (the ${dialect ?? 'interface'} dialect has no such field)`,
        }))),
  ];
  if (refused.length === 0) return schema;
  return {
    ...schema,
    check(row, line, values, problems) {
      for (const { field, needs } of refused) {
        const value = values[field];
        if (value !== undefined && value !== null) problems.push(`${field} ${needs}`);
      }
      const checked = schema.check(row, line, values, problems);
      return problems.length > 0 ? undefined : checked;
    },
  };
}
