import type { Command } from 'commander';
import { callService, type Deps, outputFormat, resolveTarget } from '../context.js';
import { CancelledError, UsageError } from '../errors.js';
import { canPrompt, escapeControls, readStdin, writeLine } from '../io.js';
import { type OutputFormat, printResult, styleFor } from '../render.js';
import { addOutputFlags, type DepsFactory, newCommand } from './shared.js';

export interface RotateOptions {
  /** From --current-token; undefined when it is to be read from stdin or prompted for. */
  currentToken: string | undefined;
  currentTokenFromStdin: boolean;
  yes: boolean;
  format: OutputFormat;
}

interface RotateFlags {
  currentToken?: string;
  currentTokenStdin?: boolean;
  yes?: boolean;
  json?: boolean;
  field?: string;
}

export const PREVIOUS_TOKEN_WARNING =
  'The previous token may stop working at once: update every dashboard that embeds it.';

export function rotateCommand(makeDeps: DepsFactory, run = runRotate): Command {
  const command = newCommand('rotate', "Replace a user group's token with a new one", [
    'ugs rotate                                   # asks for the token, then for confirmation',
    'printenv USER_GROUP_TOKEN | ugs rotate --current-token-stdin --yes --field token',
    'ugs rotate --current-token "$OLD_TOKEN" --yes --json',
  ])
    .option(
      '--current-token <token>',
      'the user group token to replace (visible in process lists: prefer stdin)',
    )
    .option('--current-token-stdin', 'read the user group token to replace from stdin')
    .option('-y, --yes', 'rotate without asking for confirmation (required without a terminal)');
  addOutputFlags(command).action(async (flags: RotateFlags, cmd: Command) => {
    await run(parseRotateFlags(flags), makeDeps(cmd));
  });
  return command;
}

export function parseRotateFlags(flags: RotateFlags): RotateOptions {
  if (flags.currentToken !== undefined && flags.currentTokenStdin) {
    throw new UsageError('use either --current-token or --current-token-stdin, not both');
  }
  if (flags.currentToken !== undefined && flags.currentToken.trim() === '') {
    throw new UsageError('--current-token cannot be empty');
  }
  return {
    currentToken: flags.currentToken?.trim(),
    currentTokenFromStdin: flags.currentTokenStdin === true,
    yes: flags.yes === true,
    format: outputFormat(flags),
  };
}

export async function runRotate(opts: RotateOptions, deps: Deps): Promise<void> {
  const { io } = deps;
  const interactive = canPrompt(io);
  // Rotation can break live dashboards: without a person to confirm, the caller must say so.
  if (!interactive && !opts.yes) {
    throw new UsageError('--yes is required to rotate a token when not running interactively', {
      hint: 'rotation replaces the token at once; add --yes to confirm in scripts',
    });
  }
  if (!interactive && opts.currentToken === undefined && !opts.currentTokenFromStdin) {
    throw new UsageError('missing --current-token: the user group token to rotate is required', {
      hint: 'pass --current-token-stdin and pipe the token in, or --current-token <token>',
    });
  }
  const target = resolveTarget(deps);
  const currentToken = await readCurrentToken(opts, deps);
  deps.tracer.addSecret(currentToken);

  if (interactive && !opts.yes) {
    const confirmed = await deps.prompter.confirm(
      `Rotate the token ending in ...${escapeControls(currentToken.slice(-4))}? Dashboards using it may stop working.`,
      { default: false },
    );
    if (!confirmed) throw new CancelledError('rotation cancelled; nothing was sent');
  }

  const client = await deps.connect(target);
  const result = await callService(deps, opts.format, () => client.rotateToken(currentToken));
  const id = escapeControls(String(result.userGroup.provided_id ?? ''));
  if (opts.format.kind !== 'table') {
    writeLine(io.stderr, (await styleFor(io, 'stderr')).yellow(PREVIOUS_TOKEN_WARNING));
  }
  await printResult(io, {
    format: opts.format,
    body: result.body,
    userGroup: result.userGroup,
    headline: (style) => [
      style.green(`Rotated token of user group ${id}`),
      `New token: ${style.bold(escapeControls(result.userGroup.token))}`,
      style.yellow(PREVIOUS_TOKEN_WARNING),
    ],
  });
}

async function readCurrentToken(opts: RotateOptions, deps: Deps): Promise<string> {
  if (opts.currentToken !== undefined) return opts.currentToken;
  if (opts.currentTokenFromStdin) {
    const token = (await readStdin(deps.io, '--current-token-stdin')).trim();
    if (token === '') throw new UsageError('--current-token-stdin: stdin was empty');
    return token;
  }
  const token = await deps.prompter.password('Current user group token:', {
    validate: (value) => value.trim() !== '' || 'the token is required',
  });
  return token.trim();
}
