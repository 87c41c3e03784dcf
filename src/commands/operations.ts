/**
 * The one registry of operations: one line per operation folder, pairing its descriptor (data:
 * `operations/<op>/operation.ts`) with its route, its bulk spec and the commands that use it.
 * Everything else is made from it: the client's methods (`client.<name>(input)`, typed by
 * `client.ts`), the emulator's routes, the commands of `ugs` (`commands/index.ts` adds those that
 * are not operations), which commands change data, the words that lead to a command, and the
 * test fakes. Generic code reads the descriptors' facts here and never asks which operation it
 * runs.
 *
 * It lives with the commands because it names them: nothing below the commands imports a
 * command (the service, the emulator and bulk runs are handed the operations they run, and the
 * client's type comes from `client.ts`), so there is no cycle.
 */
import type { Command } from 'commander';
import type { BulkSpec } from '../bulk/spec.js';
import type { DepsFactory } from '../cli/shared.js';
import type { EmulatorOnlyRoute, ServedOperations } from '../emulator/handler.js';
import type { Route } from '../emulator/route.js';
import { deleteCommand } from '../operations/delete-user-group/command.js';
import { deleteUserGroup } from '../operations/delete-user-group/operation.js';
import type { OperationFacts } from '../operations/descriptor.js';
import { jwtCommand } from '../operations/generate-jwt/command.js';
import { generateJwt } from '../operations/generate-jwt/operation.js';
import { showCommand } from '../operations/get-customer/command.js';
import { getCustomer } from '../operations/get-customer/operation.js';
import { getCommand } from '../operations/get-user/command.js';
import { getUser } from '../operations/get-user/operation.js';
import { listCommand } from '../operations/list-customers/command.js';
import { listCustomers } from '../operations/list-customers/operation.js';
import { rotateCommand } from '../operations/rotate-token/command.js';
import { rotateToken } from '../operations/rotate-token/operation.js';
import { updateCommand } from '../operations/update-user-group/command.js';
import { updateUserGroup } from '../operations/update-user-group/operation.js';
import type { OperationName, ServiceClient, ServiceOperations } from '../service/client.js';
import type { Dialect } from '../service/dialect.js';
import { type Wires, wireOf, writesData } from '../service/operation.js';
import { probe } from '../service/probe.js';
import type { ServiceResult } from '../service/user-group.js';

/** A command builder, as `commands/index.ts` takes it: the factory, and for tests a `run`. */
type CommandBuilder = (makeDeps: DepsFactory, run?: never) => Command;

/**
 * What an operation's folder registers: its descriptor, its route in the emulator and its bulk
 * spec (each loaded on first use: only `ugs serve` runs a route, only `--from` a spec), and the
 * commands that use it, by name (if any).
 */
export interface Entry<Op> {
  operation: Op & Pick<OperationFacts<never, never>, 'fields' | 'changesData'>;
  route?: () => Promise<{ route: Route }>;
  // biome-ignore lint/suspicious/noExplicitAny: any operation's rows; the commands pass their own
  bulk?: () => Promise<{ spec: BulkSpec<any> }>;
  commands?: Readonly<Record<string, CommandBuilder>>;
}

export const registry = {
  getUser: {
    operation: getUser,
    route: () => import('../operations/get-user/route.js'),
    bulk: () => import('../operations/get-user/bulk.js'),
    commands: { get: getCommand },
  },
  rotateToken: {
    operation: rotateToken,
    route: () => import('../operations/rotate-token/route.js'),
    bulk: () => import('../operations/rotate-token/bulk.js'),
    commands: { rotate: rotateCommand },
  },
  // The Customer API's read-one: `show` (get --must-exist and rotate --id use it too).
  getCustomer: {
    operation: getCustomer,
    route: () => import('../operations/get-customer/route.js'),
    commands: { show: showCommand },
  },
  listCustomers: {
    operation: listCustomers,
    route: () => import('../operations/list-customers/route.js'),
    commands: { list: listCommand },
  },
  // The vendor's update (explo and customer dialects): `update`.
  updateUserGroup: {
    operation: updateUserGroup,
    route: () => import('../operations/update-user-group/route.js'),
    bulk: () => import('../operations/update-user-group/bulk.js'),
    commands: { update: updateCommand },
  },
  // The vendor's delete (explo and customer dialects): `delete`.
  deleteUserGroup: {
    operation: deleteUserGroup,
    route: () => import('../operations/delete-user-group/route.js'),
    bulk: () => import('../operations/delete-user-group/bulk.js'),
    commands: { delete: deleteCommand },
  },
  // The Customer API's embed JWT: `jwt --via-api` (`jwt` alone mints locally, src/jwt/).
  generateJwt: {
    operation: generateJwt,
    route: () => import('../operations/generate-jwt/route.js'),
    commands: { jwt: jwtCommand },
  },
  // Doctor's probe: no command of its own (doctor runs it), no route (get's answers it).
  probe: { operation: probe },
} satisfies { [Name in OperationName]: Entry<ServiceOperations[Name]> };

/** An entry as the generic code reads it: the facts of any operation, whatever its input. */
interface AnyEntry extends Omit<Entry<unknown>, 'operation'> {
  operation: Omit<OperationFacts<unknown, ServiceResult>, 'readsGroup'> &
    Wires & {
      readsGroup?: { input: (id: string, name: string) => unknown; createsMissing: boolean };
    };
}

/** Every entry with its name, in the registry's order. */
export const entries = Object.entries(registry) as readonly [OperationName, AnyEntry][];

/**
 * What `ugs serve` serves: each operation's wire, its route, and whether it writes (`writesData`:
 * a read-only API token is refused it before its route runs), in the registry's order.
 */
export const servedOperations: ServedOperations = Object.values(registry).map(
  (entry: Entry<ServiceOperations[OperationName]> & { route?: Entry<unknown>['route'] }) => ({
    method: entry.operation.method,
    explo: entry.operation.explo,
    customer: entry.operation.customer,
    writes: writesData(entry.operation),
    ...(entry.route !== undefined && { route: entry.route }),
  }),
);

/**
 * The emulator's own routes, which no operation of the service has: the embed JWT check that
 * plays the dashboard shown a JWT (`ugs serve`, every dialect, no API token).
 */
export const emulatorRoutes: readonly EmulatorOnlyRoute[] = [
  {
    method: 'POST',
    path: '/api/embed/check/',
    route: () => import('../operations/generate-jwt/check-route.js'),
  },
];

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

/** The operations' commands that change data (their operation's `changesData`). */
export const commandsChangingData: readonly string[] = entries.flatMap(([, entry]) =>
  entry.operation.changesData ? Object.keys(entry.commands ?? {}) : [],
);

/** Words that are no command but lead to an operation's command, with the note said along. */
export const suggestedWords: readonly {
  command: string;
  words: readonly string[];
  note: string;
}[] = entries.flatMap(([, entry]) => {
  const suggested = entry.operation.suggestedFor;
  const command = Object.keys(entry.commands ?? {})[0];
  return suggested === undefined || command === undefined ? [] : [{ command, ...suggested }];
});

/**
 * The operation that reads a user group's current state by its id (its `readsGroup`), in the
 * dialect spoken: how to ask it with a client, and what to record of it. Of two, the one that
 * creates no missing group (the Customer API's read-one) over a get-or-create. Undefined when
 * no operation of the dialect does.
 */
export interface GroupReader<Input = unknown> {
  operation: OperationFacts<Input, ServiceResult>;
  input: Input;
  /** Whether asking may create the group (a get-or-create); when not, a 404 is "none". */
  createsMissing: boolean;
  send(): Promise<ServiceResult>;
}

export function groupReader(
  client: ServiceClient,
  dialect: Dialect | undefined,
  id: string,
  name: string,
): GroupReader | undefined {
  const readers = entries.filter(
    ([, entry]) =>
      entry.operation.readsGroup !== undefined && wireOf(entry.operation, dialect) !== undefined,
  );
  const chosen =
    readers.find(([, entry]) => entry.operation.readsGroup?.createsMissing === false) ?? readers[0];
  const reads = chosen?.[1].operation.readsGroup;
  if (chosen === undefined || reads === undefined) return undefined;
  const [opName, entry] = chosen;
  const input = reads.input(id, name);
  // The client's method of this name takes this operation's input (service.ts makes one per
  // entry), and an operation that reads a group answers a group: TypeScript cannot follow
  // the name through the loop.
  const method = client[opName] as (input: unknown) => Promise<ServiceResult>;
  return {
    operation: entry.operation,
    input,
    createsMissing: reads.createsMissing,
    send: () => method.call(client, input),
  };
}

/**
 * A group that a lookup by id created by mistake (a get-or-create of a mistyped id) is deleted
 * again where the dialect has a delete (explo): `whois --check --id` reaches delete's helper
 * through the registry, as generic code reaches every operation.
 */
export {
  deleteCreatedGroup,
  deletesLookupsGroup,
} from '../operations/delete-user-group/lookup.js';
export type { OperationName, ServiceClient } from '../service/client.js';
