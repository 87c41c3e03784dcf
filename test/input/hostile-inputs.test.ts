/**
 * Hostile or mistaken input: JSON nested past the limit from every source, ids and names that
 * differ from what was meant only invisibly, a timeout that would round to "no limit", and
 * answers that cost more to draw than to fetch.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { MAX_JSON_DEPTH, parseTimeoutSeconds } from '../../src/input/parse.js';
import type { Prompter, Validate } from '../../src/input/prompter.js';
import { type GetOptions, parseGetFlags, runGet } from '../../src/operations/get-user/command.js';
import { renderRecordTable, renderTable, type TableLayout } from '../../src/output/results.js';
import { plainStyle } from '../../src/output/style.js';
import type { UserGroup } from '../../src/service/service.js';
import { USER_GROUP_FIELD_ORDER } from '../../src/service/user-group.js';
import { tempDir } from '../kit/binary.js';
import {
  FakeService,
  groupResult,
  makeDeps,
  makeIO,
  terminalIO,
  usageMessage,
} from '../kit/fakes.js';

const dir = tempDir('inputs');

function nested(depth: number, open = '{"a":', close = '}', leaf = '1'): string {
  return `${open.repeat(depth)}${leaf}${close.repeat(depth)}`;
}
/** A top-level object holding arrays nested to `depth` in all. */
function nestedArrays(depth: number): string {
  return `{"a":${'['.repeat(depth - 1)}1${']'.repeat(depth - 1)}}`;
}

type Flags = Parameters<typeof parseGetFlags>[0];
const base: Flags = { id: 'acme', name: 'Acme', mapping: [], property: [] };

describe('JSON nested deeper than the limit is a usage error, from every source', () => {
  const shapes: Record<string, (depth: number) => string> = {
    objects: (d) => nested(d),
    arrays: nestedArrays,
    'objects in a string-looking mix': (d) => `{"s":"{{{[[[","x":${nested(d - 1)}}`,
  };
  for (const [shape, make] of Object.entries(shapes)) {
    for (const flag of ['properties', 'mappingJson'] as const) {
      const name = flag === 'properties' ? '--properties' : '--mapping-json';
      it(`${name} inline, ${shape}`, async () => {
        const message = await usageMessage(
          parseGetFlags({ ...base, [flag]: make(MAX_JSON_DEPTH + 1) }, makeDeps()),
        );
        expect(message).toContain(name);
        expect(message).toMatch(/levels deep/);
      });
      it(`${name} @file, ${shape}, 100,000 levels`, async () => {
        const file = join(dir, `${flag}-${shape.length}.json`);
        writeFileSync(file, make(100_000));
        expect(
          await usageMessage(parseGetFlags({ ...base, [flag]: `@${file}` }, makeDeps())),
        ).toMatch(/levels deep/);
      });
      it(`${name} - (stdin), ${shape}`, async () => {
        const deps = makeDeps({ io: makeIO({ stdinText: make(MAX_JSON_DEPTH + 1) }) });
        expect(await usageMessage(parseGetFlags({ ...base, [flag]: '-' }, deps))).toMatch(
          /levels deep/,
        );
      });
    }
  }

  it('exactly the limit is accepted (mapping values are checked separately)', async () => {
    const options = await parseGetFlags(
      { ...base, properties: nested(MAX_JSON_DEPTH) },
      makeDeps(),
    );
    expect(options.properties).toBeDefined();
  });
});

describe('ids and names must be what they look like', () => {
  const bad: Record<string, string> = {
    'U+FFFD from invalid UTF-8': 'glob\ufffdex',
    'trailing space': 'globex ',
    'leading space': ' globex',
    'trailing tab': 'globex\t',
    'no-break space at the end': 'globex\u00a0',
    'ESC sequence': 'glo\u001b[31mbex',
    'C1 CSI': 'glo\u009bbex',
    DEL: 'globex\u007f',
    newline: 'glo\nbex',
    'line separator': 'glo\u2028bex',
  };
  for (const [label, value] of Object.entries(bad)) {
    for (const flag of ['id', 'name'] as const) {
      it(`--${flag} with ${label}: usage error, value shown escaped`, async () => {
        const message = await usageMessage(parseGetFlags({ ...base, [flag]: value }, makeDeps()));
        expect(message).toContain(`--${flag}`);
        // Shown escaped: U+FFFD as its code, controls as \uXXXX.
        expect(message).not.toContain('\ufffd');
        // biome-ignore lint/suspicious/noControlCharactersInRegex: none may reach the terminal
        expect(message).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u2028]/);
      });
      it(`a prompted ${flag} with ${label}: usage error before any request`, async () => {
        const service = new FakeService({ get: () => groupResult({}) });
        const prompts: [string, string][] =
          flag === 'id'
            ? [['User group id', value]]
            : [
                ['User group id', 'acme'],
                ['User group name', value],
              ];
        // A prompter that takes any answer without running its validator: the check after the
        // prompt is the backstop; the validator itself refuses the answer as it is typed.
        const validators: Validate[] = [];
        const prompter: Prompter = {
          input: async (_message, options) => {
            if (options?.validate) validators.push(options.validate);
            return prompts.shift()?.[1] ?? '';
          },
          password: () => Promise.reject(new Error('unexpected password prompt')),
          confirm: () => Promise.reject(new Error('unexpected confirmation')),
        };
        const deps = { ...makeDeps({ io: terminalIO(), service }), prompter };
        const opts: GetOptions = {
          id: undefined,
          name: undefined,
          mapping: undefined,
          properties: undefined,
          format: { kind: 'table' },
        };
        await usageMessage(runGet(opts, deps));
        expect(service.gets).toEqual([]);
        expect(validators.at(-1)?.(value)).not.toBe(true);
      });
    }
  }

  it('runGet itself refuses, whatever built the options', async () => {
    const service = new FakeService({ get: () => groupResult({}) });
    await usageMessage(
      runGet(
        {
          id: 'acme ',
          name: 'Acme',
          mapping: undefined,
          properties: undefined,
          format: { kind: 'table' },
        },
        makeDeps({ service }),
      ),
    );
    expect(service.gets).toEqual([]);
  });

  it('inner spaces and non-ASCII letters are fine', async () => {
    const options = await parseGetFlags(
      { ...base, id: 'ünï cödé', name: 'Acme Corp 株式会社' },
      makeDeps(),
    );
    expect(options.id).toBe('ünï cödé');
  });
});

describe('--timeout below a millisecond', () => {
  it.each(['0.0009', '0.0004', '.0001', '0.00049'])('%s is a usage error', (text) => {
    expect(() => parseTimeoutSeconds(text)).toThrow(UsageError);
  });
  it('0.001 is the smallest accepted', () => {
    expect(parseTimeoutSeconds('0.001')).toBe(0.001);
  });
});

describe('get-or-create says when the group already existed', () => {
  const run = async (created: boolean | undefined, format: GetOptions['format']) => {
    const io = makeIO();
    const service = new FakeService({
      get: () => groupResult({}, created === undefined ? {} : { new_user_group: created }),
    });
    await runGet(
      { id: 'acme', name: 'New Name', mapping: undefined, properties: { plan: 'pro' }, format },
      makeDeps({ io, service }),
    );
    return io;
  };
  it('an existing group: one note line on stderr', async () => {
    const io = await run(false, { kind: 'table' });
    const notes = io.stderr.text.split('\n').filter((line) => line.startsWith('note:'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(/not applied/);
    expect(io.stdout.text).not.toMatch(/note:/);
  });
  it.each([true, undefined])('new_user_group %s: no note', async (created) => {
    expect((await run(created, { kind: 'table' })).stderr.text).not.toMatch(/note:/);
  });
  it.each([{ kind: 'json' }, { kind: 'field', name: 'token' }] as const)(
    'no note with %j',
    async (format) => {
      expect((await run(false, format)).stderr.text).toBe('');
    },
  );
});

describe('api_environment_tag', () => {
  it('is among the known fields, right after environment', async () => {
    const group = {
      zzz: 1,
      api_environment_tag: 'Customer',
      token: 't',
      provided_id: 'a',
      environment: 'prod',
    } as unknown as UserGroup;
    const table = await renderRecordTable(group, plainStyle, USER_GROUP_FIELD_ORDER);
    const order = ['provided_id', 'token', 'environment', 'api_environment_tag', 'zzz'].map((f) =>
      table.indexOf(`│ ${f}`),
    );
    expect(order).toEqual([...order].sort((a, b) => a - b));
  });
  it('--field api_environment_tag prints it', async () => {
    const io = makeIO();
    const service = new FakeService({
      get: () => groupResult({ api_environment_tag: 'Testing', provided_id: 'a' }),
    });
    await runGet(
      {
        id: 'a',
        name: 'A',
        mapping: undefined,
        properties: undefined,
        format: { kind: 'field', name: 'api_environment_tag' },
      },
      makeDeps({ io, service }),
    );
    expect(io.stdout.text).toBe('Testing\n');
  });
});

describe('rendering a 1 MiB answer is linear', () => {
  const plain = plainStyle;
  // The best of up to six runs, stopping at the first within `bound`: a shared machine's pauses
  // (GC, other processes) only ever add time, while a renderer that is not linear never gets
  // within the bound however often it is tried.
  const time = async (rows: [string, string][], layout: TableLayout | undefined, bound: number) => {
    let best = Number.POSITIVE_INFINITY;
    let out = '';
    for (let run = 0; run < 6 && best >= bound; run++) {
      const started = performance.now();
      out = await renderTable(rows, plain, layout);
      best = Math.min(best, performance.now() - started);
    }
    return { ms: best, out };
  };
  /**
   * This machine's speed right now, measured the same way: one pass over every code point of
   * the rows. Rendering costs at most ~20 such passes today; a renderer quadratic in the size
   * costs thousands (the old one took 23 s for the first size). A ratio, so a loaded runner,
   * which slows both, cannot fail it.
   */
  const scan = (rows: [string, string][]) => {
    let best = Number.POSITIVE_INFINITY;
    for (let run = 0; run < 3; run++) {
      const started = performance.now();
      let sum = 0;
      for (const [key, value] of rows) for (const char of key + value) sum += char.length;
      if (sum < 0) throw new Error('unreachable');
      best = Math.min(best, performance.now() - started);
    }
    return best;
  };
  const shapes: Record<string, (scale: number) => [string, string][]> = {
    'many fields': (n) => Array.from({ length: 60_000 * n }, (_, i) => [`k${i}`, `v${i}`]),
    'one huge value': (n) => [['token', 'x'.repeat(900_000 * n)]],
    'one huge wide value': (n) => [['name', '漢'.repeat(300_000 * n)]],
    'long key': (n) => [['k'.repeat(900_000 * n), 'v']],
    'many wide fields': (n) => Array.from({ length: 20_000 * n }, (_, i) => [`鍵${i}`, `値😀${i}`]),
  };
  const layouts: Record<string, TableLayout | undefined> = {
    'unlimited box': undefined,
    '80 columns (wrapped)': { kind: 'box', columns: 80, ascii: false },
    'key<TAB>value lines': { kind: 'lines' },
  };
  for (const [shape, make] of Object.entries(shapes)) {
    it.each(Object.keys(layouts))(
      `${shape}, %s: a small multiple of one pass over the text, and twice the size costs about twice the time`,
      async (name) => {
        const layout = layouts[name];
        const rows = make(1);
        const baseline = scan(rows);
        const one = await time(rows, layout, 150 * baseline);
        const two = await time(make(2), layout, Math.max(one.ms * 3.5, 150 * baseline));
        const context = `${Math.round(one.ms)} ms and ${Math.round(two.ms)} ms; one pass ${baseline.toFixed(1)} ms`;
        expect(one.ms, context).toBeLessThan(150 * baseline);
        // Generous: quadratic would be 4x; the floor absorbs noise on tiny timings.
        expect(two.ms, context).toBeLessThan(Math.max(one.ms * 3.5, 150 * baseline));
        const lines = one.out.split('\n');
        expect(new Set(lines.map((line) => line.length === 0)).has(true)).toBe(false);
      },
      30_000,
    );
  }

  it('a small and a big table draw the same box', async () => {
    const rows: [string, string][] = [
      ['provided_id', 'acme'],
      ['name', '株式会社 Acme 😀'],
      ['token', 'x'.repeat(10)],
    ];
    const small = await renderTable(rows, plain);
    const padded = [
      ...rows,
      ...Array.from({ length: 300 }, (_, i): [string, string] => [`k${i}`, 'v']),
    ];
    const big = await renderTable(padded, plain);
    const bigLines = big.split('\n');
    const smallLines = small.split('\n');
    // Same rows, drawn alike (widths of the key column differ only by the longer keys).
    expect(bigLines[1]?.startsWith('│ provided_id')).toBe(true);
    expect(smallLines[2]).toMatch(/^│ name +│ 株式会社 Acme 😀 +│$/);
    expect(bigLines[2]).toMatch(/^│ name +│ 株式会社 Acme 😀 +│$/);
    expect(bigLines.at(-1)?.startsWith('└')).toBe(true);
  });
});
