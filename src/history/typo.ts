/**
 * The typo guard: an id never seen in this profile's history that looks like
 * a known one (case, accents, surrounding punctuation, or a couple of edits) is probably a typo,
 * and a `get` with it would create a tenant the service cannot delete. At a terminal `get` asks
 * first; bulk `get` names such rows in a `note:` and sends them. The history's reading code is
 * loaded only here, when there is a question to ask (read.ts).
 */
import { CancelledError } from '../errors.js';
import type { Prompter } from '../input/prompter.js';
import { printNote } from '../output/messages.js';
import type { Output } from '../output/output.js';
import { message } from '../text/message.js';
import type { HistoryLog } from './log.js';
import type { KnownIds } from './read.js';

/** What the guard needs of a run's dependencies (a command's `Deps` has all of it). */
export interface TypoGuardDeps {
  settings: { profile: string };
  history: Pick<HistoryLog, 'location'>;
  prompter: Pick<Prompter, 'confirm'>;
  output: Output;
}

/** Known ids of the run's profile; none when there is no history or it cannot be read. */
async function knownIdsOf(deps: TypoGuardDeps, bulk: boolean): Promise<KnownIds | undefined> {
  const location = deps.history.location;
  if (location === undefined) return undefined;
  const { BULK_EDIT_BUDGET, BULK_KNOWN_IDS, loadKnownIds } = await import('./read.js');
  try {
    return await loadKnownIds(
      location,
      deps.settings.profile,
      bulk ? BULK_EDIT_BUDGET : undefined,
      bulk ? BULK_KNOWN_IDS : undefined,
    );
  } catch {
    // A history that cannot be read guards nothing; its writer warns about it after the get.
    return undefined;
  }
}

/**
 * Asks "did you mean <known>? create <id>?" when `id` is new to this profile's history and looks
 * like a known id. The caller asks only at a terminal and without `--yes`. A no sends nothing.
 * `action` is what a yes goes on to do with the id (a rotation by id looks it up first).
 */
export async function confirmNewId(
  id: string,
  deps: TypoGuardDeps,
  action = 'create',
): Promise<void> {
  const known = await knownIdsOf(deps, false);
  const similar = known?.similar(id);
  if (similar === undefined) return;
  const confirmed = await deps.prompter.confirm(
    message`did you mean ${similar}? ${action} ${id}?`,
    {
      default: false,
    },
  );
  if (!confirmed) {
    throw new CancelledError(
      message`not sent: "${id}" is new here and looks like the known id "${similar}"; nothing was created`,
    );
  }
}

/** Rows of a bulk get whose new id looks like a known one, for one `note:` after validation. */
export interface LookalikeRows {
  check(row: { row: number; user_group_id?: string | undefined }): void;
  report(): void;
}

const SHOWN = 10;

export async function lookalikeRows(deps: TypoGuardDeps): Promise<LookalikeRows | undefined> {
  const known = await knownIdsOf(deps, true);
  if (known === undefined || known.size === 0) return undefined;
  const found: { row: number; id: string; similar: string }[] = [];
  let total = 0;
  return {
    check(row) {
      const id = row.user_group_id;
      if (id === undefined) return;
      const similar = known.similar(id);
      if (similar === undefined) return;
      total++;
      if (found.length < SHOWN) found.push({ row: row.row, id, similar });
    },
    report() {
      if (total === 0) return;
      const rows = found
        .map((item) => message`${item.row} ("${item.id}", known: "${item.similar}")`)
        .join(', ');
      const more = total > found.length ? `, and ${total - found.length} more` : '';
      printNote(
        deps.output,
        message`${total} ${total === 1 ? 'id is' : 'ids are'} new to profile "${deps.settings.profile}"'s history but ${total === 1 ? 'looks' : 'look'} like a known id (a typo creates a new group): ${total === 1 ? 'row' : 'rows'} ${rows}${more}; they are sent as they are`,
      );
    },
  };
}
