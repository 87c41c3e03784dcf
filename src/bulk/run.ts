/**
 * A bulk run of `get --from` or `rotate --from`: every row validated first, then sent through one
 * keep-alive pool with a bounded number in flight, one record per row written as it finishes.
 *
 * Rotation is exactly once: a row's `sending` record is on disk before its request goes out
 * (journal.ts), and a rotation whose answer was lost is settled by reading the group's current
 * token before anything else is sent for that row. A row is never rotated again while a first
 * rotation may have happened unseen.
 */
import type { Deps } from '../context/factory.js';
import { ApiError, OutcomeUnknownError, type UgsError } from '../errors.js';
import { printLine, printNote } from '../output/messages.js';
import type { ServiceClient } from '../service/client.js';
import { message } from '../text/message.js';
import { type Clock, realClock } from './clock.js';
import { runDryRun } from './dry-run.js';
import { done, FailurePolicy } from './failure-policy.js';
import type { ResultFile } from './journal.js';
import { lockResultsFile } from './journal-checks.js';
import type { BulkHooks, BulkOptions } from './options.js';
import { OUTAGE_LIMIT_MS } from './outage.js';
import { throwOutcome } from './outcome.js';
import type { Pacing } from './pacing.js';
import { RequestNotSent } from './pacing.js';
import { prepareRun, type RunParts, type RunPlan } from './prepare.js';
import { type ProgressState, rowsText } from './progress.js';
import { ProgressLine, realEvery } from './progress-line.js';
import { RecordWriter } from './record-writer.js';
import type { BulkRecord } from './records.js';
import type { ResumePlan } from './resume.js';
import type { RowLines } from './row-lines.js';
import { type Attempt, Scheduler } from './scheduler.js';
import {
  isGatewayAnswer,
  MAX_GATEWAY_ANSWERS_PER_ROW,
  ServiceWatch,
  timeOfDay,
} from './service-watch.js';
import { Settler } from './settle.js';
import type { AtRisk, BulkRow } from './spec.js';
import { RunStop } from './stop.js';
import { Tally } from './tally.js';
import type { BulkInput } from './validate.js';

export type { BulkHooks, BulkOptions } from './options.js';
export { UNAVAILABLE_STREAK } from './service-watch.js';

export async function runBulk(opts: BulkOptions, deps: Deps, hooks: BulkHooks = {}): Promise<void> {
  // A rehearsal: nothing is sent or written, so no results file is locked.
  if (opts.dryRun === true) return runDryRun(opts, deps);
  if (opts.output === undefined) return runUnlocked(opts, deps, hooks);
  // One run per results file (journal-checks.ts): held from before the file is first read.
  const lock = await lockResultsFile(opts.output);
  try {
    await runUnlocked(opts, deps, hooks);
  } finally {
    await lock.release();
  }
}

async function runUnlocked(opts: BulkOptions, deps: Deps, hooks: BulkHooks): Promise<void> {
  const { plan, parts, input, connecting } = await prepareRun(opts, deps, hooks);
  const { file, history } = parts;
  const risk = plan.opts.spec.risk;
  const run = new BulkRun(plan, parts, hooks);
  try {
    const client = run.watch.tracked(await connecting);
    const work = () =>
      risk === undefined
        ? run.runSafe(client, input.batches())
        : run.runAtRisk(client, input, risk);
    await (deps.io.inFlight
      ? deps.io.inFlight.stoppable(() => run.stopper.stop('interrupt'), work)
      : work());
    // Rows never sent once the run stopped: a definite outcome for each.
    if (run.stopper.stopping) await run.skipRest(input.rows() as AsyncIterable<RowOf>);
  } finally {
    await run.finish();
    await file?.close();
    await history?.batch.close();
  }
  run.throwOutcome();
}

type RowOf = BulkRow;

class BulkRun {
  /** Why and where the run stopped; what must stop with it. */
  readonly stopper = new RunStop();
  private readonly tally: Tally;
  private readonly started: number;
  /** The service as the run sees it: successes, gateway answers, an outage. */
  readonly watch: ServiceWatch;
  private readonly clock: Clock;
  private readonly progress: ProgressLine;
  private readonly writer: RecordWriter;
  private readonly failures: FailurePolicy;
  /** Reads back the rows whose answer was lost (a run at risk). */
  private readonly settler: Settler;
  private scheduler: Scheduler<RowOf, BulkRecord> | undefined;

  private readonly opts: BulkOptions;
  private readonly deps: Deps;
  private readonly file: ResultFile | undefined;
  private readonly plan: ResumePlan;
  private readonly pacing: Pacing;
  /** One line per row at a terminal: the note on tokens shown by their last characters. */
  private readonly rowLines: RowLines | undefined;
  /** Where the rows go, for the summary line (RunPlan's `where`). */
  private readonly where: string;

  constructor(run: RunPlan, parts: RunParts, hooks: BulkHooks) {
    const { opts, input, resume: plan, alreadyDone } = run;
    const { deps, file, pacing } = parts;
    this.opts = opts;
    this.deps = deps;
    this.file = file;
    this.plan = plan;
    this.pacing = pacing;
    this.rowLines = parts.rowLines;
    this.where = run.where;
    this.tally = new Tally(input, plan);
    // A full disk: rows in flight finish, none starts; `throwOutcome` says what was lost.
    file?.onFailure(() => this.stopper.stop('disk'));
    this.clock = hooks.clock ?? realClock;
    this.started = this.clock.now();
    // No request starts after a stop, even one whose slot was due: a row waiting for it is
    // `skipped` (not sent), a rotation in doubt stays to be settled by --resume.
    this.stopper.onStop(() => pacing.gate.stop());
    this.stopper.onStop(() => this.watch.stop());
    this.progress = new ProgressLine(
      deps.output,
      {
        state: () => this.progressState(),
        total: this.tally.total,
        counting: () => this.watch.outageState() !== undefined,
      },
      hooks.every ?? realEvery,
    );
    this.watch = new ServiceWatch({
      opts,
      output: deps.output,
      gate: pacing.gate,
      clock: this.clock,
      stopper: this.stopper,
      progress: this.progress,
      outageLimitMs: hooks.outageLimitMs ?? OUTAGE_LIMIT_MS,
      started: this.started,
    });
    this.writer = new RecordWriter({
      spec: opts.spec,
      deps,
      file,
      rowLines: parts.rowLines,
      history: parts.history,
      tally: this.tally,
      progress: this.progress,
      clock: this.clock,
      outputTokens: opts.outputTokens,
    });
    this.failures = new FailurePolicy({
      opts,
      writer: this.writer,
      stopper: this.stopper,
      watch: this.watch,
      throttleWaitMs: pacing.throttleWaitMs,
    });
    this.settler = new Settler({
      spec: opts.spec,
      plan,
      file,
      writer: this.writer,
      failures: this.failures,
      stopper: this.stopper,
      clock: this.clock,
      output: deps.output,
      progress: this.progress,
      timeoutMs: deps.settings.timeoutMs,
    });
    if (alreadyDone > 0) {
      printNote(
        deps.output,
        `--resume: ${rowsText(alreadyDone)} ${alreadyDone === 1 ? 'is' : 'are'} done already and ${alreadyDone === 1 ? 'is' : 'are'} not sent again`,
      );
    }
  }

  /** An operation safe to repeat: each row is sent, and its answer recorded. */
  async runSafe(client: ServiceClient, rows: AsyncIterable<RowOf[]>): Promise<void> {
    const task = async (row: RowOf, attempt: number): Promise<Attempt<BulkRecord>> => {
      let gateway: UgsError | undefined;
      for (let answers = 1; ; answers++) {
        try {
          return done(this.writer.answered(row, await this.opts.spec.send(client, row), false));
        } catch (error) {
          // The run stopped before the row's request (or its next try) went out.
          if (error instanceof RequestNotSent) {
            return done(
              gateway === undefined
                ? this.failures.notSent(row)
                : this.failures.failedRecord(row, gateway),
            );
          }
          // A gateway's answer is a blip or an outage, not the row's: the row is tried again,
          // after the outage when one has begun (the gate holds its request until then). A 503
          // is left to the throttle's pause, which also tries it again.
          if (
            isGatewayAnswer(error) &&
            !(error instanceof ApiError && error.status === 503) &&
            answers < MAX_GATEWAY_ANSWERS_PER_ROW
          ) {
            gateway = error;
            continue;
          }
          return this.failures.failure(row, error, attempt);
        }
      }
    };
    await this.drive(task, this.notDone(rows));
  }

  /**
   * An operation at risk: each row's `sending` record is on disk before it is sent, and a row whose
   * answer was lost is settled before anything else is sent for it.
   */
  async runAtRisk(
    client: ServiceClient,
    input: BulkInput<RowOf>,
    risk: AtRisk<RowOf>,
  ): Promise<void> {
    // A row in doubt that its spec sends again on --resume (the same values set twice) is not
    // read back: it is sent with the rows not sent yet.
    const resent = (row: RowOf) => risk.resendOnResume?.(row) === true;
    const toSettle = (row: RowOf) => this.plan.settle.has(row.row) && !resent(row);
    // --resume: rows whose request may have happened unseen are settled before anything else.
    if (this.plan.settle.size > 0 && (await some(filterRows(input.batches(), toSettle)))) {
      await this.settler.waitForEarlierRequests();
      if (this.stopper.stopping) return;
      const settleTask = async (row: RowOf): Promise<Attempt<BulkRecord>> => {
        this.writer.knownRowSecrets(row);
        return done(await this.settler.settle(client, row, risk, risk.unanswered));
      };
      await this.drive(settleTask, filterRows(input.batches(), toSettle));
      if (this.stopper.stopping) return;
    }
    const task = (row: RowOf, attempt: number): Promise<Attempt<BulkRecord>> =>
      this.sendAtRisk(client, row, risk, attempt);
    const toSend =
      this.plan.settle.size === 0
        ? this.notDone(input.batches())
        : filterRows(this.notDone(input.batches()), (row) => !toSettle(row));
    if (this.file === undefined) throw new Error('a bulk run at risk runs with --output only');
    await this.drive(task, toSend);
  }

  /** One request of a row whose `sending` record is on disk. */
  private async sendAtRisk(
    client: ServiceClient,
    row: RowOf,
    risk: AtRisk<RowOf>,
    attempt: number,
  ): Promise<Attempt<BulkRecord>> {
    this.writer.knownRowSecrets(row);
    // The row's `sending` record is fsynced right before its first request, not journaled ahead:
    // a kill leaves at most --concurrency rows to settle (a throttled row waiting to be retried
    // holds a place, since no new row starts while one waits). Overlapping rows share one fsync.
    if (attempt === 1) {
      try {
        await this.file?.markSending([this.writer.record(row, 'sending')]);
      } catch (error) {
        if (this.file?.failed === undefined) throw error;
        this.stopper.stop('disk');
        return done(
          this.writer.record(row, 'skipped', {
            error: 'not sent: the results file could not be written',
          }),
        );
      }
    }
    try {
      return done(this.writer.answered(row, await this.opts.spec.send(client, row), false));
    } catch (error) {
      // Its `sending` record is on disk, but the request never went out: the record says so.
      if (error instanceof RequestNotSent) return done(this.failures.notSent(row));
      // A gateway's answer (a 502/504) may hide a rotation committed behind it: the row is
      // settled by reading its group back, never sent again blind; during an outage that read
      // waits until the service answers again.
      if (error instanceof OutcomeUnknownError) {
        // Not read back, and not sent again unasked: `--resume` sends it again.
        if (risk.resendOnResume?.(row) === true) {
          return done(
            this.writer.record(row, 'unknown', {
              error: `${error.message}; ${risk.resendNote ?? ''}`,
            }),
          );
        }
        return done(await this.settler.settle(client, row, risk, error.message));
      }
      if (risk.spent(error) && risk.unsettleable(row) === undefined) {
        return done(
          await this.settler.settleSpent(client, row, risk, error, this.plan.sent.has(row.row)),
        );
      }
      return this.failures.failure(row, error, attempt);
    }
  }

  private async drive(task: Task, rows: AsyncIterable<readonly RowOf[]>): Promise<void> {
    const scheduler = new Scheduler<RowOf, BulkRecord>(task, {
      concurrency: this.opts.concurrency,
      pacer: this.pacing.pacer,
      signal: this.stopper.signal,
      clock: this.clock,
      // While the service is unavailable no row starts: the probe alone finds out when it is back.
      held: () => this.pacing.gate.whenOpen(),
    });
    this.scheduler = scheduler;
    for await (const records of scheduler.runBatches(rows)) {
      this.writer.write(records);
      // A reader or a disk slower than the service: no more rows are started (so no more
      // records pile up in memory) until what was written has gone out.
      await this.writer.drained();
    }
    this.scheduler = undefined;
  }

  /** Rows an earlier run finished are not sent again. */
  private notDone<R extends RowOf>(rows: AsyncIterable<R[]>): AsyncIterable<R[]> {
    if (this.plan.done.size === 0) return rows;
    return filterRows(rows, (row) => !this.plan.done.has(row.row));
  }

  async skipRest(rows: AsyncIterable<RowOf>): Promise<void> {
    const why = this.stopper.notSentWhy();
    for await (const row of rows) {
      // A row last seen `sending`/`unknown` in an earlier run keeps that until it is settled.
      if (this.tally.isFinished(row.row) || this.plan.settle.has(row.row)) continue;
      this.writer.write([this.writer.record(row, 'skipped', { error: why })]);
    }
  }

  async finish(): Promise<void> {
    // No probe outlives the run (nor its timer the process).
    this.watch.stop();
    this.writer.flushStdout();
    this.progress.stop();
    if (this.rowLines?.shownTokens === true) {
      printNote(
        this.deps.output,
        'tokens are shown by their last 4 characters at a terminal: pass --output FILE, or pipe the output, for the whole records',
      );
    }
    // With --output-tokens last4 the file must not take a record before stdout took its token.
    await this.writer.stdoutTaken();
    if (this.writer.wholeTokensOut > 0) {
      printNote(
        this.deps.output,
        message`--output-tokens last4: the whole tokens went to stdout only (${this.opts.output ?? ''} has their last 4 and SHA-256); a group's current token can be read again with: ugs get --id <user_group_id> --name <name> --field token`,
      );
    }
    printLine(
      this.deps.output,
      this.tally.summary(
        this.clock.now() - this.started,
        this.stopper,
        this.opts.spec.risk?.settledHow,
        this.where,
      ),
    );
    await this.file?.flush();
  }

  /** The run's exit: the worst of its outcomes. */
  throwOutcome(): void {
    throwOutcome({ opts: this.opts, file: this.file, tally: this.tally, stop: this.stopper });
  }

  private progressState(): ProgressState {
    const outage = this.watch.outageState();
    return {
      done: this.tally.done,
      total: this.progress.total,
      counts: this.tally.counts,
      elapsedMs: this.clock.now() - this.started,
      waitingMs: this.scheduler?.state().waitingMs ?? 0,
      ...(this.pacing.pacer !== undefined && { minMsPerRow: this.pacing.pacer.intervalMs }),
      ...(this.settler.waitUntil !== undefined && {
        inFlightWaitMs: Math.max(0, this.settler.waitUntil - this.clock.now()),
      }),
      ...(outage !== undefined && {
        unavailable: { since: timeOfDay(outage.sinceEpochMs), retryInMs: outage.nextProbeInMs },
      }),
    };
  }
}

type Task = (row: RowOf, attempt: number) => Promise<Attempt<BulkRecord>>;

async function* filterRows<R>(
  batches: AsyncIterable<readonly R[]>,
  keep: (row: R) => boolean,
): AsyncGenerator<R[]> {
  for await (const batch of batches) {
    const kept = batch.filter(keep);
    if (kept.length > 0) yield kept;
  }
}

/** Whether the batches hold a row (only the first batch is read). */
async function some<R>(batches: AsyncIterable<readonly R[]>): Promise<boolean> {
  for await (const batch of batches) if (batch.length > 0) return true;
  return false;
}
