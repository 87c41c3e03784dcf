/**
 * CI runners that read commands from a step's output: GitHub Actions (`::add-mask::`,
 * `::error::`) and Azure Pipelines (`##vso[...]`). Both parse stderr as well as stdout, so the
 * commands go to stderr and `X=$(ugs ... --field token)` stays one clean line.
 *
 * A secret must be masked BEFORE it is written anywhere: the runner masks only what it reads
 * after the mask command. Every writer of a user group token (render.ts, the bulk records) calls
 * `maskSecret` first; the mask line is written synchronously to stderr ahead of the token.
 */
import type { Writable } from 'node:stream';
import { type Env, escapeControls } from './io.js';

export type CiSystem = 'github' | 'azure';

const detected = new WeakMap<Env, CiSystem | null>();

/**
 * The runner this process runs under, read once per environment object (a bulk run asks once
 * per record). GitHub sets `GITHUB_ACTIONS=true`, Azure `TF_BUILD=True` (any case).
 */
export function detectCi(env: Env): CiSystem | undefined {
  let system = detected.get(env);
  if (system === undefined) {
    system =
      env.GITHUB_ACTIONS === 'true'
        ? 'github'
        : env.TF_BUILD?.toLowerCase() === 'true'
          ? 'azure'
          : null;
    detected.set(env, system);
  }
  return system ?? undefined;
}

/**
 * GitHub's workflow-command data: the runner unescapes `%25`, `%0D`, `%0A` (actions/toolkit
 * `escapeData`), so a value can neither end the command line nor start a new command.
 */
export function escapeGithubData(text: string): string {
  return text.replace(/%/g, '%25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** A property value (`title=...`): `:` would end the properties, `,` start the next one. */
export function escapeGithubProperty(text: string): string {
  return escapeGithubData(text).replace(/:/g, '%3A').replace(/,/g, '%2C');
}

/** Azure's logging-command data (azure-pipelines-task-lib `escapedata`). */
export function escapeAzureData(text: string): string {
  return text.replace(/%/g, '%AZP25').replace(/\r/g, '%0D').replace(/\n/g, '%0A');
}

/** The command that makes the runner replace `value` by `***` in the log from now on. */
export function maskCommand(system: CiSystem, value: string): string {
  return system === 'github'
    ? `::add-mask::${escapeGithubData(value)}`
    : `##vso[task.setsecret]${escapeAzureData(value)}`;
}

/** An error annotation on the run's summary page (GitHub) or timeline (Azure). */
export function errorCommand(system: CiSystem, message: string, title = 'ugs'): string {
  return system === 'github'
    ? `::error title=${escapeGithubProperty(title)}::${escapeGithubData(message)}`
    : // Azure has no title: ugs's name leads the text; no value from outside goes in a property.
      `##vso[task.logissue type=error]${escapeAzureData(`${title}: ${message}`)}`;
}

/** Values already masked on a stream: one mask line per secret is enough. */
const masked = new WeakMap<Writable, Set<string>>();

/**
 * Under a CI runner, registers `value` as a secret before it is written anywhere. The forms ugs
 * writes it in are masked too: a value with control characters is printed `\u`-escaped (tables,
 * `--field`) or JSON-escaped (records), and the runner matches the text it reads, not the value.
 * Outside a CI runner this does nothing.
 */
export function maskSecret(
  io: { env: Env; stderr: Writable },
  value: string | null | undefined,
): void {
  if (value === null || value === undefined || value.trim() === '') return;
  const system = detectCi(io.env);
  if (system === undefined) return;
  let seen = masked.get(io.stderr);
  if (seen === undefined) {
    seen = new Set();
    masked.set(io.stderr, seen);
  }
  const forms = new Set([value, escapeControls(value), JSON.stringify(value).slice(1, -1)]);
  let lines = '';
  for (const form of forms) {
    if (seen.has(form) || form.trim() === '') continue;
    seen.add(form);
    lines += `${maskCommand(system, form)}\n`;
  }
  if (lines !== '') io.stderr.write(lines);
}

/** Keys whose string values are tokens (`token`, `current_token`, `previous_tokens`, ...). */
const TOKEN_KEY = /token/i;

/**
 * Every string under a token-named key anywhere in `value` (arrays under such a key included),
 * walked with an explicit stack: an answer may nest 100,000 levels deep. Text with whitespace is
 * a message, not a token: DRF answers `{"current_token": ["This field may not be blank."]}`, and
 * masking that would hide the reason of a failure from the log.
 */
export function tokensIn(value: unknown): string[] {
  const found: string[] = [];
  const stack: { value: unknown; secret: boolean }[] = [{ value, secret: false }];
  for (let item = stack.pop(); item !== undefined; item = stack.pop()) {
    const current = item.value;
    if (typeof current === 'string') {
      if (item.secret && !/\s/.test(current)) found.push(current);
    } else if (Array.isArray(current)) {
      for (const element of current) stack.push({ value: element, secret: item.secret });
    } else if (typeof current === 'object' && current !== null) {
      for (const [key, member] of Object.entries(current)) {
        stack.push({ value: member, secret: TOKEN_KEY.test(key) });
      }
    }
  }
  return found;
}

/** Masks every token in `value` (a response body, a record) ahead of printing it. */
export function maskTokensIn(io: { env: Env; stderr: Writable }, value: unknown): void {
  if (detectCi(io.env) === undefined) return;
  for (const token of tokensIn(value)) maskSecret(io, token);
}
