import type { Deps } from '../context/factory.js';
import { ApiError, AuthError, OutcomeUnknownError, type UgsError } from '../errors.js';
import { printLine, printNote } from '../output/messages.js';
import type { ServiceClient } from '../service/client.js';
import { done, FailurePolicy, MAX_THROTTLED_ATTEMPTS } from './failure-policy.js';
import { lockResultsFile, type ResultFile } from './journal.js';
import type { BulkHooks, BulkOptions, Pacing } from './options.js';
import { OUTAGE_LIMIT_MS } from './outage.js';
import { messageOf, throwOutcome } from './outcome.js';
import { prepareRun, type RunParts, type RunPlan } from './prepare.js';
import { formatDuration, type ProgressState, rowsText } from './progress.js';
import { ProgressLine, realEvery } from './progress-line.js';
import { epochMs, RecordWriter } from './record-writer.js';
import type { BulkRecord } from './records.js';
import type { ResumePlan } from './resume.js';
import type { RowLines } from './row-lines.js';
import { type Attempt, type Clock, RequestNotSent, realClock, Scheduler } from './scheduler.js';
import {
  isGatewayAnswer,
  MAX_GATEWAY_ANSWERS_PER_ROW,
  ServiceWatch,
  timeOfDay,
} from './service-watch.js';
import type { AtRisk, BulkRow, Settled } from './spec.js';
import { RunStop } from './stop.js';
import { Tally } from './tally.js';
import type { BulkInput } from './validate.js';

/**
 * Rounds of "read the token, rotate again" for one row; then one final read decides (`failed` when
 * the token is unchanged, `rotated` when not), and only a failing read leaves it `unknown`.
 */
const MAX_SETTLE_ROUNDS = 3;

export type { BulkHooks, BulkOptions } from './options.js';
export { UNAVAILABLE_STREAK } from './service-watch.js';

export async function runBulk(opts: BulkOptions, deps: Deps, hooks: BulkHooks = {}): Promise<void> {
  if (opts.output === undefined) return runUnlocked(opts, deps, hooks);
  // One run per results file (journal.ts): held from before the file is first read.
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
  const risk = opts.spec.risk;
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
  private scheduler: Scheduler<RowOf, BulkRecord> | undefined;
  /** While `--resume` waits out an earlier run's requests (clock.now() when the wait ends). */
  private settleWaitUntil: number | undefined;

  private readonly opts: BulkOptions;
  private readonly deps: Deps;
  private readonly file: ResultFile | undefined;
  private readonly plan: ResumePlan;
  private readonly pacing: Pacing;
  /** One line per row at a terminal: the note on tokens shown by their last characters. */
  private readonly rowLines: RowLines | undefined;

  constructor(run: RunPlan, parts: RunParts, hooks: BulkHooks) {
    const { opts, input, resume: plan, alreadyDone } = run;
    const { deps, file, pacing } = parts;
    this.opts = opts;
    this.deps = deps;
    this.file = file;
    this.plan = plan;
    this.pacing = pacing;
    this.rowLines = parts.rowLines;
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
      () => this.progressState(),
      this.tally.total,
      hooks.every ?? realEvery,
      () => this.watch.outageState() !== undefined,
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
    });
    this.failures = new FailurePolicy({
      opts,
      writer: this.writer,
      stopper: this.stopper,
      watch: this.watch,
      throttleWaitMs: pacing.throttleWaitMs,
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
    // --resume: rows whose request may have happened unseen are settled before anything else.
    if (this.plan.settle.size > 0) {
      await this.waitForEarlierRequests();
      if (this.stopper.stopping) return;
      const settleTask = async (row: RowOf): Promise<Attempt<BulkRecord>> => {
        this.writer.knownRowSecrets(row);
        return done(await this.settle(client, row, risk, risk.unanswered));
      };
      await this.drive(
        settleTask,
        filterRows(input.batches(), (row) => this.plan.settle.has(row.row)),
      );
      if (this.stopper.stopping) return;
    }
    const task = (row: RowOf, attempt: number): Promise<Attempt<BulkRecord>> =>
      this.sendAtRisk(client, row, risk, attempt);
    const toSend =
      this.plan.settle.size === 0
        ? this.notDone(input.batches())
        : filterRows(this.notDone(input.batches()), (row) => !this.plan.settle.has(row.row));
    if (this.file === undefined) throw new Error('a bulk run at risk runs with --output only');
    await this.drive(task, toSend);
  }

  /**
   * A request of a killed run may still be on its way or being processed: reading the group back
   * before it ends would see the old token, and a retry would then be refused (404) once it lands.
   * So rows to settle whose last `sending` record is younger than the request timeout are read
   * back only once that time has passed since the record was written (its `at`). Rows this run
   * sent itself need no wait: the run saw its own request end. A record without a time (a file
   * of an earlier version) cannot say, and is not waited for.
   */
  private async waitForEarlierRequests(): Promise<void> {
    let latest = Number.NEGATIVE_INFINITY;
    for (const row of this.plan.settle.keys()) {
      const at = this.plan.sentAt.get(row);
      if (at !== undefined && at > latest) latest = at;
    }
    const waitMs = latest + this.deps.settings.timeoutMs - epochMs(this.clock);
    if (!(waitMs > 0)) return;
    this.settleWaitUntil = this.clock.now() + waitMs;
    printNote(
      this.deps.output,
      `--resume: waiting ${formatDuration(waitMs)} before checking the rows an earlier run sent, so no request of that run is still in flight (--timeout)`,
    );
    this.progress.changed();
    try {
      await this.clock.sleep(waitMs, this.stopper.signal);
    } finally {
      this.settleWaitUntil = undefined;
    }
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
        return done(await this.settle(client, row, risk, error.message));
      }
      if (risk.spent(error) && risk.unsettleable(row) === undefined) {
        return done(await this.settleSpent(client, row, risk, error, this.plan.sent.has(row.row)));
      }
      return this.failures.failure(row, error, attempt);
    }
  }

  /**
   * Did the row's request happen? Reading the state back says (the spec's `settle`): when it did
   * not, the row is sent once more (its last record is then `sending` again, so a crash meanwhile
   * is settled the same way by --resume).
   */
  private async settle(
    client: ServiceClient,
    row: RowOf,
    risk: AtRisk<RowOf>,
    why: string,
  ): Promise<BulkRecord> {
    const cannot = risk.unsettleable(row);
    if (cannot !== undefined)
      return this.writer.record(row, 'unknown', { error: `${why}; ${cannot}` });
    let lastWhy = why;
    for (let round = 0; round < MAX_SETTLE_ROUNDS; round++) {
      let settled: Settled;
      try {
        settled = await this.readBack(client, row, risk);
      } catch (error) {
        if (error instanceof RequestNotSent) return this.notReadBack(row, lastWhy);
        if (error instanceof AuthError) {
          this.stopper.stop('auth', error, row.row);
          return this.unreadable(row, lastWhy, error);
        }
        // One read failed: the final read below decides (or names this cause when it fails too).
        break;
      }
      if (settled.kind === 'unknown') {
        return this.writer.record(row, 'unknown', { error: `${lastWhy}; ${settled.why}` });
      }
      if (settled.kind === 'happened') return this.writer.answered(row, settled.result, true);
      // Not done: sending it once more cannot make it happen twice.
      if (this.stopper.stopping) {
        return this.writer.record(row, 'skipped', {
          error: 'not rotated (checked); the run stopped before rotating it again',
        });
      }
      try {
        await this.file?.markSending([this.writer.record(row, 'sending')]);
      } catch (error) {
        if (this.file?.failed === undefined) throw error;
        return this.writer.record(row, 'skipped', {
          error: 'not rotated (checked); the results file could not be written to rotate it again',
        });
      }
      try {
        return this.writer.answered(row, await this.opts.spec.send(client, row), false);
      } catch (error) {
        if (error instanceof RequestNotSent) {
          return this.writer.record(row, 'skipped', {
            error: 'not rotated (checked); the run stopped before rotating it again',
          });
        }
        // Refused as spent after an earlier try of this run: that try did it, unseen.
        if (risk.spent(error)) return this.settleSpent(client, row, risk, error, true);
        if (!(error instanceof OutcomeUnknownError)) {
          const attempt = this.failures.failure(row, error, MAX_THROTTLED_ATTEMPTS);
          return attempt.kind === 'done' ? attempt.result : this.writer.record(row, 'failed');
        }
        lastWhy = error.message;
      }
    }
    return this.finalReadBack(client, row, risk, lastWhy);
  }

  /**
   * The retries are spent: one last read of the state decides, so a row ends in a fact. An
   * unchanged token is `failed` (nothing happened, exit 1); a changed one `rotated`. The row
   * stays `unknown` (exit 5) only when this read fails too, and its record says why.
   */
  private async finalReadBack(
    client: ServiceClient,
    row: RowOf,
    risk: AtRisk<RowOf>,
    lastWhy: string,
  ): Promise<BulkRecord> {
    let settled: Settled;
    try {
      settled = await this.readBack(client, row, risk);
    } catch (error) {
      if (error instanceof RequestNotSent) return this.notReadBack(row, lastWhy);
      if (error instanceof AuthError) this.stopper.stop('auth', error, row.row);
      return this.unreadable(row, lastWhy, error);
    }
    if (settled.kind === 'happened') return this.writer.answered(row, settled.result, true);
    if (settled.kind === 'unknown') {
      return this.writer.record(row, 'unknown', { error: `${lastWhy}; ${settled.why}` });
    }
    return this.writer.record(row, 'failed', {
      error: `not rotated (checked): the last try ended "${lastWhy}", and reading the group back still finds the row's token`,
    });
  }

  /**
   * The service refused the row as spent (a 404: it does not know the token). Reading the state
   * back says what that means: another token after an earlier `sending` record of the row (a
   * killed or retried run, or an earlier try) is that request having happened, unseen: the row
   * is done, settled. Without one, ugs did not do it: `stale`, with the current state recorded.
   */
  private async settleSpent(
    client: ServiceClient,
    row: RowOf,
    risk: AtRisk<RowOf>,
    error: unknown,
    sentBefore: boolean,
  ): Promise<BulkRecord> {
    const refused = error instanceof ApiError ? error : undefined;
    const failed = (why: string) =>
      this.writer.record(row, 'failed', {
        error: `${messageOf(error)}; ${why}`,
        http_status: refused?.status ?? null,
      });
    let settled: Settled;
    try {
      settled = await this.readBack(client, row, risk);
    } catch (readError) {
      if (readError instanceof RequestNotSent) {
        return failed('the run stopped before the group was read back');
      }
      if (readError instanceof AuthError) this.stopper.stop('auth', readError, row.row);
      return failed(`reading the group's token failed: ${messageOf(readError)}`);
    }
    if (settled.kind === 'unknown') return failed(settled.why);
    if (settled.kind === 'not-happened') {
      return failed("reading the group back still finds the row's token");
    }
    if (sentBefore) return this.writer.answered(row, settled.result, true);
    const {
      status: _done,
      settled_by: _by,
      ...fields
    } = this.opts.spec.outcome(row, settled.result, true);
    return this.writer.record(row, 'stale', {
      ...fields,
      error: `${messageOf(error)}; ${risk.stale}`,
      http_status: refused?.status ?? null,
    });
  }

  /** Reading the state back failed: whether the request happened is not known. */
  private unreadable(row: RowOf, lastWhy: string, error: unknown): BulkRecord {
    return this.writer.record(row, 'unknown', {
      error: `${lastWhy}; reading the group's token failed: ${messageOf(error)}`,
    });
  }

  /** The run stopped before the group was read back: `--resume` settles the row. */
  private notReadBack(row: RowOf, lastWhy: string): BulkRecord {
    return this.writer.record(row, 'unknown', {
      error: `${lastWhy}; the run stopped before the group was read back`,
    });
  }

  /**
   * The spec's read of the state. A read is safe to repeat: one answered by a gateway is read
   * again (after the outage, when one has begun) rather than leaving the row unknown.
   */
  private async readBack(client: ServiceClient, row: RowOf, risk: AtRisk<RowOf>): Promise<Settled> {
    for (let answers = 1; ; answers++) {
      try {
        return await risk.settle(client, row);
      } catch (error) {
        if (!isGatewayAnswer(error) || answers >= MAX_GATEWAY_ANSWERS_PER_ROW) throw error;
      }
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
    printLine(this.deps.output, this.tally.summary(this.clock.now() - this.started, this.stopper));
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
      ...(this.settleWaitUntil !== undefined && {
        inFlightWaitMs: Math.max(0, this.settleWaitUntil - this.clock.now()),
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
