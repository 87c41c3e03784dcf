/**
 * `--dry-run` of a bulk run: the input validated as for a real run (the same notes and refusals),
 * and each row's request built as the client would put it on the wire in the run's dialect, then
 * shown instead of sent. No API token is read, no HTTP stack loaded, no connection made, no
 * results file written and no question asked: a rehearsal of a run that cannot be taken back (a
 * get-or-create leaves an existing group as it is, so a column dropped cannot be added later).
 */
import type { Deps } from '../context/factory.js';
import { isPlainObject } from '../platform/guards.js';
import { writeLine } from '../platform/io.js';
import { fingerprint } from '../text/redact.js';
import type { HttpRequest, HttpResponse } from '../transport/http.js';
import type { BulkOptions } from './options.js';
import { prepareRun } from './prepare.js';
import { rowsText } from './progress.js';
import type { BulkRow, BulkSpec } from './spec.js';

/** Thrown by the dry run's transport with the request it was handed: nothing goes further. */
class Captured extends Error {
  constructor(readonly request: HttpRequest) {
    super('a dry run sends nothing');
  }
}

const capture = (request: HttpRequest): Promise<HttpResponse> =>
  Promise.reject(new Captured(request));

/** How many names of keys the summary lists per object field. */
const MAX_KEYS_SHOWN = 10;

export async function runDryRun(opts: BulkOptions, deps: Deps): Promise<void> {
  const { plan, input, connecting } = await prepareRun(opts, deps, {}, { capture });
  const client = await connecting;
  const spec = plan.opts.spec;
  const summary = new Summary();
  for await (const batch of input.batches()) {
    for (const row of batch) {
      if (plan.resume.done.has(row.row)) {
        summary.done++;
        continue;
      }
      const request = await requestOf(spec, client, row);
      const body = redacted(bodyOf(request), spec.secrets(row));
      const settle = plan.resume.settle.has(row.row);
      if (settle) summary.settle++;
      if (opts.json === true) {
        // The outcome of a get (created or found) only the service can tell: what is known is
        // what would be sent.
        const line = { row: row.row, would_send: body, ...(settle && { read_back_first: true }) };
        writeLine(deps.output.stdout, JSON.stringify(line));
      } else summary.add(request, body);
    }
  }
  if (opts.json === true) return;
  for (const line of summary.lines(spec, input, plan.opts.from, plan.where)) {
    writeLine(deps.output.stdout, line);
  }
}

/** The request the row's `send` makes, as the client hands it to the transport. */
async function requestOf(
  spec: BulkSpec,
  client: Awaited<ReturnType<Deps['connect']>>,
  row: BulkRow,
): Promise<HttpRequest> {
  try {
    await spec.send(client, row);
  } catch (error) {
    if (error instanceof Captured) return error.request;
    throw error;
  }
  throw new Error('a dry run sent a request past its capture');
}

/** A JSON body as an object; a query operation's parameters (it has no body). */
function bodyOf(request: HttpRequest): unknown {
  if (request.body === '') return Object.fromEntries(request.url.searchParams);
  return JSON.parse(request.body) as unknown;
}

/** Every string that is one of the row's secrets (a current token) as its last 4 characters. */
function redacted(value: unknown, secrets: readonly string[]): unknown {
  if (secrets.length === 0) return value;
  if (typeof value === 'string') return secrets.includes(value) ? fingerprint(value) : value;
  if (Array.isArray(value)) return value.map((item) => redacted(item, secrets));
  if (isPlainObject(value)) {
    return Object.fromEntries(
      Object.entries(value).map(([key, entry]) => [key, redacted(entry, secrets)]),
    );
  }
  return value;
}

/** What the rows would send, counted for a person: requests, fields and their keys. */
class Summary {
  done = 0;
  settle = 0;
  private sent = 0;
  private request: string | undefined;
  private readonly fields = new Map<string, { rows: number; keys: Set<string> }>();

  add(request: HttpRequest, body: unknown): void {
    this.sent++;
    this.request ??= `${request.method} ${request.url.pathname}`;
    if (!isPlainObject(body)) return;
    for (const [field, value] of Object.entries(body)) {
      let seen = this.fields.get(field);
      if (seen === undefined) {
        seen = { rows: 0, keys: new Set() };
        this.fields.set(field, seen);
      }
      seen.rows++;
      if (isPlainObject(value)) for (const key of Object.keys(value)) seen.keys.add(key);
    }
  }

  lines(
    spec: BulkSpec,
    input: { blankRows: number; ignoredColumns: string[] },
    from: string,
    where: string,
  ): string[] {
    const noun = spec.risk?.noun;
    const requests =
      noun === undefined
        ? rowsText(this.sent)
        : `${this.sent} ${this.sent === 1 ? noun.one : noun.many}`;
    const lines = [
      `Dry run of ${spec.records.command} --from ${from}${where}: nothing was sent.`,
      `  would send      ${requests}${this.request === undefined ? '' : ` (${this.request} each)`}${spec.dryRunNote === undefined ? '' : `; ${spec.dryRunNote}`}`,
    ];
    if (this.fields.size > 0) {
      const fields = [...this.fields].map(([field, { rows, keys }]) => {
        const names = [...keys];
        const shown = names.slice(0, MAX_KEYS_SHOWN).join(', ');
        const more = names.length > MAX_KEYS_SHOWN ? `, ${names.length - MAX_KEYS_SHOWN} more` : '';
        return `${field} ${rows}${names.length > 0 ? ` (keys: ${shown}${more})` : ''}`;
      });
      lines.push(`  fields sent     ${fields.join(', ')}`);
    }
    lines.push(
      `  columns ignored ${input.ignoredColumns.length === 0 ? 'none' : `${input.ignoredColumns.join(', ')} (see the note above)`}`,
    );
    if (this.settle > 0) {
      lines.push(
        `  read back first ${rowsText(this.settle)} (--resume: an earlier run sent them without an answer)`,
      );
    }
    if (this.done > 0) lines.push(`  done already    ${rowsText(this.done)} (--resume: not sent)`);
    if (input.blankRows > 0)
      lines.push(`  skipped         ${rowsText(input.blankRows)} left blank`);
    return lines;
  }
}
