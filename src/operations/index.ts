/**
 * Every operation of the service. A client has one method per entry, named after it and typed by
 * it: an operation added here is callable as `client.<name>(input)` with nothing else to wire.
 */
import { getUser } from './get-user/operation.js';
import type { Operation } from './operation.js';
import { probe } from './probe/operation.js';
import { rotateToken } from './rotate-token/operation.js';

export const operations = { getUser, rotateToken, probe };

export type OperationName = keyof typeof operations;

type InputOf<T> = T extends Operation<infer Input, unknown> ? Input : never;
type ResultOf<T> = T extends Operation<never, infer Result> ? Result : never;

export type ServiceClient = {
  [Name in OperationName]: (
    input: InputOf<(typeof operations)[Name]>,
  ) => Promise<ResultOf<(typeof operations)[Name]>>;
};
