/**
 * CSV files as spreadsheets write them, through `get --from` and `rotate --from`: Excel's
 * "CSV UTF-8" in a German locale (semicolons, decimal commas, BOM, CRLF) and an English one, Excel's "Unicode Text" (UTF-16 LE with BOM, tabs), LibreOffice's semicolon CSV
 * and its UTF-16 export; each with capitalised headers, columns ugs does not know, and the empty
 * `;;;` rows a spreadsheet writes below the data.
 *
 * The `get` inputs are files (test/fixtures/csv/); `rotate` needs the tokens of this test's
 * groups, so its files are written here by `spreadsheetBytes`, which is checked to give the
 * fixtures byte for byte.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lastByRow, readRecords } from '../kit/bulk.js';
import { makeSandbox, runMain, serviceForTest, describeRun as show } from '../kit/index.js';

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'csv');
const API_TOKEN = 'api-token-spreadsheets';

interface Dialect {
  /** The fixture's file name (its extension: .txt needs --format csv). */
  file: string;
  delimiter: string;
  eol: string;
  bom: boolean;
  utf16: boolean;
  /** The locale's decimal comma (semicolon files) or point. */
  table: readonly (readonly string[])[];
}

// A German locale: decimal commas, so the list separator is a semicolon.
const GERMAN = [
  ['User_Group_ID', 'Name', 'Owner', 'Seats', 'Price (EUR)', 'Properties.plan'],
  ['müller-gmbh', 'Müller GmbH', 'Anna Schmidt', '12', '1.234,50', 'pro'],
  ['acme', 'Acme; Inc.', 'Bob "B" Jones', '3', '99,90', 'free'],
  ['café-brûlé', 'Café Brûlé SA', '', '1', '0,00', ''],
] as const;
// An English one, with a header written by hand: upper case, a space after "Name".
const ENGLISH = [
  ['USER_GROUP_ID', 'Name ', 'Owner', 'Seats', 'Price (USD)', 'properties.plan'],
  ['müller-gmbh', 'Müller GmbH', 'Anna Schmidt', '12', '1,234.50', 'pro'],
  ['acme', 'Acme, Inc.', 'Bob "B" Jones', '3', '99.90', 'free'],
  ['café-brûlé', 'Café Brûlé SA', '', '1', '0.00', ''],
] as const;

const DIALECTS: readonly Dialect[] = [
  // Excel, "CSV UTF-8 (durch Trennzeichen getrennt)": BOM, CRLF, semicolons.
  {
    file: 'excel-csv-utf8-de.csv',
    delimiter: ';',
    eol: '\r\n',
    bom: true,
    utf16: false,
    table: GERMAN,
  },
  // Excel, "CSV UTF-8 (Comma delimited)".
  {
    file: 'excel-csv-utf8-en.csv',
    delimiter: ',',
    eol: '\r\n',
    bom: true,
    utf16: false,
    table: ENGLISH,
  },
  // Excel, "Unicode Text (*.txt)": UTF-16 LE with BOM, tabs, CRLF.
  {
    file: 'excel-unicode-text.txt',
    delimiter: '\t',
    eol: '\r\n',
    bom: true,
    utf16: true,
    table: ENGLISH,
  },
  // LibreOffice Calc, "Text CSV" in a German locale: UTF-8 without BOM, LF, semicolons.
  {
    file: 'libreoffice-de.csv',
    delimiter: ';',
    eol: '\n',
    bom: false,
    utf16: false,
    table: GERMAN,
  },
  // LibreOffice Calc, "Text CSV" with the character set "Unicode (UTF-16)": BOM, LE, commas.
  {
    file: 'libreoffice-utf16.csv',
    delimiter: ',',
    eol: '\n',
    bom: true,
    utf16: true,
    table: ENGLISH,
  },
];

/** The empty rows a spreadsheet writes below the data when cells there were ever touched. */
const EMPTY_ROWS = 3;

/**
 * A table as the dialect's spreadsheet saves it: a cell is quoted only when it holds the
 * delimiter, a quote or a line break (quotes doubled), every line ends with the dialect's line
 * end, and `emptyRows` rows of nothing but delimiters follow.
 */
function spreadsheetBytes(
  dialect: Dialect,
  table: readonly (readonly string[])[],
  emptyRows: number,
): Buffer {
  const { delimiter } = dialect;
  const cell = (text: string) =>
    /["\r\n]/.test(text) || text.includes(delimiter) ? `"${text.replaceAll('"', '""')}"` : text;
  const width = table[0]?.length ?? 1;
  const lines = table.map((row) => row.map(cell).join(delimiter));
  for (let i = 0; i < emptyRows; i++) lines.push(delimiter.repeat(width - 1));
  const text = lines.map((line) => `${line}${dialect.eol}`).join('');
  const body = Buffer.from(text, dialect.utf16 ? 'utf16le' : 'utf8');
  if (!dialect.bom) return body;
  const bom = dialect.utf16 ? [0xff, 0xfe] : [0xef, 0xbb, 0xbf];
  return Buffer.concat([Buffer.from(bom), body]);
}

/** `--format csv` where the extension does not say it (Excel's Unicode Text is a .txt). */
function formatFlags(dialect: Dialect): string[] {
  return dialect.file.endsWith('.csv') ? [] : ['--format', 'csv'];
}

interface Rec {
  row: number;
  user_group_id: string | null;
  name: string | null;
  status: string;
  token: string | null;
}

describe('CSV files as spreadsheets write them', () => {
  it.each(DIALECTS)('the fixture $file is what the spreadsheet writes', (dialect) => {
    expect(readFileSync(join(FIXTURES, dialect.file))).toEqual(
      spreadsheetBytes(dialect, dialect.table, EMPTY_ROWS),
    );
  });

  it.each(DIALECTS)(
    'get --from $file: every row sent, extra columns noted, empty rows skipped and counted',
    async (dialect) => {
      const service = await serviceForTest([API_TOKEN]);
      const sandbox = makeSandbox();
      const out = join(sandbox.root, 'results.ndjson');
      const result = await runMain(
        ['get', '--from', join(FIXTURES, dialect.file), ...formatFlags(dialect), '--output', out],
        { sandbox, env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN } },
      );
      expect(result.code, show(result)).toBe(0);
      const comma = dialect.table === GERMAN ? ';' : ',';
      // Sent as the spreadsheet shows them: names with the delimiter, keys of the properties.
      const bodies = service.requests.map((request) => request.json);
      expect(bodies).toEqual(
        expect.arrayContaining([
          { user_group_id: 'müller-gmbh', name: 'Müller GmbH', properties: { plan: 'pro' } },
          { user_group_id: 'acme', name: `Acme${comma} Inc.`, properties: { plan: 'free' } },
          { user_group_id: 'café-brûlé', name: 'Café Brûlé SA' },
        ]),
      );
      expect(bodies).toHaveLength(3);
      const outcomes = lastByRow(readRecords<Rec>(out));
      expect([...outcomes.values()].map((r) => [r.row, r.user_group_id, r.status])).toEqual(
        expect.arrayContaining([
          [1, 'müller-gmbh', 'created'],
          [2, 'acme', 'created'],
          [3, 'café-brûlé', 'created'],
        ]),
      );
      const price = dialect.table === GERMAN ? 'Price (EUR)' : 'Price (USD)';
      expect(result.stderr).toContain(
        `note: --from: ignored columns ugs does not know: "Owner", "Seats", "${price}" (--strict-columns refuses them)`,
      );
      expect(result.stderr).toMatch(/3 rows in \S+.*: 3 created; 3 empty rows skipped\n/);
    },
  );

  it.each(DIALECTS)(
    'rotate --from $file: capitalised headers, an extra column and empty rows',
    async (dialect) => {
      const service = await serviceForTest([API_TOKEN]);
      const groups = [
        await service.seed('müller-gmbh', 'Müller GmbH'),
        await service.seed('acme', 'Acme'),
      ];
      const sandbox = makeSandbox();
      const from = join(sandbox.root, `tokens${dialect.file.slice(dialect.file.lastIndexOf('.'))}`);
      writeFileSync(
        from,
        spreadsheetBytes(
          dialect,
          [
            ['Current_Token', ' User_Group_ID', 'NAME', 'Comment'],
            ...groups.map((g) => [
              g.token,
              g.provided_id,
              g.name,
              `rotated on 26${comma(dialect)}11`,
            ]),
          ],
          2,
        ),
      );
      const out = join(sandbox.root, 'rotated.ndjson');
      const result = await runMain(
        ['rotate', '--from', from, ...formatFlags(dialect), '--output', out, '--yes'],
        { sandbox, env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN } },
      );
      expect(result.code, show(result)).toBe(0);
      const outcomes = [...lastByRow(readRecords<Rec>(out)).values()];
      expect(outcomes.map((r) => [r.row, r.user_group_id, r.status])).toEqual(
        expect.arrayContaining([
          [1, 'müller-gmbh', 'rotated'],
          [2, 'acme', 'rotated'],
        ]),
      );
      for (const group of groups) {
        const now = await service.group(group.provided_id);
        expect(now.token).not.toBe(group.token);
        expect(outcomes.find((r) => r.user_group_id === group.provided_id)?.token).toBe(now.token);
      }
      expect(result.stderr).toContain('ignored a column ugs does not know: "Comment"');
      expect(result.stderr).toMatch(/2 rows in \S+.*: 2 rotated; 2 empty rows skipped\n/);
    },
  );
});

describe('--delimiter and --strict-columns', () => {
  it('--strict-columns refuses the columns ugs does not know: exit 2, nothing sent', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const result = await runMain(
      ['get', '--from', join(FIXTURES, 'libreoffice-de.csv'), '--strict-columns'],
      { env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN } },
    );
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain('line 1 (the header): unknown column "Owner"');
    expect(result.stderr).toContain('line 1 (the header): unknown column "Price (EUR)"');
    expect(service.requests).toHaveLength(0);
  });

  it('--delimiter names the delimiter; a wrong one is refused with the one the header shows', async () => {
    const service = await serviceForTest([API_TOKEN]);
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN };
    const sandbox = makeSandbox();
    const pipes = join(sandbox.root, 'pipes.csv');
    writeFileSync(pipes, 'user_group_id|name\r\nacme|Acme\r\n');
    const refused = await runMain(['get', '--from', pipes], { sandbox, env });
    expect(refused.code, show(refused)).toBe(2);
    expect(refused.stderr).toContain(
      `hint: the header looks separated by "|", not ",": pass --delimiter '|'`,
    );
    expect(service.requests).toHaveLength(0);
    const read = await runMain(['get', '--from', pipes, '--delimiter', '|'], { sandbox, env });
    expect(read.code, show(read)).toBe(0);
    expect(service.requests.map((r) => r.json)).toEqual([{ user_group_id: 'acme', name: 'Acme' }]);
    const tabs = join(sandbox.root, 'tabs.csv');
    writeFileSync(tabs, 'user_group_id\tname\nglobex\tGlobex, Inc.\n');
    const tab = await runMain(
      ['get', '--from', tabs, '--delimiter', 'tab', '--output', join(sandbox.root, 'r.ndjson')],
      { sandbox, env },
    );
    expect(tab.code, show(tab)).toBe(0);
    expect(service.requests.at(-1)?.json).toEqual({
      user_group_id: 'globex',
      name: 'Globex, Inc.',
    });
  });

  it.each([
    [['get', '--delimiter', ';'], '--delimiter works only with --from'],
    [['get', '--strict-columns'], '--strict-columns works only with --from'],
    [
      ['get', '--from', 'rows.ndjson', '--delimiter', ';'],
      '--delimiter works only with a CSV --from, not ndjson',
    ],
    [
      ['get', '--from', 'rows.csv', '--delimiter', ';;'],
      '--delimiter must be one character, got ";;"',
    ],
    [['get', '--from', 'rows.csv', '--delimiter', '"'], '--delimiter cannot be'],
  ])('ugs %j is a usage error (exit 2)', async (argv, message) => {
    const result = await runMain(argv, {
      env: { UGS_BASE_URL: 'http://127.0.0.1:9', UGS_API_TOKEN: API_TOKEN },
    });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain(`error: ${message}`);
  });
});

describe('columns ugs does not know, and --column', () => {
  // The header of an Excel sheet whose Plan column was meant as a property.
  const SHEET = 'User Group ID;Name;Plan\r\nacme;Acme;pro\r\nbeta;Beta;free\r\n';

  async function sheet(text = SHEET) {
    const service = await serviceForTest([API_TOKEN]);
    const sandbox = makeSandbox();
    const from = join(sandbox.root, 'groups.csv');
    writeFileSync(from, text);
    const env = { UGS_BASE_URL: service.url, UGS_API_TOKEN: API_TOKEN };
    return { service, sandbox, from, env };
  }

  it('a column left out is noted with the field it may be and the --column that maps it', async () => {
    const { service, sandbox, from, env } = await sheet();
    const result = await runMain(['get', '--from', from], { sandbox, env });
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr).toContain(
      'note: --from: ignored a column ugs does not know: "Plan" (--strict-columns refuses them)\n  "Plan": did you mean properties.Plan or mapping.Plan? --column Plan=properties.Plan maps it\n',
    );
    expect(service.requests.map((r) => r.json)).toEqual([
      { user_group_id: 'acme', name: 'Acme' },
      { user_group_id: 'beta', name: 'Beta' },
    ]);
  });

  it('--column Plan=properties.plan sends the column as a property, with no note', async () => {
    const { service, sandbox, from, env } = await sheet();
    const result = await runMain(['get', '--from', from, '--column', 'plan=properties.plan'], {
      sandbox,
      env,
    });
    expect(result.code, show(result)).toBe(0);
    expect(result.stderr).not.toContain('ugs does not know');
    expect(service.requests.map((r) => r.json)).toEqual([
      { user_group_id: 'acme', name: 'Acme', properties: { plan: 'pro' } },
      { user_group_id: 'beta', name: 'Beta', properties: { plan: 'free' } },
    ]);
  });

  it('--column matches the column as a header is matched, and maps to a plain field too', async () => {
    const { service, sandbox, from, env } = await sheet(
      'ID;Customer Name;Sales DB\nacme;Acme;acme_db\n',
    );
    const result = await runMain(
      [
        'get',
        '--from',
        from,
        '--column',
        'id=user_group_id',
        '--column',
        ' customer-name =name',
        '--column',
        'SALES_DB=mapping.sales',
      ],
      { sandbox, env },
    );
    expect(result.code, show(result)).toBe(0);
    expect(service.requests.map((r) => r.json)).toEqual([
      { user_group_id: 'acme', name: 'Acme', mapping: { sales: 'acme_db' } },
    ]);
  });

  it('a typo of a field is offered as that field; rotate, with no object field, lists its own', async () => {
    const { sandbox, from, env } = await sheet('user_group_id,name,is_demo_grop\nacme,Acme,x\n');
    const dry = await runMain(['get', '--from', from, '--dry-run'], { sandbox, env });
    expect(dry.code, show(dry)).toBe(0);
    expect(dry.stderr).toContain(
      '"is_demo_grop": did you mean is_demo_group? --column is_demo_grop=is_demo_group maps it',
    );
    // A required field's column misspelt: the refusal says which column it likely is.
    const typo = join(sandbox.root, 'typo.csv');
    writeFileSync(typo, 'user_group_id,nmae\nacme,Acme\n');
    const refused = await runMain(['get', '--from', typo, '--dry-run'], { sandbox, env });
    expect(refused.code, show(refused)).toBe(2);
    expect(refused.stderr).toContain(
      'no "name" column (the column "nmae" is not known to ugs): --column nmae=name maps it',
    );
    const tokens = join(sandbox.root, 'tokens.csv');
    writeFileSync(tokens, 'current_token,Comment\ntok-aaaaaaaaaaaa,x\n');
    const rotate = await runMain(['rotate', '--from', tokens, '--dry-run'], { sandbox, env });
    expect(rotate.code, show(rotate)).toBe(0);
    expect(rotate.stderr).toContain(
      '"Comment": rotate --from reads only current_token, user_group_id, name',
    );
  });

  it('--strict-columns without a terminal: exit 2 naming each column and its --column fix', async () => {
    const { service, sandbox, from, env } = await sheet();
    const result = await runMain(['get', '--from', from, '--strict-columns'], { sandbox, env });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain(
      'line 1 (the header): unknown column "Plan": did you mean properties.Plan or mapping.Plan? --column Plan=properties.Plan maps it',
    );
    expect(result.stderr).toContain('hint: map each unknown column to a field with --column');
    expect(service.requests).toHaveLength(0);
  });

  it.each([
    [
      ['--column', 'Plan=plan'],
      'error: --column Plan=plan: "plan" is not a field of get --from\nhint: the fields: user_group_id, name, mapping, properties, is_demo_group, properties.<key>, mapping.<key>',
    ],
    [['--column', 'Plan=properties.'], '"properties." is not a field of get --from'],
    [['--column', 'Plan'], 'error: --column must be SRC=DEST, got "Plan"'],
    [
      ['--column', 'Region=properties.region'],
      '--column Region=properties.region: the header has no such column',
    ],
    [
      ['--column', 'Plan=name'],
      'column "Plan" is read as name (--column Plan=name), which another column is already',
    ],
    [
      ['--column', 'Plan=properties.a', '--column', 'plan=properties.b'],
      'maps the column "plan" twice',
    ],
  ])('get --from %j: exit 2, nothing sent', async (flags, expected) => {
    const { service, sandbox, from, env } = await sheet();
    const result = await runMain(['get', '--from', from, ...flags], { sandbox, env });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain(expected);
    expect(service.requests).toHaveLength(0);
  });

  it.each([
    [['get', '--column', 'a=name'], '--column works only with --from'],
    [
      ['get', '--from', 'rows.ndjson', '--column', 'a=name'],
      '--column works only with a CSV --from',
    ],
  ])('ugs %j is a usage error (exit 2)', async (argv, expected) => {
    const result = await runMain(argv, {
      env: { UGS_BASE_URL: 'http://127.0.0.1:9', UGS_API_TOKEN: API_TOKEN },
    });
    expect(result.code, show(result)).toBe(2);
    expect(result.stderr).toContain(`error: ${expected}`);
  });
});

/** The locale's decimal separator, which a semicolon file may hold unquoted. */
function comma(dialect: Dialect): string {
  return dialect.delimiter === ';' ? ',' : '.';
}
