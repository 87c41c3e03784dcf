import type { Deps } from '../context/factory.js';
import { ApiError, AuthError, NetworkError, OutcomeUnknownError, UgsError } from '../errors.js';
import { printLine, printNote } from '../output/messages.js';
import type { ServiceClient } from '../service/client.js';
import { retryAfterMs } from '../transport/http.js';
import { lockResultsFile, type ResultFile } from './journal.js';
import { type BulkHooks, type BulkOptions, type Pacing, resumeHint } from './options.js';
import { FIRST_PROBE_MS, OUTAGE_LIMIT_MS, Outage, type OutageInfo } from './outage.js';
import { messageOf, throwOutcome } from './outcome.js';
import { prepareRun, type RunParts, type RunPlan } from './prepare.js';
import { formatDuration, type ProgressState, rowsText } from './progress.js';
import { ProgressLine, realEvery } from './progress-line.js';
import { epochMs, RecordWriter } from './record-writer.js';
import type { BulkRecord } from './records.js';
import type { ResumePlan } from './resume.js';
import type { RowLines } from './row-lines.js';
import {
  type Attempt,
  BULK_MAX_RETRY_AFTER_MS,
  type Clock,
  DEFAULT_GIVE_UP_AFTER_MS,
  RequestNotSent,
  realClock,
  Scheduler,
} from './scheduler.js';
import type { AtRisk, BulkRow, Settled } from './spec.js';
import { RunStop } from './stop.js';
import { Tally } from './tally.js';
import type { BulkInput } from './validate.js';

/** Tries of one row that the service throttled (429/503) before the row is given up as failed. */
const MAX_THROTTLED_ATTEMPTS = 20;
/**
 * Rounds of "read the token, rotate again" for one row; then one final read decides (`failed` when
 * the token is unchanged, `rotated` when not), and only a failing read leaves it `unknown`.
 */
const MAX_SETTLE_ROUNDS = 3;
/**
 * Requests in a row answered by a gateway saying the service is not there (502, 503 or 504, or an
 * HTML error page), with no success between, before the run pauses and probes the service
 * (outage.ts), stopping as for a service that is down (exit 4) only if it does not come back.
 * Each is counted after its own retries (a Get User tries 3 times), so at most 18 HTTP answers
 * before the pause: a down service costs a few dozen requests and a few probes, not three per
 * row. A 503 with Retry-After is the service pacing the run, as a 429 is: the run waits instead
 * (and `--give-up-after` ends it).
 */
export const UNAVAILABLE_STREAK = 6;
/**
 * Gateway answers one row may get before it is `failed` as before: a row is tried again after
 * one (the run may be pausing for an outage meanwhile), so a blip costs no row, but a row that a
 * gateway refuses every time while the others go through does not hold the run forever.
 */
const MAX_GATEWAY_ANSWERS_PER_ROW = UNAVAILABLE_STREAK;

export type { BulkHooks, BulkOptions } from './options.js';

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
    const client = run.tracked(await connecting);
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
  /** Runs of gateway answers saying the service is not there: the pause and its probes. */
  private readonly outage: Outage;
  /** The client as connected, for the outage's probe (which is no row's success). */
  private client: ServiceClient | undefined;
  /** When a request last succeeded (or the run started): `--give-up-after` counts from here. */
  private lastSuccess: number;
  private readonly giveUpAfterMs: number;
  private readonly outageLimitMs: number;
  private readonly clock: Clock;
  private readonly progress: ProgressLine;
  private readonly writer: RecordWriter;
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
    this.lastSuccess = this.started;
    this.giveUpAfterMs = opts.giveUpAfterMs ?? DEFAULT_GIVE_UP_AFTER_MS;
    this.outageLimitMs = hooks.outageLimitMs ?? OUTAGE_LIMIT_MS;
    this.outage = new Outage({
      gate: pacing.gate,
      clock: this.clock,
      streak: UNAVAILABLE_STREAK,
      deadline: (since) => this.outageDeadline(since),
      probe: () => this.probe(),
      began: (info) => this.outageBegan(info),
      ended: (info) => this.outageEnded(info),
      gaveUp: (info) => this.outageGaveUp(info),
    });
    // No request starts after a stop, even one whose slot was due: a row waiting for it is
    // `skipped` (not sent), a rotation in doubt stays to be settled by --resume.
    this.stopper.onStop(() => pacing.gate.stop());
    this.stopper.onStop(() => this.outage.stop());
    this.progress = new ProgressLine(
      deps.output,
      () => this.progressState(),
      this.tally.total,
      hooks.every ?? realEvery,
      () => this.outage.state() !== undefined,
    );
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
    if (alreadyDone > 0) {
      printNote(
        deps.output,
        `--resume: ${rowsText(alreadyDone)} ${alreadyDone === 1 ? 'is' : 'are'} done already and ${alreadyDone === 1 ? 'is' : 'are'} not sent again`,
      );
    }
  }

  /**
   * The client, noting every request that succeeds (for `--give-up-after`) and every answer from
   * a gateway saying the service is not there (UNAVAILABLE_STREAK of them pause the run: outage.ts).
   */
  tracked(client: ServiceClient): ServiceClient {
    this.client = client;
    const succeeded = <T>(result: T): T => {
      this.lastSuccess = this.clock.now();
      this.outage.succeeded();
      return result;
    };
    const failed = (error: unknown): never => {
      if (isGatewayAnswer(error)) this.outage.gatewayAnswer(error);
      throw error;
    };
    const { gate } = this.pacing;
    // Every method of the client, whatever operations it has: bulk imports no operation registry
    // (the registry imports the commands, which load bulk).
    // (A proxy of an empty object: the client's own methods may be read-only, which a proxy of
    // the client itself would have to return unchanged.)
    // Each method wrapped once, not at every row's call.
    const wrapped = new Map<PropertyKey, unknown>();
    return new Proxy({} as ServiceClient, {
      get(_empty, name) {
        const value: unknown = Reflect.get(client, name);
        if (typeof value !== 'function') return value;
        let method = wrapped.get(name);
        if (method !== undefined) return method;
        const call = (input: never) =>
          (value as (input: never) => Promise<unknown>).call(client, input).then(succeeded, failed);
        // Every request of the run, a row's first try, a retry or a settling read, passes the
        // gate: its slot in the one schedule, the end of an outage, and none once the run stops
        // (RequestNotSent). An open gate without a schedule costs a row nothing more.
        method = (input: never) =>
          gate.passable ? call(input) : gate.admit().then(() => call(input));
        wrapped.set(name, method);
        return method;
      },
    });
  }

  /**
   * The outage's probe. Not a row's request sent again: a rotation answered by a gateway may have
   * been committed behind it, and is only ever settled by reading its group back (exactly once),
   * never resent blind; and a Get User creates the group it names. The probe is doctor's: the
   * API path with an empty body, which the service refuses (400) for its missing fields after
   * checking the token, and which changes nothing. Any answer below 500 (400, 401/403, a 429)
   * is the service itself answering: the rows meet what it says. It is sent on the client as
   * connected, so its answer never counts as a row's success or failure.
   */
  private async probe(): Promise<boolean> {
    const client = this.client;
    if (client === undefined) return false;
    const answer = await client.probe();
    return answer.status < 500;
  }

  private outageBegan(info: OutageInfo): void {
    this.progress.erase();
    printNote(
      this.deps.output,
      `the service is unavailable (${UNAVAILABLE_STREAK} requests in a row were answered by a gateway, the last: ${info.last.message}): no new row starts until it answers again; checking in ${formatDuration(FIRST_PROBE_MS)}, then at growing intervals, for up to ${formatDuration(Math.max(0, this.outageDeadline(info.since) - info.since))}`,
    );
    this.progress.changed();
  }

  private outageEnded(info: OutageInfo): void {
    this.progress.erase();
    printNote(
      this.deps.output,
      `the service answers again after ${formatDuration(this.clock.now() - info.since)}: the run carries on`,
    );
    this.progress.changed();
  }

  /** Two minutes of an unavailable service, or `--give-up-after` if that comes first. */
  private outageDeadline(since: number): number {
    return Math.min(since + this.outageLimitMs, this.lastSuccess + this.giveUpAfterMs);
  }

  /** The service stayed unavailable until the deadline: the run stops (exit 4), for `--resume`. */
  private outageGaveUp(info: OutageInfo): void {
    const probes = `${info.probes} ${info.probes === 1 ? 'probe' : 'probes'}`;
    this.stopper.stop(
      'network',
      new NetworkError(
        `the service is unavailable: ${UNAVAILABLE_STREAK} requests in a row were answered by a gateway (HTTP 502, 503, 504 or an HTML error page) since ${timeOfDay(info.sinceEpochMs)}, and ${probes} over ${formatDuration(this.clock.now() - info.since)} did not get through; the rows not sent were skipped (the last answer: ${info.last.message})`,
        { hint: `${resumeHint(this.opts)} once the service is back` },
      ),
    );
  }

  /** ms left before `--give-up-after` ends the run; 0 or less: time is up. */
  private giveUpLeft(): number {
    return this.giveUpAfterMs - (this.clock.now() - this.lastSuccess);
  }

  /**
   * No request has succeeded for `--give-up-after`: the run stops as for a service that is down
   * (exit 4), the row that was being tried is failed and the rest skipped, for `--resume`.
   */
  private giveUp(row: RowOf, error: ApiError): Attempt<BulkRecord> {
    this.stopper.stop(
      'network',
      new NetworkError(
        `gave up: no request has succeeded for ${formatDuration(this.giveUpAfterMs)} (the last answer: ${error.message})`,
        {
          hint: `${resumeHint(this.opts)}; --give-up-after <duration> sets how long to keep trying (default 10m)`,
        },
      ),
    );
    return done(
      this.writer.record(row, 'failed', {
        error: error.message,
        http_status: error.status ?? null,
      }),
    );
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
              gateway === undefined ? this.notSent(row) : this.failedRecord(row, gateway),
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
          return this.failure(row, error, attempt);
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
      if (error instanceof RequestNotSent) return done(this.notSent(row));
      // A gateway's answer (a 502/504) may hide a rotation committed behind it: the row is
      // settled by reading its group back, never sent again blind; during an outage that read
      // waits until the service answers again.
      if (error instanceof OutcomeUnknownError) {
        return done(await this.settle(client, row, risk, error.message));
      }
      if (risk.spent(error) && risk.unsettleable(row) === undefined) {
        return done(await this.settleSpent(client, row, risk, error, this.plan.sent.has(row.row)));
      }
      return this.failure(row, error, attempt);
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
          const attempt = this.failure(row, error, MAX_THROTTLED_ATTEMPTS);
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

  /** A row whose request never went out because the run stopped. */
  private notSent(row: RowOf): BulkRecord {
    return this.writer.record(row, 'skipped', { error: this.stopper.notSentWhy() });
  }

  /** A row's last failure, kept when the run stopped before its next try went out. */
  private failedRecord(row: RowOf, error: UgsError): BulkRecord {
    return this.writer.record(row, 'failed', {
      error: error.message,
      http_status: error instanceof ApiError ? (error.status ?? null) : null,
    });
  }

  /** What a failed try means for the row and for the run. */
  private failure(row: RowOf, error: unknown, attempt: number): Attempt<BulkRecord> {
    if (error instanceof ApiError && (error.status === 429 || error.status === 503)) {
      if (attempt < MAX_THROTTLED_ATTEMPTS && !this.stopper.stopping) {
        const left = this.giveUpLeft();
        if (left <= 0) return this.giveUp(row, error);
        // The wait never runs past the moment the run gives up.
        const asked = retryAfterMs(error.retryAfter, Date.now(), BULK_MAX_RETRY_AFTER_MS);
        // No Retry-After: the dialect's wait (the vendor's window is a minute), else the back-off.
        const fallback = this.pacing.throttleWaitMs;
        const wait =
          asked !== undefined
            ? Math.min(asked, left)
            : fallback !== undefined
              ? Math.min(fallback, left)
              : left < 1000
                ? left
                : undefined;
        return { kind: 'throttled', retryAfterMs: wait };
      }
    }
    // A service failing every request (5xx after the transport's retries) is down too.
    if (
      error instanceof ApiError &&
      (error.status ?? 0) >= 500 &&
      !this.stopper.stopping &&
      this.giveUpLeft() <= 0
    ) {
      return this.giveUp(row, error);
    }
    if (error instanceof AuthError) this.stopper.stop('auth', error, row.row);
    else if (error instanceof NetworkError) this.stopper.stop('network', error);
    else if (!(error instanceof ApiError)) throw error;
    const status = error instanceof ApiError ? (error.status ?? null) : null;
    return done(
      this.writer.record(row, 'failed', {
        error: error.message,
        http_status: error instanceof AuthError ? (error.status ?? null) : status,
      }),
    );
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
    this.outage.stop();
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
    const outage = this.outage.state();
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

/**
 * An answer from a gateway saying the service is not there (502/503/504, an HTML error page),
 * after the request's own retries. A 503 with Retry-After is the service pacing the run, as a
 * 429 is: not counted (the run waits for it instead).
 */
function isGatewayAnswer(error: unknown): error is UgsError {
  if (!(error instanceof UgsError) || !error.unavailable) return false;
  return !(error instanceof ApiError && error.status === 503 && error.retryAfter !== undefined);
}

/** `14:02:07`, local time: when a person at the terminal saw the service go. */
function timeOfDay(epochMs: number): string {
  const at = new Date(epochMs);
  return [at.getHours(), at.getMinutes(), at.getSeconds()]
    .map((part) => String(part).padStart(2, '0'))
    .join(':');
}

function done(result: BulkRecord): Attempt<BulkRecord> {
  return { kind: 'done', result };
}

async function* filterRows<R>(
  batches: AsyncIterable<readonly R[]>,
  keep: (row: R) => boolean,
): AsyncGenerator<R[]> {
  for await (const batch of batches) {
    const kept = batch.filter(keep);
    if (kept.length > 0) yield kept;
  }
}
