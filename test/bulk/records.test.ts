import {
  appendFileSync,
  chmodSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type AppendFs, nodeAppendFs } from '../../src/bulk/append-fs.js';
import { ResultFile } from '../../src/bulk/journal.js';
import {
  type BulkRecord,
  guardCell,
  isDone,
  loadCsvStringify,
  ndjsonLine,
  needsSettling,
  outputFormatFor,
  unguardCell,
} from '../../src/bulk/records.js';
import { planResume, readResumeState } from '../../src/bulk/resume.js';
import { UsageError } from '../../src/errors.js';
import { parseSync } from '../../src/vendor/csv.js';
import { bulkSpecs } from '../kit/bulk.js';

const dir = mkdtempSync(join(tmpdir(), 'ugs-bulk-records-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
/** The user running the tests, who owns every file they make. */
const uid = process.getuid?.();
const fresh = (ext: string) => join(dir, `out-${++n}.${ext}`);

function rotated(row: number, extra: Partial<BulkRecord> = {}): BulkRecord {
  return {
    row,
    user_group_id: `id${row}`,
    name: `Name ${row}`,
    status: 'rotated',
    token: `new-token-${row}`,
    team_id: 100 + row,
    api_environment_tag: 'Customer',
    error: null,
    http_status: 200,
    ...extra,
  };
}

function created(row: number, extra: Partial<BulkRecord> = {}): BulkRecord {
  return {
    row,
    user_group_id: `id${row}`,
    name: `Name ${row}`,
    status: 'created',
    token: `tok-${row}`,
    team_id: row,
    new_user_group: true,
    error: null,
    http_status: 200,
    ...extra,
  };
}

const sending = (row: number): BulkRecord => ({
  row,
  user_group_id: `id${row}`,
  name: null,
  status: 'sending',
  token: null,
  team_id: null,
  error: null,
  http_status: null,
});

describe('record statuses and formats', () => {
  it('knows which outcomes are done and which need settling', () => {
    expect(['created', 'found', 'rotated'].every((s) => isDone(s as BulkRecord['status']))).toBe(
      true,
    );
    expect(isDone('failed') || isDone('unknown') || isDone('skipped') || isDone('sending')).toBe(
      false,
    );
    expect(needsSettling('sending') && needsSettling('unknown')).toBe(true);
    expect(needsSettling('failed') || needsSettling('rotated')).toBe(false);
  });

  it('takes the output format from the extension', () => {
    expect(outputFormatFor('r.ndjson')).toBe('ndjson');
    expect(outputFormatFor('r.JSONL')).toBe('ndjson');
    expect(outputFormatFor('r.csv')).toBe('csv');
    expect(() => outputFormatFor('r.json')).toThrow(UsageError);
  });

  it('writes NDJSON in column order, with new_user_group for get and the tag for rotate', () => {
    expect(ndjsonLine(created(1), bulkSpecs.get.records)).toBe(
      '{"row":1,"user_group_id":"id1","name":"Name 1","status":"created","token":"tok-1","team_id":1,"new_user_group":true,"error":null,"http_status":200}\n',
    );
    expect(ndjsonLine(rotated(2), bulkSpecs.rotate.records)).toBe(
      '{"row":2,"user_group_id":"id2","name":"Name 2","status":"rotated","token":"new-token-2","team_id":102,"api_environment_tag":"Customer","error":null,"http_status":200}\n',
    );
    const { api_environment_tag: _, ...untagged } = rotated(3);
    expect(ndjsonLine(untagged, bulkSpecs.rotate.records)).not.toContain('api_environment_tag');
  });

  it('escapes C1 controls and line separators in NDJSON, keeping the same JSON', () => {
    const record = rotated(1, { error: 'bad \u009b31m \u2028 \u001b[0m' });
    const line = ndjsonLine(record, bulkSpecs.rotate.records);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
    expect(line).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028]/);
    expect(JSON.parse(line).error).toBe(record.error);
  });
});

describe('CSV formula guard', () => {
  it.each([
    ['=HYPERLINK("http://x")', '\'=HYPERLINK("http://x")'],
    ['+1', "'+1"],
    ['-2+3', "'-2+3"],
    ['@SUM(A1)', "'@SUM(A1)"],
    ["'quoted", "''quoted"],
    ['Acme', 'Acme'],
    ['a=b', 'a=b'],
    ['x;=1+1', "x;'=1+1"],
    ['Acme;=HYPERLINK("http://x")', 'Acme;\'=HYPERLINK("http://x")'],
    ['=a;+b;c', "'=a;'+b;c"],
    ['a;"=1"', 'a;\'"=1"'],
    ["a;'b", "a;''b"],
    ['a\t@b', "a\t'@b"],
    ['"quoted";x', '"quoted";x'],
    ['a;;', 'a;;'],
  ])('writes %j as %j and reads it back unchanged', (value, cell) => {
    expect(guardCell(value)).toBe(cell);
    expect(unguardCell(cell)).toBe(value);
  });

  it('guards the text cells of a CSV results file; --resume reads the values back', async () => {
    const path = fresh('csv');
    const file = await ResultFile.open({
      path,
      format: 'csv',
      records: bulkSpecs.rotate.records,
      uid,
    });
    file.append([
      rotated(1, { name: "=cmd|' /C calc'!A0", token: '-tok', error: '@x' }),
      rotated(2),
    ]);
    await file.close();
    const line = readFileSync(path, 'utf8').split('\n')[1] ?? '';
    expect(line).toContain(",'=cmd|' /C calc'!A0,");
    expect(line).toContain("'-tok");
    expect(line).toContain("'@x");
    const state = await readResumeState(path, 'csv', bulkSpecs.rotate.records);
    expect(state.outcomes.get(1)).toEqual(
      rotated(1, { name: "=cmd|' /C calc'!A0", token: '-tok', error: '@x' }),
    );
    expect(state.outcomes.get(2)).toEqual(rotated(2));
  });

  it('quotes every cell holding , ; tab " CR or LF', async () => {
    const stringify = await loadCsvStringify();
    expect(stringify([['a,b', 'a;b', 'a\tb', 'a"b', 'a\rb', 'a\nb', 'plain', '']])).toBe(
      '"a,b","a;b","a\tb","a""b","a\rb","a\nb",plain,\n',
    );
  });

  it('no cell of a CSV results file starts a formula, read with , or with ; as separator', async () => {
    const path = fresh('csv');
    const file = await ResultFile.open({
      path,
      format: 'csv',
      records: bulkSpecs.get.records,
      uid,
    });
    const hostile = created(1, {
      user_group_id: 'id;@1',
      name: 'Acme;=HYPERLINK("http://evil","x")',
      team_id: 'x;=1+1',
      error: 'bad;-2+3;"=4"',
    });
    file.append([hostile, created(2, { name: 'Plain; text' })]);
    await file.close();
    const text = readFileSync(path, 'utf8');
    // A cell holding a `;` is quoted, so a reader splitting on `,` keeps it whole.
    expect(text).toContain(',"x;\'=1+1",');
    for (const delimiter of [',', ';']) {
      // A spreadsheet splitting on `;` meets quotes in the middle of its cells: relaxed.
      const rows = parseSync(text, {
        delimiter,
        relax_quotes: delimiter === ';',
        relax_column_count: true,
      }) as string[][];
      const cells = rows.flat();
      expect(
        cells.filter((cell) => /^[=+\-@]/.test(cell)),
        delimiter,
      ).toEqual([]);
    }
    const state = await readResumeState(path, 'csv', bulkSpecs.get.records);
    expect(state.outcomes.get(1)).toEqual(hostile);
    expect(state.outcomes.get(2)).toEqual(created(2, { name: 'Plain; text' }));
  });
});

describe('ResultFile', () => {
  it('creates an NDJSON file with mode 0600 and appends to it, never truncating', async () => {
    const path = fresh('ndjson');
    const first = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
    });
    first.append([rotated(1)]);
    await first.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const second = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
    });
    second.append([rotated(2), rotated(3)]);
    await second.close();
    const lines = readFileSync(path, 'utf8').trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l).row)).toEqual([1, 2, 3]);
  });

  it('counts what is appended and not yet written (the backlog a run waits on)', async () => {
    const path = fresh('ndjson');
    let release: () => void = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    // A disk that takes its time with the first write.
    const fs: AppendFs = {
      ...nodeAppendFs,
      write: async (...args) => {
        await gate;
        return nodeAppendFs.write(...args);
      },
    };
    const file = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.get.records,
      uid,
      fs,
    });
    expect(file.backlog).toBe(0);
    file.append([created(1)]);
    file.append([created(2), created(3)]);
    await new Promise((resolve) => setTimeout(resolve, 10));
    // The first write holds all three records; a fourth one waits behind it.
    file.append([created(4)]);
    expect(file.backlog).toBe(ndjsonLine(created(4), bulkSpecs.get.records).length);
    release();
    await file.flush();
    expect(file.backlog).toBe(0);
    await file.close();
    expect(readFileSync(path, 'utf8').trimEnd().split('\n')).toHaveLength(4);
  });

  it('tightens an existing file that others can read', async () => {
    const path = fresh('ndjson');
    writeFileSync(path, '');
    chmodSync(path, 0o644);
    const file = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.get.records,
      uid,
    });
    await file.close();
    expect(statSync(path).mode & 0o777).toBe(0o600);
  });

  it('writes the CSV header only when the file is new or empty, and quotes cells', async () => {
    const path = fresh('csv');
    const first = await ResultFile.open({
      path,
      format: 'csv',
      records: bulkSpecs.get.records,
      uid,
    });
    first.append([created(1, { name: 'Acme, "Inc"' })]);
    await first.close();
    const second = await ResultFile.open({
      path,
      format: 'csv',
      records: bulkSpecs.get.records,
      uid,
    });
    second.append([created(2, { status: 'failed', token: null, error: 'line\nbreak' })]);
    await second.close();
    expect(readFileSync(path, 'utf8')).toBe(
      'row,user_group_id,name,status,token,team_id,new_user_group,error,http_status\n' +
        '1,id1,"Acme, ""Inc""",created,tok-1,1,true,,200\n' +
        '2,id2,Name 2,failed,,2,true,line\\u000abreak,200\n',
    );
  });

  it('refuses to append CSV records to a file with another header', async () => {
    const path = fresh('csv');
    writeFileSync(path, 'user_group_id,name\na,A\n');
    await expect(
      ResultFile.open({ path, format: 'csv', records: bulkSpecs.get.records, uid }),
    ).rejects.toThrow(/without the header of ugs get results/);
    expect(readFileSync(path, 'utf8')).toBe('user_group_id,name\na,A\n');
  });

  it('ends a torn last line before appending, so no record is glued to it', async () => {
    const path = fresh('ndjson');
    writeFileSync(path, `${ndjsonLine(rotated(1), bulkSpecs.rotate.records)}{"row":2,"sta`);
    const file = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
    });
    file.append([rotated(3)]);
    await file.close();
    const state = await readResumeState(path, 'ndjson', bulkSpecs.rotate.records);
    expect([...state.outcomes.keys()]).toEqual([1, 3]);
    expect(state.tornLines).toBe(1);
  });

  it('refuses a file whose owner is not the given user; with no uids, nothing is checked', async () => {
    const path = fresh('ndjson');
    writeFileSync(path, '');
    const owner = statSync(path).uid;
    const records = bulkSpecs.get.records;
    await expect(
      ResultFile.open({ path, format: 'ndjson', records, uid: owner + 1 }),
    ).rejects.toThrow(`belongs to another user (uid ${owner}); nothing was sent`);
    await expect(
      ResultFile.preflight({
        path,
        format: 'ndjson',
        records,
        uid: owner + 1,
        from: '-',
        resume: false,
      }),
    ).rejects.toThrow(`belongs to another user (uid ${owner})`);
    const file = await ResultFile.open({ path, format: 'ndjson', records, uid: undefined });
    await file.close();
  });

  it('refuses a directory and a missing parent directory with usage errors', async () => {
    await expect(
      ResultFile.open({ path: dir, format: 'ndjson', records: bulkSpecs.get.records, uid }),
    ).rejects.toThrow(UsageError);
    await expect(
      ResultFile.open({
        path: join(dir, 'no', 'x.ndjson'),
        format: 'ndjson',
        records: bulkSpecs.get.records,
        uid,
      }),
    ).rejects.toThrow(/cannot open the file \(no such directory\)/);
  });
});

/** The real file system's write, logging how many records each write carries. */
function loggedWrite(log: string[]): AppendFs['write'] {
  return async (fd, buffer, offset, length) => {
    const text = Buffer.from(buffer.subarray(offset, offset + length)).toString();
    log.push(`write ${text.split('\n').filter(Boolean).length}`);
    return nodeAppendFs.write(fd, buffer, offset, length);
  };
}

/** The real file system, with writes and fsyncs logged and each fsync taking 20 ms. */
function countingFs() {
  const log: string[] = [];
  const fs: AppendFs = {
    ...nodeAppendFs,
    write: loggedWrite(log),
    fsync: async (fd) => {
      log.push('fsync');
      await new Promise<void>((resolve) => setTimeout(resolve, 20));
      return nodeAppendFs.fsync(fd);
    },
  };
  return { fs, log };
}

describe('the journal (markSending)', () => {
  it('resolves only after an fsync that covers the records', async () => {
    const { fs, log } = countingFs();
    const path = fresh('ndjson');
    const file = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
      fs,
    });
    await file.markSending([sending(1)]);
    expect(log).toEqual(['write 1', 'fsync']);
    expect(readFileSync(path, 'utf8')).toContain('"status":"sending"');
    await file.close();
  });

  it('batches the fsyncs of rows sent together: 64 rows, at most 2 fsyncs', async () => {
    const { fs, log } = countingFs();
    const path = fresh('ndjson');
    const file = await ResultFile.open({
      path,
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
      fs,
    });
    const order: string[] = [];
    await Promise.all(
      Array.from({ length: 64 }, (_, i) =>
        file.markSending([sending(i + 1)]).then(() => {
          order.push(`done ${i + 1}`);
        }),
      ),
    );
    const fsyncs = log.filter((entry) => entry === 'fsync').length;
    expect(fsyncs).toBeGreaterThanOrEqual(1);
    expect(fsyncs).toBeLessThanOrEqual(2);
    expect(order).toHaveLength(64);
    const state = await readResumeState(path, 'ndjson', bulkSpecs.rotate.records);
    expect(state.outcomes.size).toBe(64);
    await file.close();
  });

  it('a row written while an fsync runs waits for an fsync of its own, which starts at once', async () => {
    const log: string[] = [];
    // Each fsync is held until the test lets it end: the order is the test's, not the timers'.
    const held: (() => void)[] = [];
    const fs: AppendFs = {
      ...nodeAppendFs,
      write: loggedWrite(log),
      fsync: async (fd) => {
        const n = held.length + 1;
        log.push(`fsync ${n} starts`);
        await new Promise<void>((resolve) => held.push(resolve));
        await nodeAppendFs.fsync(fd);
        log.push(`fsync ${n} ends`);
      },
    };
    const until = async (done: () => boolean) => {
      for (let waited = 0; !done(); waited++) {
        if (waited > 2000) expect.fail(`still waiting; the fsyncs so far: ${log.join(', ')}`);
        await new Promise((resolve) => setTimeout(resolve, 1));
      }
    };
    const file = await ResultFile.open({
      path: fresh('ndjson'),
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
      fs,
    });
    const first = file.markSending([sending(1)]).then(() => log.push('row 1 on disk'));
    await until(() => held.length === 1);
    const second = file.markSending([sending(2)]).then(() => log.push('row 2 on disk'));
    // Row 2's fsync begins once row 2 is written, while row 1's is still held.
    await until(() => held.length === 2);
    const started = ['write 1', 'fsync 1 starts', 'write 1', 'fsync 2 starts'];
    expect(log).toEqual(started);
    // The first fsync began before row 2 was written: its end does not count for row 2.
    held[0]?.();
    await first;
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(log).toEqual([...started, 'fsync 1 ends', 'row 1 on disk']);
    held[1]?.();
    await second;
    expect(log.slice(6)).toEqual(['fsync 2 ends', 'row 2 on disk']);
    await file.close();
  });

  it('rejects markSending when the disk refuses the write, and keeps failing', async () => {
    const fs: AppendFs = { ...nodeAppendFs, write: async () => 0 };
    const file = await ResultFile.open({
      path: fresh('ndjson'),
      format: 'ndjson',
      records: bulkSpecs.rotate.records,
      uid,
      fs,
    });
    await expect(file.markSending([sending(1)])).rejects.toThrow(/short write/);
    await expect(file.markSending([sending(2)])).rejects.toThrow(/short write/);
    // close reports the failure in `failed` (the run says what it lost), not as a rejection.
    await file.close();
    expect(String(file.failed?.error)).toMatch(/short write/);
  });
});

describe('readResumeState', () => {
  it('reads a large CSV in batches, torn lines in the middle of a batch included', async () => {
    const path = fresh('csv');
    const file = await ResultFile.open({
      path,
      format: 'csv',
      records: bulkSpecs.rotate.records,
      uid,
    });
    file.append(Array.from({ length: 1500 }, (_, i) => rotated(i + 1)));
    await file.flush();
    appendFileSync(path, '1501,id1501,Na\n'); // torn outside quotes, then ended by a later run
    appendFileSync(path, '1502,id1502,"x"y\n'); // not CSV at all: its batch is redone line by line
    file.append(Array.from({ length: 1000 }, (_, i) => rotated(i + 1503, { status: 'unknown' })));
    await file.close();
    const state = await readResumeState(path, 'csv', bulkSpecs.rotate.records);
    expect(state.outcomes.size).toBe(2500);
    expect(state.outcomes.get(1500)).toEqual(rotated(1500));
    expect(state.outcomes.get(2502)?.status).toBe('unknown');
    expect(state.tornLines).toBe(2);
  });

  it('returns the last record of each row, from NDJSON, ignoring a torn last line', async () => {
    const path = fresh('ndjson');
    writeFileSync(
      path,
      ndjsonLine(sending(1), bulkSpecs.rotate.records) +
        ndjsonLine(sending(2), bulkSpecs.rotate.records) +
        ndjsonLine(rotated(1), bulkSpecs.rotate.records) +
        ndjsonLine(
          rotated(3, { status: 'failed', token: null, error: '404', http_status: 404 }),
          bulkSpecs.rotate.records,
        ) +
        ndjsonLine(rotated(4), bulkSpecs.rotate.records).slice(0, 40),
    );
    const state = await readResumeState(path, 'ndjson', bulkSpecs.rotate.records);
    expect(state.outcomes.get(1)).toEqual(rotated(1));
    expect(state.outcomes.get(2)?.status).toBe('sending');
    expect(state.outcomes.get(3)?.status).toBe('failed');
    expect(state.outcomes.has(4)).toBe(false);
    expect(state.tornLines).toBe(0); // a torn final line is not even a line
  });

  it('reads CSV results back with their types, ignoring a torn last line and torn middle lines', async () => {
    const path = fresh('csv');
    const file = await ResultFile.open({
      path,
      format: 'csv',
      records: bulkSpecs.get.records,
      uid,
    });
    file.append([
      created(1, { name: 'A, "B"' }),
      created(2, { status: 'found', new_user_group: false }),
    ]);
    await file.close();
    appendFileSync(path, '3,id3,"Name, cut\n4,id4,N4,created,tok-4,4,true,,200\n5,id5,N5,cre');
    const state = await readResumeState(path, 'csv', bulkSpecs.get.records);
    expect(state.outcomes.get(1)).toEqual(created(1, { name: 'A, "B"' }));
    expect(state.outcomes.get(2)).toEqual(created(2, { status: 'found', new_user_group: false }));
    expect(state.outcomes.has(3)).toBe(false);
    expect(state.outcomes.get(4)?.token).toBe('tok-4');
    expect(state.outcomes.has(5)).toBe(false);
    expect(state.tornLines).toBe(1);
  });

  it('plans a resume: done rows are skipped, sending and unknown ones settled, the rest sent', async () => {
    const path = fresh('ndjson');
    writeFileSync(
      path,
      [
        sending(1),
        rotated(1),
        sending(2),
        sending(3),
        rotated(3, { status: 'unknown', token: null }),
        sending(4),
        rotated(4, { status: 'failed', token: null, http_status: 404 }),
        rotated(5, { status: 'skipped', token: null }),
      ]
        .map((record) => ndjsonLine(record, bulkSpecs.rotate.records))
        .join(''),
    );
    const plan = planResume(await readResumeState(path, 'ndjson', bulkSpecs.rotate.records));
    expect([...plan.done]).toEqual([1]);
    expect([...plan.settle.keys()].sort()).toEqual([2, 3]);
    expect(plan.settle.get(2)?.status).toBe('sending');
    expect(plan.settle.get(3)?.status).toBe('unknown');
  });

  it('is empty for a file that does not exist yet', async () => {
    const state = await readResumeState(join(dir, 'never.ndjson'), 'ndjson', bulkSpecs.get.records);
    expect(state.outcomes.size).toBe(0);
  });

  it('refuses a file that is not a results file (e.g. the input)', async () => {
    const csv = fresh('csv');
    writeFileSync(csv, 'user_group_id,name\na,A\n');
    await expect(readResumeState(csv, 'csv', bulkSpecs.get.records)).rejects.toThrow(
      /is not a ugs get results file: line 1 is not the header/,
    );
    const nd = fresh('ndjson');
    writeFileSync(nd, '{"user_group_id":"a","name":"A"}\n');
    await expect(readResumeState(nd, 'ndjson', bulkSpecs.get.records)).rejects.toThrow(
      /line 1 is not a result record/,
    );
  });
});
