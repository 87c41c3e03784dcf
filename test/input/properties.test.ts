// Bad input: JSON from a flag, a file and stdin, and whole `get` flag sets, each either
// parse to exactly what they mean or are a usage error, and none of them sends a request.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.js';
import { parseJsonSource } from '../../src/input/parse.js';
import { readJsonSource } from '../../src/input/values.js';
import { parseGetFlags, runGet } from '../../src/operations/get-user/command.js';
import { tempDir } from '../kit/binary.js';
import { echoService, makeDeps, makeIO } from '../kit/fakes.js';

const dir = tempDir('input-props');

let fileCount = 0;
function fileWith(text: string): string {
  const path = join(dir, `input-${fileCount++}.json`);
  writeFileSync(path, text);
  return path;
}

/** Reads a source given as the flag's text, with `stdinText` on stdin. */
function read(flagValue: string, stdinText = '') {
  const io = makeIO({ stdinText });
  return readJsonSource(parseJsonSource(flagValue, '--properties'), '--properties', io);
}

async function outcome(promise: Promise<unknown>): Promise<{ value?: unknown; error?: unknown }> {
  try {
    return { value: await promise };
  } catch (error) {
    return { error };
  }
}

const jsonObject = fc.dictionary(fc.string(), fc.jsonValue());
const anyText = fc.oneof(fc.string(), fc.json(), fc.string({ unit: 'binary' }));

describe('JSON objects from the flag, @file and stdin', () => {
  it('property: any JSON object reads back exactly, from each source', async () => {
    await fc.assert(
      fc.asyncProperty(jsonObject, async (object) => {
        const text = JSON.stringify(object);
        const expected = JSON.parse(text);
        expect(await read(text)).toEqual(expected);
        expect(await read(`@${fileWith(text)}`)).toEqual(expected);
        expect(await read('-', text)).toEqual(expected);
        // A byte-order mark, as Windows editors write it, changes nothing.
        expect(await read(`@${fileWith(`\ufeff${text}`)}`)).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('property: any text is an object or a usage error, the same from each source', async () => {
    await fc.assert(
      fc.asyncProperty(anyText, async (text) => {
        const fromFile = await outcome(read(`@${fileWith(text)}`));
        const fromStdin = await outcome(read('-', text));
        for (const result of [fromFile, fromStdin]) {
          if (result.error !== undefined) {
            expect(result.error).toBeInstanceOf(UsageError);
          } else {
            expect(typeof result.value).toBe('object');
            expect(Array.isArray(result.value)).toBe(false);
            expect(result.value).not.toBeNull();
          }
        }
        expect(fromStdin.value).toEqual(fromFile.value);
        if (!text.startsWith('@') && text !== '-') {
          const inline = await outcome(read(text));
          expect(inline.value).toEqual(fromFile.value);
          if (inline.error !== undefined) expect(inline.error).toBeInstanceOf(UsageError);
        }
      }),
      { numRuns: 200 },
    );
  });
});

describe('whole `get` flag sets', () => {
  const pair = fc.tuple(fc.string(), fc.string()).map(([k, v]) => `${k}=${v}`);
  const flagText = fc.oneof(pair, fc.string());

  it('property: parse to exactly the request sent, or a usage error with nothing sent', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(flagText, { maxLength: 4 }),
        fc.array(flagText, { maxLength: 4 }),
        fc.option(fc.oneof(fc.json(), fc.string()), { nil: undefined }),
        async (mapping, property, propertiesJson) => {
          const service = echoService();
          // A closed, empty stdin: `--properties -` then is a usage error, not a wait.
          const deps = makeDeps({ service, io: makeIO({ stdinText: '' }) });
          const parsed = await outcome(
            parseGetFlags(
              {
                id: 'acme',
                name: 'Acme',
                mapping,
                property,
                ...(propertiesJson !== undefined && { properties: propertiesJson }),
              },
              deps,
            ),
          );
          if (parsed.error !== undefined) {
            expect(parsed.error).toBeInstanceOf(UsageError);
            expect(deps.targets).toHaveLength(0);
            return;
          }
          await runGet(parsed.value as Awaited<ReturnType<typeof parseGetFlags>>, deps);
          expect(service.gets).toHaveLength(1);
          const sent = service.gets[0];
          // Every pair arrives as key and value, split at the first '='.
          for (const text of mapping) {
            const at = text.indexOf('=');
            expect(sent?.mapping?.[text.slice(0, at)]).toBe(text.slice(at + 1));
          }
          for (const text of property) {
            const at = text.indexOf('=');
            expect(sent?.properties?.[text.slice(0, at)]).toBe(text.slice(at + 1));
          }
          if (mapping.length === 0) expect(sent?.mapping).toBeUndefined();
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('a key given twice in --properties or --mapping-json', () => {
  // JSON.parse would keep the last one: the group would get "free" where the user wrote "pro".
  it.each([
    ['--properties', 'properties', '{"plan":"pro","plan":"free"}', '"plan"'],
    ['--properties', 'properties', '{"limits":{"seats":1,"seats":9}}', '"limits"."seats"'],
    ['--mapping-json', 'mappingJson', '{"sales":"acme_db","sales":"evil_db"}', '"sales"'],
  ] as const)(
    '%s %s is a usage error naming %s, from the flag, a file and stdin',
    async (flag, field, text, key) => {
      for (const [value, stdinText] of [
        [text, ''],
        [`@${fileWith(text)}`, ''],
        ['-', text],
      ]) {
        const service = echoService();
        const deps = makeDeps({ service, io: makeIO({ stdinText }) });
        const result = await outcome(
          parseGetFlags(
            { id: 'acme', name: 'Acme', mapping: [], property: [], [field]: value },
            deps,
          ),
        );
        expect(result.error).toBeInstanceOf(UsageError);
        expect((result.error as UsageError).message).toContain(`${flag}: `);
        expect((result.error as UsageError).message).toContain(`has the key ${key} more than once`);
        expect(service.gets).toHaveLength(0);
      }
    },
  );
});

describe('JSON whose double quotes a shell removed (PowerShell 5.1, cmd.exe)', () => {
  async function hintFor(flagValue: string, flag = '--properties'): Promise<string> {
    const io = makeIO();
    const { error } = await outcome(readJsonSource(parseJsonSource(flagValue, flag), flag, io));
    expect(error).toBeInstanceOf(UsageError);
    return (error as UsageError).hint ?? '';
  }

  it.each([
    ['{plan:pro}', '--properties', '--property plan=pro'],
    ['{plan:pro,seats:10}', '--properties', '--property plan=pro --property seats=10'],
    ['{sales:acme_db}', '--mapping-json', '--mapping sales=acme_db'],
    ['{plan: [pro]}', '--properties', '--property plan=pro'],
  ])('%s to %s: a file or %s, never the broken form again', async (value, flag, pairs) => {
    const hint = await hintFor(value, flag);
    expect(hint).toMatch(/removed the JSON's double quotes/);
    expect(hint).toMatch(new RegExp(`${flag} '@\\w+\\.json'`));
    expect(hint).toContain(pairs);
    expect(hint).not.toContain(`'{"`);
  });

  it('JSON with its quotes that is still wrong keeps the plain example', async () => {
    const hint = await hintFor('{"plan":pro}');
    expect(hint).toBe(`pass a JSON object, e.g. --properties '{"plan":"pro"}'`);
  });

  it('a file that is not JSON is not blamed on the shell', async () => {
    const hint = await hintFor(`@${fileWith('{plan:pro}')}`);
    expect(hint).not.toMatch(/shell/);
  });
});
