/**
 * What an operation is, as data: the service's `Operation` (how it goes on the wire in each
 * dialect, how its answer is read) and the facts the generic code reads instead of asking which
 * operation it runs: its request's fields, whether it changes what exists, how its requests
 * become token history events, and what people may type meaning its command. Each operation's
 * folder declares one in its `operation.ts`; the registry (`commands/operations.ts`) pairs it
 * with the commands that use it.
 */
import type { HistoryRecording } from '../history/record.js';
import type { Operation } from '../service/operation.js';
import type { ServiceResult } from '../service/user-group.js';

export interface OperationFacts<Input, Result> {
  /** The fields of its request body, as the service names them. */
  fields: readonly string[];
  /**
   * Whether it changes or removes something that exists (a rotation): a mistyped command is
   * never answered with its command when one that changes nothing is as close. Get-or-create
   * only adds what is missing, which is what a person typing `create` asks for: it does not.
   * Whether a read-only API token may call it is the wider `writes` (`service/operation.ts`),
   * which follows this fact unless the operation says otherwise (a get-or-create writes).
   */
  changesData: boolean;
  /** How its requests become token history events; absent: it writes none. */
  history?: HistoryRecording<Input, Result>;
  /**
   * Words that are no command but mean this operation's command (`create` for a get-or-create),
   * and the note said with the suggestion.
   */
  suggestedFor?: { words: readonly string[]; note: string };
  /**
   * For an operation that reads a user group's current state by its id: its input for that
   * (`whois --check` asks it whether a token is still the group's), and whether it creates a
   * group the service does not know (a get-or-create does; a read-one answers 404). Where a
   * dialect has both, the one that creates nothing is asked.
   */
  readsGroup?: { input: (id: string, name: string) => Input; createsMissing: boolean };
}

/** An operation and its facts: what `operation.ts` exports. */
export type OperationDescriptor<Input, Result = ServiceResult> = Operation<Input, Result> &
  OperationFacts<Input, Result>;
