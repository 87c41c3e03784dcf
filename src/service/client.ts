/**
 * The service client's type: one method per operation, named after it and typed by it. Each
 * operation's folder adds itself to `ServiceOperations` (a module augmentation in its
 * `operation.ts`), so this file names no operation: the factory, the commands and bulk take the
 * client's type from here without importing the registry (`index.ts`), which imports the
 * commands. The registry is checked against this interface, so an operation declared here but
 * not registered (or the reverse) is a type error.
 */
import type { Operation } from './operation.js';

/** Every operation by name; each folder's `operation.ts` adds its own entry. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by module augmentation, one entry per operation folder
export interface ServiceOperations {}

export type OperationName = keyof ServiceOperations;

type InputOf<T> = T extends Operation<infer Input, unknown> ? Input : never;
type ResultOf<T> = T extends Operation<never, infer Result> ? Result : never;

export type ServiceClient = {
  [Name in OperationName]: (
    input: InputOf<ServiceOperations[Name]>,
  ) => Promise<ResultOf<ServiceOperations[Name]>>;
};
