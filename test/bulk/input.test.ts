import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { MAX_LISTED_ERRORS } from '../../src/bulk/error-list.js';
import { type InputFormat, inputFormatFor, readCandidates } from '../../src/bulk/input.js';
import { type ByteSource, fileSource, stdinSource } from '../../src/bulk/input-source.js';
import type { CsvOptions } from '../../src/bulk/row-check.js';
import { openBulkInput } from '../../src/bulk/validate.js';
import { UsageError } from '../../src/errors.js';
import {
  bulkSpecs,
  type GetRow,
  openGetInput,
  openRotateInput,
  type RotateRow,
} from '../kit/bulk.js';

const dir = mkdtempSync(join(tmpdir(), 'ugs-bulk-input-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The text split into small chunks, so rows and quoted cells cross chunk borders. */
function source(text: string | Buffer, chunk = 7): ByteSource {
  const bytes = typeof text === 'string' ? Buffer.from(text) : text;
  return async function* () {
    for (let at = 0; at < bytes.length; at += chunk) yield bytes.subarray(at, at + chunk);
  };
}

async function getRows(text: string, format: InputFormat, chunk = 7): Promise<GetRow[]> {
  const input = await openGetInput(source(text, chunk), format);
  const rows: GetRow[] = [];
  for await (const row of input.rows()) rows.push(row);
  expect(rows.length).toBe(input.rowCount);
  return rows;
}

async function rotateRows(text: string, format: InputFormat): Promise<RotateRow[]> {
  const input = await openRotateInput(source(text), format);
  const rows: RotateRow[] = [];
  for await (const row of input.rows()) rows.push(row);
  return rows;
}

async function problemOf(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(UsageError);
  return (error as UsageError).message;
}

describe('inputFormatFor', () => {
  it.each([
    ['groups.csv', 'csv'],
    ['GROUPS.CSV', 'csv'],
    ['a/b.ndjson', 'ndjson'],
    ['x.jsonl', 'ndjson'],
    ['x.json', 'json'],
  ])('%s -> %s', (path, format) => {
    expect(inputFormatFor(path, undefined)).toBe(format);
  });

  it('an explicit --format wins over the extension', () => {
    expect(inputFormatFor('rows.txt', 'ndjson')).toBe('ndjson');
    expect(inputFormatFor('rows.csv', 'JSON')).toBe('json');
  });

  it('stdin needs --format', () => {
    expect(() => inputFormatFor('-', undefined)).toThrow(/--from - \(stdin\) needs --format/);
    expect(inputFormatFor('-', 'csv')).toBe('csv');
  });

  it('refuses an unknown extension and an unknown format', () => {
    expect(() => inputFormatFor('rows.txt', undefined)).toThrow(UsageError);
    expect(() => inputFormatFor('rows.txt', undefined)).toThrow(/from its extension/);
    expect(() => inputFormatFor('rows.csv', 'xml')).toThrow(
      '--format must be one of csv, ndjson, json, got "xml"',
    );
  });
});

describe('CSV rows (RFC 4180)', () => {
  it('reads commas, doubled quotes and newlines inside quoted cells, and line numbers', async () => {
    const text =
      'user_group_id,name,properties\n' +
      'a1,"Acme, Inc.",\n' +
      'a2,"The ""Best"" Co",\n' +
      'a3,Three,"{\n""note"": ""two\\nlines, one cell""\n}"\n' +
      'a4,plain,\n';
    expect(await getRows(text, 'csv')).toEqual([
      { row: 1, line: 2, user_group_id: 'a1', name: 'Acme, Inc.' },
      { row: 2, line: 3, user_group_id: 'a2', name: 'The "Best" Co' },
      {
        row: 3,
        line: 4,
        user_group_id: 'a3',
        name: 'Three',
        properties: { note: 'two\nlines, one cell' },
      },
      { row: 4, line: 7, user_group_id: 'a4', name: 'plain' },
    ]);
    // A line break is fine inside a quoted cell, but never inside an id or a name.
    const message = await problemOf(getRows('user_group_id,name\n"a\nb",A\n', 'csv'));
    expect(message).toContain('row 1 (line 2): user_group_id "a\\nb" contains a control character');
  });

  it('ignores a UTF-8 BOM and accepts CRLF records, blank lines and a last line without newline', async () => {
    const text = '\ufeffuser_group_id,name\r\na1,A\r\n\r\na2,B';
    expect(await getRows(text, 'csv', 1)).toEqual([
      { row: 1, line: 2, user_group_id: 'a1', name: 'A' },
      { row: 2, line: 4, user_group_id: 'a2', name: 'B' },
    ]);
  });

  it('counts a CRLF inside a quoted cell as one line', async () => {
    const text = 'user_group_id,name,properties\r\nid1,A,"{\r\n}"\r\nid2,"z",\r\n';
    const rows = await getRows(text, 'csv');
    expect(rows.map((r) => r.line)).toEqual([2, 4]);
    const bad = 'user_group_id,name,properties\r\nid1,A,"{\r\n}"\r\nid2, z,\r\n';
    expect(await problemOf(getRows(bad, 'csv'))).toContain('row 2 (line 4): name " z"');
  });

  it('takes an empty cell as "not given" and JSON cells and dotted columns as objects', async () => {
    const text =
      'user_group_id,name,mapping,properties,mapping.s2,properties.plan\n' +
      'a1,A,"{""s1"":""db1""}","{""n"":1}",db2,pro\n' +
      'a2,B,,,,\n';
    expect(await getRows(text, 'csv')).toEqual([
      {
        row: 1,
        line: 2,
        user_group_id: 'a1',
        name: 'A',
        mapping: { s1: 'db1', s2: 'db2' },
        properties: { n: 1, plan: 'pro' },
      },
      { row: 2, line: 3, user_group_id: 'a2', name: 'B' },
    ]);
  });

  it('keeps a dotted column named __proto__ as a plain key', async () => {
    const rows = await getRows('user_group_id,name,properties.__proto__\na,A,x\n', 'csv');
    expect(Object.getPrototypeOf(rows[0]?.properties)).toBe(Object.prototype);
    expect(Object.hasOwn(rows[0]?.properties ?? {}, '__proto__')).toBe(true);
  });

  it('refuses a key set by both the JSON column and a dotted column', async () => {
    const text = 'user_group_id,name,mapping,mapping.s1\na1,A,"{""s1"":""x""}",y\n';
    expect(await problemOf(getRows(text, 'csv'))).toContain(
      'row 1 (line 2): mapping key "s1" is set both by the mapping column and the mapping.s1 column',
    );
  });

  it('refuses duplicate and missing header columns, naming the columns it left out', async () => {
    const message = await problemOf(getRows('user_group_id,nmae,user_group_id\na,b,c\n', 'csv'));
    expect(message).toContain('line 1 (the header): column "user_group_id" appears twice');
    expect(message).toContain(
      'line 1 (the header): no "name" column (the column "nmae" is not known to ugs)',
    );
    // --strict-columns: an unknown column is a problem of its own, as before.
    const strict = await problemOf(
      openBulkInput(source('user_group_id,nmae\na,b\n'), 'csv', bulkSpecs.get.rows, undefined, {
        strictColumns: true,
      }),
    );
    expect(strict).toContain('line 1 (the header): unknown column "nmae"');
  });

  it('refuses a row with more or fewer cells than the header', async () => {
    const message = await problemOf(getRows('user_group_id,name\na,A,extra\nb\n', 'csv'));
    expect(message).toContain('row 1 (line 2): has 3 cells, the header has 2');
    expect(message).toContain('row 2 (line 3): has 1 cells, the header has 2');
  });

  it('reports a quoted cell that never closes, without the cell text', async () => {
    const message = await problemOf(getRows('user_group_id,name\na,"secret\n', 'csv'));
    expect(message).toContain('a quoted cell is never closed');
    expect(message).not.toContain('secret');
  });

  it('refuses bytes that are not UTF-8', async () => {
    const bytes = Buffer.concat([
      Buffer.from('user_group_id,name\na,'),
      Buffer.from([0xff]),
      Buffer.from('\n'),
    ]);
    const message = await problemOf(openGetInput(source(bytes), 'csv'));
    expect(message).toContain('not valid UTF-8');
  });
});

describe('CSV as spreadsheets write it', () => {
  async function open(text: string | Buffer, csv: CsvOptions = {}, chunk = 7) {
    const input = await openBulkInput(
      source(text, chunk),
      'csv',
      bulkSpecs.get.rows,
      undefined,
      csv,
    );
    const rows: GetRow[] = [];
    for await (const row of input.rows()) rows.push(row);
    return { input, rows };
  }

  async function refusal(text: string | Buffer, csv: CsvOptions = {}): Promise<UsageError> {
    const error = await open(text, csv).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(UsageError);
    return error as UsageError;
  }

  it.each([
    ['comma', 'user_group_id,name,properties.price\na,"A, B",1.5\n', 'A, B', '1.5'],
    [
      'semicolon (decimal commas)',
      'user_group_id;name;properties.price\na;A, B;1,5\n',
      'A, B',
      '1,5',
    ],
    ['tab', 'user_group_id\tname\tproperties.price\na\tA; B\t1,5\n', 'A; B', '1,5'],
  ])('detects a %s delimiter from the header line', async (_what, text, name, price) => {
    const { rows } = await open(text);
    expect(rows).toEqual([{ row: 1, line: 2, user_group_id: 'a', name, properties: { price } }]);
  });

  it('takes --delimiter as given, and hints at the one the header shows when it is wrong', async () => {
    const { rows } = await open('user_group_id|name\na|A\n', { delimiter: '|' });
    expect(rows).toEqual([{ row: 1, line: 2, user_group_id: 'a', name: 'A' }]);
    // Never detected: a pipe is suggested.
    const pipes = await refusal('user_group_id|name\na|A\n');
    expect(pipes.message).toContain('no "user_group_id" column');
    expect(pipes.hint).toBe(`the header looks separated by "|", not ",": pass --delimiter '|'`);
    const forced = await refusal('user_group_id;name\na;A\n', { delimiter: ',' });
    expect(forced.hint).toBe(`the header looks separated by ";", not ",": pass --delimiter ';'`);
    // Quoted cells split by the wrong delimiter do not even parse: the hint is the same.
    const quoted = await refusal('"user_group_id";"name"\n"a";"A"\n', { delimiter: ',' });
    expect(quoted.message).toContain('a quote inside a quoted cell is not doubled');
    expect(quoted.hint).toBe(`the header line looks separated by ";": pass --delimiter ';'`);
    expect((await open('"user_group_id";"name"\n"a";"A"\n')).rows).toHaveLength(1);
  });

  it.each([
    [
      'whatever their case and surrounding spaces; a key keeps its case',
      ' User_Group_ID ,NAME,Properties.Plan ,MAPPING.Sales\na,A,pro,db\n',
      { properties: { Plan: 'pro' }, mapping: { Sales: 'db' } },
    ],
    [
      'with spaces or hyphens between words as underscores (User Group ID); a key stays as written',
      'User Group ID;Name;Is-Demo-Group;Properties.Sales Region\na;A;false;EU\n',
      { is_demo_group: false, properties: { 'Sales Region': 'EU' } },
    ],
  ])('matches header names %s', async (_rule, text, more) => {
    const { rows } = await open(text);
    expect(rows).toEqual([{ row: 1, line: 2, user_group_id: 'a', name: 'A', ...more }]);
  });

  it('a header name matches once: two columns for one field are refused, rotate reads them too', async () => {
    for (const header of ['user_group_id,Name,name ', 'user_group_id,name,User Group ID']) {
      const twice = await refusal(`${header}\na,A,B\n`);
      expect(twice.message, header).toMatch(/line 1 \(the header\): column "[^"]+" appears twice/);
    }
    const rotateRows = await openRotateInput(
      source('Current Token,User-Group-ID\ntok-1,a\n'),
      'csv',
    );
    const read: unknown[] = [];
    for await (const row of rotateRows.rows()) read.push(row);
    expect(read).toEqual([{ row: 1, line: 2, current_token: 'tok-1', user_group_id: 'a' }]);
  });

  it('skips rows whose cells are all empty and counts them; a row with one cell set is a row', async () => {
    const { input, rows } = await open('user_group_id,name\n,\na,A\n , \n,\n\nb,B\n,,\n', {}, 3);
    expect(rows.map((r) => [r.row, r.line, r.user_group_id])).toEqual([
      [1, 3, 'a'],
      [2, 7, 'b'],
    ]);
    expect(input.blankRows).toBe(5);
    const partial = await refusal('user_group_id,name\n,A\n');
    expect(partial.message).toContain('row 1 (line 2): user_group_id is missing');
  });

  it('ignores columns it does not know and names them (unnamed ones only when they hold something)', async () => {
    const { input, rows } = await open('user_group_id,Owner,name,,\na,x,A,,\nb,,B,,z\n');
    expect(rows.map((r) => [r.user_group_id, r.name])).toEqual([
      ['a', 'A'],
      ['b', 'B'],
    ]);
    expect(input.ignoredColumns).toEqual(['"Owner"', '1 without a name']);
    const strict = await refusal('user_group_id,Owner,name\na,x,A\n', { strictColumns: true });
    expect(strict.message).toContain('line 1 (the header): unknown column "Owner"');
  });

  it('reads UTF-16 with a byte-order mark, little- and big-endian, split anywhere', async () => {
    const text = 'user_group_id\tname\r\nmüller\tMüller 😀 GmbH\r\n';
    const le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]);
    const be = Buffer.from(le);
    be.swap16();
    for (const bytes of [le, be]) {
      const { rows } = await open(bytes, {}, 1);
      expect(rows).toEqual([{ row: 1, line: 2, user_group_id: 'müller', name: 'Müller 😀 GmbH' }]);
    }
  });

  it('says what an unreadable file looks like: UTF-16 without a BOM, or a one-byte code page', async () => {
    const noBom = await refusal(Buffer.from('user_group_id,name\na,A\n', 'utf16le'));
    expect(noBom.message).toBe(
      '--from: the input looks like UTF-16 text without a byte-order mark',
    );
    expect(noBom.hint).toContain('CSV UTF-8');
    const latin1 = await refusal(
      Buffer.from('user_group_id;name\nm\u00fcller;M\u00fcller\n', 'latin1'),
    );
    expect(latin1.message).toBe('--from: the input is not valid UTF-8 text');
    expect(latin1.hint).toContain('Windows-1252');
    // A workbook passed as it is (or renamed .csv): named as one, not as a broken text file.
    const xlsx = await refusal(Buffer.from('PK\u0003\u0004\u0014\u0000\u0006\u0000', 'latin1'));
    expect(xlsx.message).toBe(
      '--from: the input is a spreadsheet workbook (.xlsx or .ods), not text',
    );
    expect(xlsx.hint).toContain('"CSV UTF-8"');
    const xls = await refusal(Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]));
    expect(xls.message).toBe('--from: the input is a spreadsheet workbook (.xls), not text');
    // A lone surrogate is no UTF-16 text either.
    const broken = Buffer.concat([
      Buffer.from([0xff, 0xfe]),
      Buffer.from('user_group_id,name\na,', 'utf16le'),
      Buffer.from([0x00, 0xd8, 0x41, 0x00, 0x0a, 0x00]),
    ]);
    expect((await refusal(broken)).message).toBe('--from: the input is not valid UTF-16 text');
  });
});

describe('NDJSON and JSON rows', () => {
  it('reads NDJSON, skipping blank lines, with CRLF', async () => {
    const text =
      '{"user_group_id":"a","name":"A","mapping":{"s":"d"}}\r\n\n' +
      '{"user_group_id":"b","name":"B","properties":{"p":[1,{"q":"}"}]}}';
    expect(await getRows(text, 'ndjson', 5)).toEqual([
      { row: 1, line: 1, user_group_id: 'a', name: 'A', mapping: { s: 'd' } },
      { row: 2, line: 3, user_group_id: 'b', name: 'B', properties: { p: [1, { q: '}' }] } },
    ]);
  });

  it('reads a JSON array of objects, brackets in strings and escaped quotes included', async () => {
    const text =
      '[\n  {"user_group_id": "a]", "name": "A \\"x\\" {"},\n' +
      '  {"user_group_id": "b", "name": "B",\n   "properties": {"k": [1, 2]}}\n]\n';
    expect(await getRows(text, 'json', 3)).toEqual([
      { row: 1, line: 2, user_group_id: 'a]', name: 'A "x" {' },
      { row: 2, line: 3, user_group_id: 'b', name: 'B', properties: { k: [1, 2] } },
    ]);
  });

  it('property: splits any array of objects, cut into chunks anywhere, into its elements', async () => {
    // Strings full of what a splitter must not count: brackets, quotes, backslashes, newlines.
    const tricky = fc.string({
      unit: fc.constantFrom('{', '}', '[', ']', '"', '\\', ',', ':', '\n', 'a', 'é', '\u2028'),
    });
    const row = fc.dictionary(tricky, fc.oneof(tricky, fc.jsonValue()), { minKeys: 1 });
    await fc.assert(
      fc.asyncProperty(
        fc.array(row, { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 12 }),
        fc.constantFrom(0, 2),
        async (rows, chunk, indent) => {
          const text = JSON.stringify(rows, null, indent);
          const found: { text: string; line: number }[] = [];
          for await (const batch of readCandidates(source(text, chunk), 'json')) {
            for (const item of batch) if (item.kind === 'json') found.push(item);
          }
          // The rows as JSON gives them back (fast-check's -0 is written as 0).
          expect(found.map((item) => JSON.parse(item.text))).toEqual(JSON.parse(text));
          let from = 0;
          for (const item of found) {
            const at = text.indexOf(item.text, from);
            expect(item.line).toBe(text.slice(0, at).split('\n').length);
            from = at + item.text.length;
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it("a broken row is that row's problem, and the rows around it are still read", async () => {
    const text =
      '[{"user_group_id":"a","name":"A"},\n{"user_group_id": tru, "x": [}],\n{"name":"C"}]';
    const message = await problemOf(getRows(text, 'json'));
    expect(message).toContain('row 2 (line 2): is not valid JSON');
    expect(message).toContain('row 3 (line 3): user_group_id is missing');
    expect(message).not.toContain('row 1');
  });

  it.each([
    ['{"a":1}', 'it does not start with "["'],
    ['[{"user_group_id":"a","name":"A"} {"user_group_id":"b","name":"B"}]', 'a missing ","'],
    ['[{"user_group_id":"a","name":"A"},]', '"," before "]"'],
    ['[1]', 'row 1 is not a JSON object'],
    ['[{"user_group_id":"a","name":"A"}', 'the input ends before "]"'],
    ['[{"user_group_id":"a","name":"A"}] x', 'text after "]"'],
  ])('refuses a malformed array %s', async (text, problem) => {
    expect(await problemOf(getRows(text, 'json'))).toContain(problem);
  });

  it('refuses an empty input', async () => {
    expect(await problemOf(getRows('', 'ndjson'))).toContain('the input has no rows');
    expect(await problemOf(getRows('[]', 'json'))).toContain('the input has no rows');
    expect(await problemOf(getRows('user_group_id,name\n', 'csv'))).toContain(
      'the input has no rows',
    );
  });
});

describe('row validation', () => {
  const nd = (rows: object[]) => rows.map((r) => JSON.stringify(r)).join('\n');

  it.each([
    [{ name: 'A' }, 'user_group_id is missing'],
    [{ user_group_id: '', name: 'A' }, 'user_group_id cannot be empty'],
    [{ user_group_id: 'a ', name: 'A' }, 'user_group_id "a " has leading or trailing whitespace'],
    [
      { user_group_id: 'a\u001b[31m', name: 'A' },
      'user_group_id "a\\u001b[31m" contains a control character',
    ],
    [
      { user_group_id: 'a\u009b', name: 'A' },
      'user_group_id "a\\u009b" contains a control character',
    ],
    [{ user_group_id: 'a\ufffd', name: 'A' }, 'user_group_id "a\\ufffd" contains U+FFFD'],
    [{ user_group_id: 7, name: 'A' }, 'user_group_id must be a string, got a number'],
    [{ user_group_id: 'a' }, 'name is missing'],
    [{ user_group_id: 'a', name: 'A', mapping: [] }, 'mapping must be a JSON object, got an array'],
    [
      { user_group_id: 'a', name: 'A', mapping: { s: 1 } },
      'mapping: the value of "s" must be a string, got a number',
    ],
    [{ user_group_id: 'a', name: 'A', mapping: { '': 'x' } }, 'mapping has an empty key'],
    [
      { user_group_id: 'a', name: 'A', properties: 'x' },
      'properties must be a JSON object, got a string',
    ],
    [{ user_group_id: 'a', name: 'A', extra: 1 }, 'unknown field "extra"'],
  ])('get row %j: %s', async (row, problem) => {
    expect(await problemOf(getRows(nd([row]), 'ndjson'))).toContain(`row 1 (line 1): ${problem}`);
  });

  it('refuses invalid JSON and a row that is not an object', async () => {
    const message = await problemOf(getRows('{"user_group_id":\n[1]\n', 'ndjson'));
    expect(message).toContain('row 1 (line 1): is not valid JSON (');
    expect(message).toContain('row 2 (line 2): must be a JSON object, got an array');
  });

  it('refuses nesting deeper than 64 levels, in a CSV cell and in an NDJSON row', async () => {
    const deep = `${'{"a":'.repeat(65)}1${'}'.repeat(65)}`;
    const ok = `${'{"a":'.repeat(64)}1${'}'.repeat(64)}`;
    const csv = `user_group_id,name,properties\na,A,"${deep.replaceAll('"', '""')}"\nb,B,"${ok.replaceAll('"', '""')}"\n`;
    const message = await problemOf(getRows(csv, 'csv'));
    expect(message).toContain(
      'row 1 (line 2): properties nests 65 levels deep, more than the 64 allowed',
    );
    expect(message).not.toContain('row 2');
    const ndjson = `{"user_group_id":"a","name":"A","properties":${deep}}\n{"user_group_id":"b","name":"B","properties":${ok}}`;
    const ndMessage = await problemOf(getRows(ndjson, 'ndjson'));
    expect(ndMessage).toContain('row 1 (line 1): nests 65 levels deep, more than the 64 allowed');
    expect(ndMessage).not.toContain('row 2');
  });

  it('refuses a JSON value over 1 MiB, and accepts one just under', async () => {
    const big = (n: number) => JSON.stringify({ k: 'x'.repeat(n - 8) }); // {"k":"..."} is n bytes
    expect(big(1024 * 1024).length).toBe(1024 * 1024);
    const over = `{"user_group_id":"a","name":"A","properties":${big(1024 * 1024 + 1)}}`;
    const under = `{"user_group_id":"b","name":"B","properties":${big(1024 * 1024)}}`;
    const message = await problemOf(getRows(`${over}\n${under}`, 'ndjson', 65536));
    expect(message).toContain('row 1 (line 1): properties is larger than 1 MiB');
    expect(message).not.toContain('row 2');
    const cell = `user_group_id,name,mapping\na,A,"${big(1024 * 1024 + 1).replaceAll('"', '""')}"\n`;
    expect(await problemOf(getRows(cell, 'csv', 65536))).toContain(
      'row 1 (line 2): mapping is larger than 1 MiB',
    );
  });

  it('lists every problem of a file, the first 20 then "and K more", and sends nothing', async () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ user_group_id: ` id${i}`, name: 'A' }));
    const message = await problemOf(getRows(nd(rows), 'ndjson'));
    expect(message).toContain('25 problems in the input, nothing was sent');
    expect(message.match(/row \d+ \(line \d+\)/g)).toHaveLength(MAX_LISTED_ERRORS);
    expect(message).toContain('row 20 (line 20)');
    expect(message).not.toContain('row 21 (line 21)');
    expect(message).toMatch(/and 5 more$/);
  });

  // JSON.parse keeps the last of two equal keys: the row would send something else than it reads.
  it('refuses a key given twice in an NDJSON row, a JSON array row and a CSV JSON cell', async () => {
    const ndjson = [
      '{"user_group_id":"a","name":"A","user_group_id":"b"}',
      '{"user_group_id":"c","name":"C","properties":{"plan":"pro","plan":"free"}}',
      '{"user_group_id":"d","name":"D","mapping":{"s":"x"},"properties":{"plan":"pro"}}',
    ].join('\n');
    const message = await problemOf(getRows(ndjson, 'ndjson'));
    expect(message).toContain('row 1 (line 1): has the key "user_group_id" more than once');
    expect(message).toContain('row 2 (line 2): has the key "properties"."plan" more than once');
    expect(message).not.toContain('row 3');
    const array = '[{"user_group_id":"a","name":"A","mapping":{"s":"x","s":"y"}}]';
    expect(await problemOf(getRows(array, 'json'))).toContain(
      'row 1 (line 1): has the key "mapping"."s" more than once',
    );
    const csv = 'user_group_id,name,mapping\na,A,"{""s"":""x"",""s"":""y""}"\n';
    expect(await problemOf(getRows(csv, 'csv'))).toContain(
      'row 1 (line 2): mapping has the key "s" more than once',
    );
  });

  it('refuses a rotate row with current_token twice, without showing either token', async () => {
    const message = await problemOf(
      rotateRows('{"current_token":"tok-first-1234","current_token":"tok-second-5678"}', 'ndjson'),
    );
    expect(message).toContain('row 1 (line 1): has the key "current_token" more than once');
    expect(message).not.toContain('tok-');
  });

  it('refuses a duplicate user_group_id, naming the first row', async () => {
    const text = nd([
      { user_group_id: 'a', name: 'A' },
      { user_group_id: 'b', name: 'B' },
      { user_group_id: 'a', name: 'Again' },
    ]);
    expect(await problemOf(getRows(text, 'ndjson'))).toContain(
      'row 3 (line 3): user_group_id "a" is also in row 1',
    );
  });
});

describe('rotate rows', () => {
  it('reads current_token (trimmed, like --current-token) and the optional id and name', async () => {
    const text = 'current_token,user_group_id,name\ntok1,a,A\n" tok2\n",,\n';
    expect(await rotateRows(text, 'csv')).toEqual([
      { row: 1, line: 2, current_token: 'tok1', user_group_id: 'a', name: 'A' },
      { row: 2, line: 3, current_token: 'tok2' },
    ]);
  });

  it('never shows a current token in a problem', async () => {
    const secret = 'SECRET-TOKEN-123';
    const text = [
      `{"current_token":"${secret}"}`,
      `{"current_token":"${secret}"}`,
      `{"current_token":"${secret}\\u0007"}`,
      `{"current_token":"${secret}`,
      '{"current_token":"  "}',
      '{"user_group_id":"a"}',
      `{"current_token":"${secret}x","mapping":{}}`,
    ].join('\n');
    const message = await problemOf(rotateRows(text, 'ndjson'));
    expect(message).not.toContain('SECRET');
    expect(message).toContain('row 2 (line 2): same current_token as row 1');
    expect(message).toContain(
      'row 3 (line 3): current_token contains a control character or U+FFFD',
    );
    expect(message).toContain('row 4 (line 4): is not valid JSON\n');
    expect(message).toContain('row 5 (line 5): current_token is empty');
    expect(message).toContain('row 6 (line 6): current_token is missing');
    expect(message).toContain('row 7 (line 7): unknown field "mapping"');
  });

  it('does not show a token from a CSV that csv-parse refuses', async () => {
    const message = await problemOf(rotateRows('current_token\n"SECRET"x\n', 'csv'));
    expect(message).not.toContain('SECRET');
  });
});

describe('sources', () => {
  it('reads a file and names a missing file', async () => {
    const path = join(dir, 'rows.csv');
    writeFileSync(path, 'user_group_id,name\na,A\n');
    const input = await openGetInput(fileSource(path), 'csv');
    const rows: GetRow[] = [];
    for await (const row of input.rows()) rows.push(row);
    expect(rows).toEqual([{ row: 1, line: 2, user_group_id: 'a', name: 'A' }]);
    expect(await problemOf(openGetInput(fileSource(join(dir, 'none.csv')), 'csv'))).toContain(
      'cannot read the file (no such file)',
    );
  });

  it('stops reading when the reader stops early (Ctrl+C), for every format', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => ({ user_group_id: `id${i}`, name: 'N' }));
    const texts: Record<InputFormat, string> = {
      csv: `user_group_id,name\n${rows.map((r) => `${r.user_group_id},${r.name}`).join('\n')}\n`,
      ndjson: rows.map((r) => JSON.stringify(r)).join('\n'),
      json: JSON.stringify(rows),
    };
    for (const format of ['csv', 'ndjson', 'json'] as const) {
      const path = join(dir, `early.${format}`);
      writeFileSync(path, texts[format]);
      const input = await openGetInput(fileSource(path), format);
      let taken = 0;
      for await (const _ of input.rows()) {
        if (++taken === 3) break;
      }
      expect(taken, format).toBe(3);
    }
  });

  it('hands on the rows it validated, whatever the file holds after the check', async () => {
    const cases: { name: string; format: InputFormat; before: string; after: string }[] = [
      {
        name: 'a row added, one that breaks the rules (ndjson)',
        format: 'ndjson',
        before: '{"user_group_id":"a","name":"A"}\n',
        after: '{"user_group_id":"a","name":"A"}\n{"user_group_id":" b","name":"B"}\n',
      },
      {
        name: 'a valid row replaced by another (ndjson)',
        format: 'ndjson',
        before: '{"user_group_id":"a","name":"A"}\n{"user_group_id":"b","name":"B"}\n',
        after: '{"user_group_id":"a","name":"A"}\n{"user_group_id":"c","name":"C"}\n',
      },
      {
        name: "an id that repeats another row's (json)",
        format: 'json',
        before: '[{"user_group_id":"a","name":"A"},{"user_group_id":"b","name":"B"}]',
        after: '[{"user_group_id":"a","name":"A"},{"user_group_id":"a","name":"B"}]',
      },
      {
        name: 'the header reordered, so the same cells mean other fields (csv)',
        format: 'csv',
        before: 'user_group_id,name\na,b\n',
        after: 'name,user_group_id\na,b\n',
      },
    ];
    for (const { name, format, before, after } of cases) {
      const path = join(dir, `edited.${format}`);
      writeFileSync(path, before);
      const input = await openGetInput(fileSource(path), format);
      const validated: GetRow[] = [];
      for await (const row of input.rows()) validated.push(row);
      writeFileSync(path, after);
      const sent: GetRow[] = [];
      for await (const row of input.rows()) sent.push(row);
      expect(sent, name).toEqual(validated);
      expect(sent.length, name).toBe(input.rowCount);
    }
  });

  it('hands on every row of a file, a blank CSV row skipped', async () => {
    const path = join(dir, 'same.csv');
    writeFileSync(path, 'user_group_id,name\na,A\n,\nb,B\n');
    const input = await openGetInput(fileSource(path), 'csv');
    const ids: string[] = [];
    for await (const row of input.rows()) ids.push(row.user_group_id);
    expect(ids).toEqual(['a', 'b']);
  });

  it('keeps stdin in memory, up to a cap', async () => {
    async function* stdin() {
      yield Buffer.from('{"user_group_id":"a","name":"A"}\n');
      yield Buffer.from('{"user_group_id":"b","name":"B"}\n');
    }
    const input = await openGetInput(await stdinSource(stdin(), false), 'ndjson');
    const ids: string[] = [];
    for await (const row of input.rows()) ids.push(row.user_group_id);
    expect(ids).toEqual(['a', 'b']);
    expect(await problemOf(stdinSource(stdin(), false, 40))).toContain(
      'stdin is larger than 40 bytes',
    );
    expect(await problemOf(stdinSource(stdin(), true))).toContain('stdin is a terminal');
  });
});

describe('back-pressure inside the CSV reader', () => {
  it('leaves no listener behind per wait: no MaxListenersExceededWarning on a long CSV', async () => {
    const count = 30_000;
    const text = `user_group_id,name\n${Array.from({ length: count }, (_, i) => `id${i},Name ${i}`).join('\n')}\n`;
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      // 64-byte chunks: thousands of writes into the parser, most of them waiting for it to drain.
      const rows = await getRows(text, 'csv', 64);
      expect(rows.length).toBe(count);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', onWarning);
    }
    expect(warnings.map((w) => `${w.name}: ${w.message}`)).toEqual([]);
  });
});
