/** The bulk specs of the operations, by command, for tests of the bulk engine. */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { InputFormat } from '../../src/bulk/input.js';
import type { ByteSource } from '../../src/bulk/input-source.js';
import type { BulkOptions } from '../../src/bulk/run.js';
import { openBulkInput, type RowCheck } from '../../src/bulk/validate.js';
import { type GetRow, spec as getSpec } from '../../src/operations/get-user/bulk.js';
import { type RotateRow, spec as rotateSpec } from '../../src/operations/rotate-token/bulk.js';
import {
  holdsChanges,
  type UpdateRow,
  spec as updateSpec,
} from '../../src/operations/update-user-group/bulk.js';

export type { GetRow, RotateRow, UpdateRow };
export { holdsChanges };

export const bulkSpecs = { get: getSpec, rotate: rotateSpec, update: updateSpec } as const;

export function openGetInput(source: ByteSource, format: InputFormat, check?: RowCheck) {
  return openBulkInput(source, format, getSpec.rows, check);
}

export function openUpdateInput(source: ByteSource, format: InputFormat, check?: RowCheck) {
  return openBulkInput(source, format, updateSpec.rows, check);
}

export function openRotateInput(source: ByteSource, format: InputFormat, check?: RowCheck) {
  return openBulkInput(source, format, rotateSpec.rows, check);
}

/** Options of a bulk run as the commands build them: NDJSON unless `from` ends in `.csv`. */
export function bulkOptions(
  kind: 'get' | 'rotate',
  from: string,
  output: string | undefined,
  extra: Partial<BulkOptions> = {},
): BulkOptions {
  return {
    spec: bulkSpecs[kind],
    from,
    format: from.endsWith('.csv') ? 'csv' : 'ndjson',
    concurrency: 2,
    output,
    resume: false,
    yes: true,
    ...extra,
  };
}

/** Every record of an NDJSON results file, in the order written. */
export function readRecords<R>(path: string): R[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as R);
}

/**
 * Waits until a results file being written by a running `--from` holds more than `count` records
 * of `status` and, with `sending`, at least that many rows whose last record is `sending` (a
 * kill then finds requests on their way). Gives up after about 10 s: the test's own checks then
 * say what was missing.
 */
export async function untilResults(
  path: string,
  want: { status: string; count: number; sending?: number },
): Promise<void> {
  const sendingNow = () =>
    [...lastByRow(readRecords<{ row: number; status: string }>(path)).values()].filter(
      (rec) => rec.status === 'sending',
    ).length;
  for (let i = 0; i < 1000; i++) {
    if (
      existsSync(path) &&
      readFileSync(path, 'utf8').split(`"${want.status}"`).length > want.count &&
      (want.sending === undefined || sendingNow() >= want.sending)
    ) {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The last record of each row: its outcome. */
export function lastByRow<R extends { row: number }>(records: readonly R[]): Map<number, R> {
  const last = new Map<number, R>();
  for (const record of records) last.set(record.row, record);
  return last;
}

/**
 * An NDJSON input of `count` rows in `dir`: groups `g-0`… for get, tokens `tok-0-…` for rotate
 * (no id or name, so nothing can be settled by reading back).
 */
export function bulkRowsFile(dir: string, kind: 'get' | 'rotate', count: number): string {
  const path = join(dir, `${kind}-rows.ndjson`);
  writeFileSync(
    path,
    Array.from({ length: count }, (_, i) =>
      JSON.stringify(
        kind === 'get'
          ? { user_group_id: `g-${i}`, name: `G ${i}` }
          : { current_token: `tok-${i}-0123456789` },
      ),
    ).join('\n'),
  );
  return path;
}
