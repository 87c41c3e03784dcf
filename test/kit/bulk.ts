/** The bulk specs of the operations, by command, for tests of the bulk engine. */
import type { ByteSource, InputFormat } from '../../src/bulk/input.js';
import { openBulkInput, type RowCheck } from '../../src/bulk/validate.js';
import { type GetRow, spec as getSpec } from '../../src/operations/get-user/bulk.js';
import { type RotateRow, spec as rotateSpec } from '../../src/operations/rotate-token/bulk.js';

export type { GetRow, RotateRow };

export const bulkSpecs = { get: getSpec, rotate: rotateSpec } as const;

export function openGetInput(source: ByteSource, format: InputFormat, check?: RowCheck) {
  return openBulkInput(source, format, getSpec.rows, check);
}

export function openRotateInput(source: ByteSource, format: InputFormat, check?: RowCheck) {
  return openBulkInput(source, format, rotateSpec.rows, check);
}
