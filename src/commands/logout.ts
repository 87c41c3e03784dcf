import type { Command } from 'commander';
import type { Deps } from '../deps.js';
import { escapeControls } from '../io.js';
import { quote } from '../parse.js';
import { printLine } from '../render.js';
import { type DepsFactory, newCommand } from './shared.js';

export function logoutCommand(makeDeps: DepsFactory, run = runLogout): Command {
  return newCommand('logout', "Remove a profile's saved API token (its base URL is kept)", [
    'ugs logout',
    'ugs logout --profile staging',
  ]).action(async (_flags: unknown, cmd: Command) => {
    await run(makeDeps(cmd));
  });
}

export async function runLogout(deps: Deps): Promise<void> {
  const { io, settings, config } = deps;
  const profile = config.readProfile(settings.profile);
  if (profile?.apiToken === undefined) {
    printLine(io, `Profile ${quote(settings.profile)} has no saved API token; nothing to remove.`);
  } else {
    await config.updateProfile(settings.profile, (current) => {
      const { apiToken: _removed, ...rest } = current ?? {};
      return rest;
    });
    printLine(
      io,
      `Removed the API token of profile ${quote(settings.profile)} from ${escapeControls(config.path)}`,
    );
  }
  if (io.env.UGS_API_TOKEN) {
    printLine(io, 'note: UGS_API_TOKEN is still set in this environment and will be used');
  }
}
