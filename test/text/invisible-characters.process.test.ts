/**
 * Ids and names that differ from what they look like: invisible format characters (Unicode
 * category Cf: zero-width space, word joiner, bidi controls such as U+202E, which also turns the
 * rest of a line around on screen) and text that only Unicode normalisation tells apart. A
 * group id is a key: `acme` and `acme` + U+200B would be two groups that read the same.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileSource } from '../../src/bulk/input-source.js';
import { quoteVisible } from '../../src/input/parse.js';
import { type GetOptions, parseGetFlags, runGet } from '../../src/operations/get-user/command.js';
import { recoveryCommand, recoveryHint } from '../../src/operations/rotate-token/command.js';
import { escapeControls, unicodeEscape } from '../../src/platform/io.js';
import { escapeRawControls } from '../../src/text/json-text.js';
import { quote } from '../../src/text/message.js';
import { openGetInput, openRotateInput } from '../kit/bulk.js';
import { FakeService, groupResult, makeDeps, terminalIO, usageMessage } from '../kit/fakes.js';
import { makeSandbox, runUgs, serviceForTest, tempDir } from '../kit/index.js';

const dir = tempDir('invisible');
type Flags = Parameters<typeof parseGetFlags>[0];
const base: Flags = { id: 'acme', name: 'Acme', mapping: [], property: [] };

let files = 0;
function ndjsonFile(rows: object[]): string {
  const path = join(dir, `rows-${files++}.ndjson`);
  writeFileSync(path, rows.map((row) => JSON.stringify(row)).join('\n'));
  return path;
}

/** Cf characters, by code point; none may be in an id. */
const FORMAT: [string, string][] = [
  ['U+200B', '\u200b'], // zero width space
  ['U+2060', '\u2060'], // word joiner
  ['U+202E', '\u202e'], // right-to-left override
  ['U+202A', '\u202a'], // left-to-right embedding
  ['U+2066', '\u2066'], // left-to-right isolate
  ['U+200F', '\u200f'], // right-to-left mark
  ['U+061C', '\u061c'], // Arabic letter mark
  ['U+FEFF', '\ufeff'], // zero width no-break space (BOM)
  ['U+00AD', '\u00ad'], // soft hyphen
  ['U+200D', '\u200d'], // zero width joiner: fine in a name, never in an id
  ['U+200C', '\u200c'], // zero width non-joiner: likewise
];
/** Those a name may not hold either: invisible, or reordering what follows. */
const NOT_IN_NAMES = FORMAT.filter(([code]) => code !== 'U+200D' && code !== 'U+200C');

/** Names that need U+200C/U+200D (Persian, Indic scripts, emoji) or tag characters (flags). */
const GOOD_NAMES: [string, string][] = [
  ['Persian with a zero width non-joiner', 'می\u200cخواهم'],
  ['Devanagari with a zero width joiner', 'क्\u200dष'],
  ['an emoji ZWJ sequence', 'Team \u{1f469}\u200d\u{1f4bb}'],
  [
    'a subdivision flag (tag characters)',
    '\u{1f3f4}\u{e0067}\u{e0062}\u{e0073}\u{e0063}\u{e0074}\u{e007f} Scotland',
  ],
];

describe('an id with an invisible format character is refused, naming it by code point', () => {
  for (const [code, char] of FORMAT) {
    const id = `acme${char}`;
    it(`--id with ${code}`, async () => {
      const message = await usageMessage(parseGetFlags({ ...base, id }, makeDeps()));
      expect(message).toContain('--id');
      expect(message).toContain(code);
      // Shown as an escape, not obeyed: a raw U+202E would turn the rest of the line around.
      expect(message).not.toContain(char);
    });
    it(`a prompted id with ${code}, before any request`, async () => {
      const service = new FakeService({ get: () => groupResult({}) });
      const deps = makeDeps({ io: terminalIO(), service, prompts: [['User group id', id]] });
      const opts: GetOptions = {
        id: undefined,
        name: undefined,
        mapping: undefined,
        properties: undefined,
        format: { kind: 'table' },
      };
      // The prompt refuses it as it is typed, naming the code point.
      await expect(runGet(opts, deps)).rejects.toThrow(/rejected/);
      expect(deps.prompter.calls[0]?.validate?.(id)).toContain(code);
      expect(service.gets).toEqual([]);
    });
    it(`a bulk row's user_group_id with ${code}, in get and rotate`, async () => {
      const get = await usageMessage(
        openGetInput(fileSource(ndjsonFile([{ user_group_id: id, name: 'A' }])), 'ndjson'),
      );
      expect(get).toContain(
        `row 1 (line 1): user_group_id "acme\\u${code.slice(2).toLowerCase()}" contains ${code}`,
      );
      const rotate = await usageMessage(
        openRotateInput(
          fileSource(ndjsonFile([{ current_token: 'tok-1234', user_group_id: id }])),
          'ndjson',
        ),
      );
      expect(rotate).toContain(code);
    });
  }
});

describe('a name may not hold bidi controls, zero-width space or word joiner', () => {
  for (const [code, char] of NOT_IN_NAMES) {
    it(`--name with ${code}`, async () => {
      const message = await usageMessage(
        parseGetFlags({ ...base, name: `Ac${char}me` }, makeDeps()),
      );
      expect(message).toContain('--name');
      expect(message).toContain(code);
      expect(message).not.toContain(char);
    });
    it(`a bulk row's name with ${code}`, async () => {
      const message = await usageMessage(
        openGetInput(
          fileSource(ndjsonFile([{ user_group_id: 'a', name: `Ac${char}me` }])),
          'ndjson',
        ),
      );
      expect(message).toContain(
        `row 1 (line 1): name "Ac\\u${code.slice(2).toLowerCase()}me" contains ${code}`,
      );
    });
  }

  for (const [label, name] of GOOD_NAMES) {
    it(`keeps ${label}, from a flag and a bulk row`, async () => {
      expect((await parseGetFlags({ ...base, name }, makeDeps())).name).toBe(name);
      const input = await openGetInput(
        fileSource(ndjsonFile([{ user_group_id: 'a', name }])),
        'ndjson',
      );
      expect(input.rowCount).toBe(1);
    });
  }
});

describe('bulk ids equal once NFC-normalised are duplicates', () => {
  it('café written precomposed and decomposed is one id twice', async () => {
    const path = ndjsonFile([
      { user_group_id: 'caf\u00e9', name: 'A' },
      { user_group_id: 'other', name: 'B' },
      { user_group_id: 'cafe\u0301', name: 'C' },
    ]);
    const message = await usageMessage(openGetInput(fileSource(path), 'ndjson'));
    expect(message).toContain(
      'row 3 (line 3): user_group_id "cafe\u0301" is also in row 1 (the same id once Unicode-normalised, NFC)',
    );
  });

  it('a repeat is exact when any earlier row wrote it so, whichever form came first', async () => {
    const path = ndjsonFile(
      ['cafe\u0301', 'caf\u00e9', 'caf\u00e9', 'cafe\u0301', 'n\u00e9', 'ne\u0301', 'ne\u0301'].map(
        (id, i) => ({ user_group_id: id, name: `N${i}` }),
      ),
    );
    const message = await usageMessage(openGetInput(fileSource(path), 'ndjson'));
    const note = ' (the same id once Unicode-normalised, NFC)';
    expect(message.split('\n').filter((line) => line.trim().startsWith('row '))).toEqual([
      `  row 2 (line 2): user_group_id "caf\u00e9" is also in row 1${note}`,
      '  row 3 (line 3): user_group_id "caf\u00e9" is also in row 1',
      '  row 4 (line 4): user_group_id "cafe\u0301" is also in row 1',
      `  row 6 (line 6): user_group_id "ne\u0301" is also in row 5${note}`,
      '  row 7 (line 7): user_group_id "ne\u0301" is also in row 5',
    ]);
  });

  it('an exact repeat says so without the note; distinct ids pass', async () => {
    const repeat = await usageMessage(
      openGetInput(
        fileSource(
          ndjsonFile([
            { user_group_id: 'x', name: 'A' },
            { user_group_id: 'x', name: 'B' },
          ]),
        ),
        'ndjson',
      ),
    );
    expect(repeat).toContain('row 2 (line 2): user_group_id "x" is also in row 1');
    expect(repeat).not.toContain('NFC');
    const input = await openGetInput(
      fileSource(
        ndjsonFile([
          { user_group_id: 'cafe', name: 'A' },
          { user_group_id: 'café', name: 'B' },
        ]),
      ),
      'ndjson',
    );
    expect(input.rowCount).toBe(2);
  });
});

describe('the built binary', () => {
  it('ugs get --id with U+200B is exit 2 naming U+200B, and sends nothing', async () => {
    const service = await serviceForTest(['invisible-api-token']);
    const result = await runUgs(['get', '--id', 'acme\u200b', '--name', 'Acme', '--json'], {
      sandbox: makeSandbox(),
      env: { UGS_BASE_URL: service.url, UGS_API_TOKEN: 'invisible-api-token' },
    });
    expect(result.code).toBe(2);
    expect(result.stdout).toBe('');
    expect(result.stderr).toContain('U+200B');
    expect(result.stderr).not.toContain('\u200b');
    expect(service.requests).toHaveLength(0);
  });
});

describe('characters shown as \\u escapes read back as themselves', () => {
  // A tag character and an emoji (above U+FFFF: a surrogate pair in JSON), BEL, zero-width space.
  const CHARACTERS: [string, string, string][] = [
    ['U+E0041', '\u{E0041}', '\\udb40\\udc41'],
    ['U+1F600', '\u{1F600}', '\\ud83d\\ude00'],
    ['U+0007', '\u0007', '\\u0007'],
    ['U+200B', '\u200b', '\\u200b'],
  ];
  const target = { baseUrl: new URL('https://ugs.example.com'), apiToken: 'api-token-0123456789' };

  describe.each(CHARACTERS)('%s', (_code, char, escaped) => {
    const text = `a${char}b`;
    // What each function escapes: controls always; invisible (Cf) characters where shown for
    // pasting; an emoji is a visible character that pastes, so it stays as it is.
    const visible = char === '\u{1F600}' ? char : escaped;
    const control = char === '\u0007' ? escaped : char;

    it('unicodeEscape writes one \\uXXXX per UTF-16 code unit', () => {
      expect(unicodeEscape(char)).toBe(escaped);
      expect(JSON.parse(`"${unicodeEscape(char)}"`)).toBe(char);
    });

    it('escapeControls', () => {
      expect(escapeControls(text)).toBe(`a${control}b`);
    });

    it('quote, which JSON.parse reads back', () => {
      expect(quote(text)).toBe(`"a${control}b"`);
      expect(JSON.parse(quote(text))).toBe(text);
    });

    it('quoteVisible, which JSON.parse reads back', () => {
      expect(quoteVisible(text)).toBe(`"a${visible}b"`);
      expect(JSON.parse(quoteVisible(text))).toBe(text);
    });

    it('escapeRawControls leaves the JSON text as JSON.stringify wrote it', () => {
      expect(escapeRawControls(JSON.stringify(text))).toBe(JSON.stringify(text));
      expect(JSON.parse(escapeRawControls(JSON.stringify(text)))).toBe(text);
    });

    it('the recovery command shows the name escaped as the messages do', () => {
      expect(recoveryCommand({ provided_id: 'acme', name: text }, makeDeps())).toBe(
        `ugs get --id acme --name 'a${visible}b' --must-exist --field token`,
      );
    });

    it('the recovery hint: the id as quoteVisible shows it, a JSON body that parses back', () => {
      // An id with a zero-width space cannot be pasted: the hint gives the JSON request.
      const id = `acme\u200b${char}`;
      const hint = recoveryHint({ provided_id: id, name: text }, makeDeps(), target);
      expect(hint).toContain(quoteVisible(id));
      expect(JSON.parse(quoteVisible(id))).toBe(id);
      const body = /-d '([^']*)'`$/.exec(hint)?.[1] ?? '';
      expect(body).toMatch(/^[\x20-\x7e]+$/);
      expect(JSON.parse(body)).toEqual({ user_group_id: id, name: text });
    });
  });
});
