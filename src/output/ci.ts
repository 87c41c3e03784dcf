/**
 * CI runners that read commands from a step's output: GitHub Actions (`::add-mask::`,
 * `::error::`) and Azure Pipelines (`##vso[...]`). Both parse stderr as well as stdout, so the
 * commands go to stderr and `X=$(ugs ... --field token)` stays one clean line.
 *
 * A secret must be masked BEFORE it is written anywhere: the runner masks only what it reads
 * after the mask command. Every writer of a user group token (output/results.ts, the bulk
 * records) calls `maskSecret` first; the mask line is written synchronously to stderr ahead of
 * the token.
 */
import type { Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { type Env, escapeControls } from '../platform/io.js';

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
 * Whether this process runs under a runner that obeys workflow commands in its output: either
 * variable, whichever system the commands themselves are written for. Any value but empty,
 * `false` or `0` counts: escaping a marker where no runner reads it costs a `\u0023`, missing one
 * where a runner does gives the text's author a command.
 */
export function underCiRunner(env: Env): boolean {
  const on = (value: string | undefined) =>
    value !== undefined && value !== '' && !/^(false|0)$/i.test(value);
  return on(env.GITHUB_ACTIONS) || on(env.TF_BUILD);
}

/**
 * The first `#` of `##[` (GitHub's older commands) and of `##vso[` (Azure), found anywhere in a
 * line. Case-insensitive: what a runner matches exactly costs nothing to escape in any case.
 */
const MARKER_HASH = /#(?=#(?:vso)?\[)/gi;

/** The start of a marker cut off at the end of a chunk (`#`, `##`, `##v`, `##vs`, `##vso`). */
const PARTIAL_MARKER_AT_END = /#(?:#(?:v(?:s(?:o)?)?)?)?$/i;

/**
 * What a runner trims before looking for `::` at the start of a line (.NET `TrimStart`: Unicode
 * white space, U+0085 included).
 */
const LEADING_SPACE = /[\s\u0085]/;

/**
 * The runners' markers escaped in `\u` style, as ugs writes control characters: `\u0023` for the
 * first `#` of `##[`/`##vso[`, `\u003a` for the first `:` of a `::` that starts a line (after
 * white space). Inside a JSON string both are JSON escapes of the same character, and JSON puts
 * neither `#` nor a leading `:` outside strings: `--json` stays valid and means the same.
 * `atLineStart`: the text begins a line (a `--field` value, a whole message).
 */
export function escapeCiMarkers(text: string, atLineStart = true): string {
  const guard = new MarkerGuard();
  if (!atLineStart) guard.lineHasText = true;
  return guard.escape(text, true);
}

/** Whether `text`, written from the start of a line, would carry a marker a runner obeys. */
export function hasCiMarker(text: string): boolean {
  return escapeCiMarkers(text) !== text;
}

/** Line state of one output stream, so a marker split across two writes is still found. */
class MarkerGuard {
  /** Something other than white space has been written on the current line. */
  lineHasText = false;

  /** `chunk` with its markers escaped; not `final`: a marker's start at its end is escaped too. */
  escape(chunk: string, final: boolean): string {
    let text = chunk.replace(MARKER_HASH, '\\u0023');
    if (!final) {
      const partial = PARTIAL_MARKER_AT_END.exec(text);
      if (partial !== null) {
        text = `${text.slice(0, partial.index)}\\u0023${text.slice(partial.index + 1)}`;
      }
    }
    let out = '';
    let from = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i] as string;
      if (c === '\n' || c === '\r') {
        this.lineHasText = false;
        continue;
      }
      if (this.lineHasText || LEADING_SPACE.test(c)) continue;
      this.lineHasText = true;
      // `::` starts the line, or `:` ends the chunk and the next write may bring the second.
      const next = text[i + 1];
      if (c === ':' && (next === ':' || (next === undefined && !final))) {
        out += `${text.slice(from, i)}\\u003a`;
        from = i + 1;
      }
    }
    return from === 0 ? text : out + text.slice(from);
  }
}

interface GuardedStream {
  guard: MarkerGuard;
  /** The stream's own `write`, for ugs's own workflow commands. */
  write: (text: string) => boolean;
  decoder: StringDecoder;
}

const guardedStreams = new WeakMap<Writable, GuardedStream>();

type WriteCallback = (error?: Error | null) => void;

/**
 * Under a CI runner, every write to `stream` has the runners' markers escaped (escapeCiMarkers),
 * whatever wrote it: tables, `--json`, bulk records, messages, `--debug` traces, commander's own
 * errors, the emulator's access log. The one way around it is `writeCiCommand`, for the commands
 * ugs means to give. The stream's `write` is replaced in place, so everything else about it (its
 * events, `drain`, write callbacks, what `flushOutput` waits for) is the stream's own, and a
 * write still reaches the stream at once, in order with the other stream's (a mask line on stderr
 * must come before the token on stdout).
 */
export function guardCiOutput(stream: Writable): void {
  if (guardedStreams.has(stream)) return;
  const original = stream.write.bind(stream) as (
    chunk: string,
    encoding: BufferEncoding,
    callback?: WriteCallback,
  ) => boolean;
  const state: GuardedStream = {
    guard: new MarkerGuard(),
    write: (text) => original(text, 'utf8'),
    decoder: new StringDecoder('utf8'),
  };
  guardedStreams.set(stream, state);
  const guarded = (
    chunk: unknown,
    encodingOrCallback?: BufferEncoding | WriteCallback,
    callback?: WriteCallback,
  ): boolean => {
    const encoding = typeof encodingOrCallback === 'string' ? encodingOrCallback : undefined;
    const done = typeof encodingOrCallback === 'function' ? encodingOrCallback : callback;
    let text: string;
    if (typeof chunk === 'string' && (encoding === undefined || /^utf-?8$/i.test(encoding))) {
      // A multi-byte character cut by an earlier Buffer write is given up, not kept for later.
      text = state.decoder.end() + chunk;
    } else if (typeof chunk === 'string') {
      text = state.decoder.write(Buffer.from(chunk, encoding));
    } else if (chunk instanceof Uint8Array) {
      text = state.decoder.write(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    } else {
      return original(chunk as string, 'utf8', done);
    }
    return original(state.guard.escape(text, false), 'utf8', done);
  };
  stream.write = guarded as Writable['write'];
}

/**
 * One of ugs's own workflow commands (a mask, an annotation), written past the guard: on a line
 * of its own (a runner reads `::` only at the start of one), its outside values escaped by the
 * caller (`maskCommand`, `errorCommand`).
 */
export function writeCiCommand(stream: Writable, line: string): void {
  const state = guardedStreams.get(stream);
  if (state === undefined) {
    stream.write(`${line}\n`);
    return;
  }
  const text = `${state.guard.lineHasText ? '\n' : ''}${line}\n`;
  state.guard.lineHasText = false;
  state.write(text);
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

/**
 * The command that makes the runner replace `value` by `***` in the log from now on. Its data
 * carries no marker either (a token is text from a server): escaped after the runner's own
 * escapes, when it is one line.
 */
export function maskCommand(system: CiSystem, value: string): string {
  return system === 'github'
    ? `::add-mask::${escapeCiMarkers(escapeGithubData(value), false)}`
    : `##vso[task.setsecret]${escapeCiMarkers(escapeAzureData(value), false)}`;
}

/** An error annotation on the run's summary page (GitHub) or timeline (Azure). */
export function errorCommand(system: CiSystem, message: string, title = 'ugs'): string {
  // The message carries server and argv text: no marker of its own, even after ours.
  return system === 'github'
    ? `::error title=${escapeGithubProperty(title)}::${escapeCiMarkers(escapeGithubData(message), false)}`
    : // Azure has no title: ugs's name leads the text; no value from outside goes in a property.
      `##vso[task.logissue type=error]${escapeCiMarkers(escapeAzureData(`${title}: ${message}`), false)}`;
}

/** Mask commands already written on a stream: one per secret and form is enough. */
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
  // Each form also as the output guard lets it through: a marker in a token is printed escaped.
  const forms = [value, escapeControls(value), JSON.stringify(value).slice(1, -1)].flatMap(
    (form) => [form, escapeCiMarkers(form, false)],
  );
  let lines = '';
  for (const form of forms) {
    if (form.trim() === '') continue;
    const command = maskCommand(system, form);
    if (seen.has(command)) continue;
    seen.add(command);
    lines += `${lines === '' ? '' : '\n'}${command}`;
  }
  if (lines !== '') writeCiCommand(io.stderr, lines);
}

/**
 * Keys whose string values are tokens (`token`, `current_token`, `previous_tokens`, ...), and
 * embed JWTs (`jwt`), which open a dashboard as a token does.
 */
const TOKEN_KEY = /token|jwt/i;

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
