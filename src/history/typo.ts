/**
 * The typo guard: an id never seen in this profile's history that another profile's history
 * knows (the right customer, the wrong service), or that looks like
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
 * When `id` is new to this profile's history: asks "initech is known on profile staging, not on
 * prod: create it on prod (https://...)?" when another profile's history knows it (the same
 * customer on the wrong service), else "did you mean <known>? create <id>?" when it looks like a
 * known id. `action` is what a yes goes on to do with the id (`create`; a rotation by id looks
 * it up first: `rotate the token of`); `where` is the place as headlines say it
 * (` on prod (https://...)`, or ''). The caller asks only at a terminal and without `--yes`. A
 * no sends nothing; returns whether it asked.
 */
export async function confirmNewId(
  id: string,
  deps: TypoGuardDeps,
  { action = 'create', where = '' }: { action?: string; where?: string } = {},
): Promise<boolean> {
  const known = await knownIdsOf(deps, false);
  if (known?.has(id) === true) return false;
  const profile = deps.settings.profile;
  const elsewhere = await otherProfilesKnowing(deps, id);
  const similar = elsewhere.length > 0 ? undefined : known?.similar(id);
  if (elsewhere.length === 0 && similar === undefined) return false;
  const others = elsewhere.map((name) => message`${name}`).join(', ');
  // `action` is ugs's own words (not escaped); the ids and the place are escaped.
  const question =
    similar === undefined
      ? `${message`${id} is known on profile ${others}, not on ${profile}: `}${action} it${where || message` on ${profile}`}?`
      : `${message`did you mean ${similar}? `}${action} ${message`${id}`}${where}?`;
  const confirmed = await deps.prompter.confirm(question, { default: false });
  if (!confirmed) {
    throw new CancelledError(
      similar === undefined
        ? message`not sent: "${id}" is known on profile ${others}, not on ${profile}; nothing was created`
        : message`not sent: "${id}" is new here and looks like the known id "${similar}"; nothing was created`,
    );
  }
  return true;
}

/** The other profiles whose history knows `id` exactly; none when it cannot be read. */
async function otherProfilesKnowing(deps: TypoGuardDeps, id: string): Promise<string[]> {
  const location = deps.history.location;
  if (location === undefined) return [];
  const { profilesKnowing } = await import('./read.js');
  try {
    return (await profilesKnowing(location, id)).filter((name) => name !== deps.settings.profile);
  } catch {
    return [];
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
