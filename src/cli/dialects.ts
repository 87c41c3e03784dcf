/**
 * Commands of an operation that is not part of every dialect (`show`: the Customer API's
 * read-one). Its descriptor says where it has a wire (`dialectsOf`); from that alone the kit
 * says so in the command's help and refuses a run in another dialect (exit 2) before any
 * prompt or request, naming the dialects that offer it. No command name is asked about here.
 */
import type { Command } from 'commander';
import { resolveCredentials, resolveDialect } from '../context/credentials.js';
import type { Deps } from '../context/factory.js';
import { UsageError } from '../errors.js';
import { wrapText } from '../output/text.js';
import { DIALECTS, type Dialect } from '../service/dialect.js';
import { dialectsOf, type Wires } from '../service/operation.js';

/** "the customer dialect", "the explo and customer dialects". */
function dialectWords(dialects: readonly Dialect[]): string {
  const names =
    dialects.length <= 1
      ? (dialects[0] ?? 'no')
      : `${dialects.slice(0, -1).join(', ')} and ${dialects.at(-1) ?? ''}`;
  return `the ${names} dialect${dialects.length > 1 ? 's' : ''}`;
}

/** Adds "offered by the customer dialect only" to the help of a command of such an operation. */
export function offeredIn(command: Command, operation: Wires): Command {
  const dialects = dialectsOf(operation);
  if (dialects.length === DIALECTS.length) return command;
  const flags = dialects.map((dialect) => `--dialect ${dialect}`).join(' or ');
  const text = `Offered by ${dialectWords(dialects)} only (${flags}, or a profile logged in with it); in any other dialect it is a usage error and nothing is sent.`;
  // Fitted to the help's width (main sets it, at most 80 columns), as the examples are.
  return command.addHelpText('after', ({ command: shown }) => {
    const width = shown.configureHelp().helpWidth ?? 80;
    return `\n${wrapText(text, width, width)
      .map((piece) => piece.text)
      .join('\n')}\n`;
  });
}

/**
 * Refuses a run of `command` in a dialect its operation is not part of (exit 2): checked from
 * the settings and the profile alone, before the API token is read, a prompt is shown or
 * anything is sent.
 */
export function checkOffered(deps: Deps, command: string, operation: Wires): void {
  const offered = dialectsOf(operation);
  const dialect = resolveDialect(deps.settings, resolveCredentials(deps));
  if (offered.includes(dialect.value)) return;
  const from =
    dialect.source === 'flag'
      ? ` (--dialect ${dialect.value})`
      : dialect.source === 'env'
        ? ` (UGS_DIALECT=${dialect.value})`
        : dialect.source === 'profile'
          ? ' (the dialect of the profile)'
          : ' (the default)';
  throw new UsageError(
    `${command} is not part of the ${dialect.value} dialect${from}: it is offered by ${dialectWords(offered)} only; nothing was sent`,
    {
      hint: `pass ${offered.map((name) => `--dialect ${name}`).join(' or ')} (or log in with it) if the service speaks it`,
    },
  );
}
