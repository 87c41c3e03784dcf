/**
 * The one registry of operations: one line per operation folder, naming its `Operation` and the
 * commands that run it. Everything else is made from it: the client's methods
 * (`client.<name>(input)`, typed by `client.ts`), the emulator's routes, the commands of `ugs`
 * (`commands/index.ts` adds those that are not operations), and the test fakes.
 *
 * The command builders are imported here, as `commands/index.ts` imported them before: the
 * commands are built at start-up anyway, so a run loads nothing more. Nothing below the commands
 * imports this file (the client's type comes from `client.ts`), so there is no cycle.
 */
import type { Command } from 'commander';
import type { DepsFactory } from '../cli/shared.js';
import type { ServedOperations } from '../emulator/handler.js';
import type { Route } from '../emulator/route.js';
import type { OperationName, ServiceOperations } from '../service/client.js';
import { probe } from '../service/probe.js';
import { getCommand } from './get-user/command.js';
import { getUser } from './get-user/operation.js';
import { rotateCommand } from './rotate-token/command.js';
import { rotateToken } from './rotate-token/operation.js';

/** A command builder, as `commands/index.ts` takes it: the factory, and for tests a `run`. */
type CommandBuilder = (makeDeps: DepsFactory, run?: never) => Command;

/**
 * What an operation's folder registers: its operation, its route in the emulator (loaded on
 * first use: only `ugs serve` runs it), and its commands by name (if any).
 */
interface Entry<Op> {
  operation: Op;
  route?: () => Promise<{ route: Route }>;
  commands?: Readonly<Record<string, CommandBuilder>>;
}

export const registry = {
  getUser: {
    operation: getUser,
    route: () => import('./get-user/route.js'),
    commands: { get: getCommand },
  },
  rotateToken: {
    operation: rotateToken,
    route: () => import('./rotate-token/route.js'),
    commands: { rotate: rotateCommand },
  },
  // Doctor's probe: no command of its own (doctor runs it), no route (get's answers it).
  probe: { operation: probe },
} satisfies { [Name in OperationName]: Entry<ServiceOperations[Name]> };

/** What `ugs serve` serves: each operation's wire and its route, in the registry's order. */
export const servedOperations: ServedOperations = Object.values(registry).map(
  (entry: Entry<ServiceOperations[OperationName]>) => ({
    method: entry.operation.method,
    explo: entry.operation.explo,
    ...(entry.route !== undefined && { route: entry.route }),
  }),
);

/** Every operation by name, in the registry's order. */
export const operations = Object.fromEntries(
  Object.entries(registry).map(([name, entry]) => [name, entry.operation]),
) as { [Name in OperationName]: ServiceOperations[Name] };

type Registry = typeof registry;
type CommandsOf<Entry> = Entry extends { commands: infer Commands }
  ? Commands
  : Record<never, never>;
type Intersection<Union> = (Union extends unknown ? (value: Union) => void : never) extends (
  value: infer Both,
) => void
  ? Both
  : never;

/** The commands of every operation, by command name (`get`, `rotate`), in the registry's order. */
export type OperationCommands = Intersection<CommandsOf<Registry[keyof Registry]>>;

export const operationCommands = Object.assign(
  {},
  ...Object.values(registry).map((entry: Entry<unknown>) => entry.commands ?? {}),
) as OperationCommands;

export type { OperationName, ServiceClient } from '../service/client.js';
