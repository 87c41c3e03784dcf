/**
 * The registry of operations (src/commands/operations.ts): every operation is data its folder
 * declares, generic code reads that data instead of asking which operation it runs, and nothing
 * below the commands imports a command.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { changesData } from '../../src/commands/index.js';
import { entries, groupReader } from '../../src/commands/operations.js';
import { fakeService } from '../kit/fakes.js';

const SRC = join(import.meta.dirname, '..', '..', 'src');

/** `getUser` -> `get-user`: the folder an operation's id names. */
function folderOf(id: string): string {
  return id.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** Operations with a folder of their own (doctor's probe lives in the service layer, see below). */
const foldered = entries.filter(([id]) => existsSync(join(SRC, 'operations', folderOf(id))));

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Paths under src/, with forward slashes. */
const files = sourceFiles(SRC).map((file) => relative(SRC, file).split('\\').join(posix.sep));

/**
 * A command's name that is also a word of its own in a file: `profile list` (profile's own
 * subcommand) and DRF's Python type name `list` in the emulator's messages name no operation.
 */
const OTHER_MEANINGS: readonly RegExp[] = [
  /^commands\/profile\.ts:\d+ 'list'$/,
  /^emulator\/validation\.ts:\d+ 'list'$/,
  // The fast path of a local mint names the field `jwt` (`--field jwt`: the JWT itself).
  /^jwt\/fast-mint\.ts:\d+ 'jwt'$/,
];

/** The registry itself names every operation and its commands: that is its one job. */
const REGISTRY = 'commands/operations.ts';

/**
 * The operations' shared results vocabulary: each bulk command's columns and marks, and the list
 * of every command's results files that each command refuses to take for its own.
 */
const RESULTS_VOCABULARY = 'operations/user-group-records.ts';

/**
 * Literals that are an operation's name but not about the operation, each with why. The
 * emulator's store journals its own primitives `rotate` (a change of a group's token),
 * `update` (a change of its data) and `delete` (a group removed) in its data file: a format on
 * disk, not the `rotate`, `update` and `delete` commands.
 */
const NOT_ABOUT_THE_OPERATION: readonly { file: string; literal: string }[] = [
  { file: 'emulator/store.ts', literal: 'rotate' },
  { file: 'emulator/store.ts', literal: 'update' },
  { file: 'emulator/store.ts', literal: 'delete' },
];

/**
 * Where a file names an operation: a string literal that is its id, folder or a command's name
 * (or a path into its folder), or an identifier that is its id (`client.getUser`). Comments and
 * words inside messages (`ugs get --id ...`) are not names.
 */
function namings(
  file: string,
  text: string,
  names: { literals: ReadonlySet<string>; folder: string; id: string },
): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      const named = names.literals.has(node.text) || node.text.includes(`/${names.folder}/`);
      const excused = NOT_ABOUT_THE_OPERATION.some(
        (allowed) => allowed.file === file && allowed.literal === node.text,
      );
      if (named && !excused) found.push(`${file}:${at(node)} '${node.text}'`);
    } else if (ts.isIdentifier(node) && node.text === names.id) {
      found.push(`${file}:${at(node)} ${node.text}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('the registry of operations', () => {
  it('holds every operation with a complete descriptor', () => {
    expect(entries.length).toBeGreaterThan(0);
    for (const [id, entry] of entries) {
      const op = entry.operation as unknown as Record<string, unknown>;
      const what = `operation ${id}`;
      // Its wire in each dialect it is part of (at least one): an operation of the vendor's
      // Customer API only (its read-one) has no interface method and no explo path.
      const vendorWires = [op.explo, op.customer].filter((wire) => wire !== undefined);
      expect(op.method !== undefined || vendorWires.length > 0, what).toBe(true);
      if (op.method !== undefined) expect(typeof op.method, what).toBe('string');
      for (const wire of vendorWires) {
        expect(wire, what).toMatchObject({ method: expect.any(String), path: /^\/api\/.*\/$/ });
      }
      expect(op.retry, what).toMatchObject({ maxRetries: expect.any(Number) });
      expect(typeof op.body, what).toBe('function');
      expect(typeof op.secrets, what).toBe('function');
      // Its answer is read one way: as the service's envelope, or as it came.
      expect(
        [typeof op.read, typeof op.readAnswer].filter((t) => t === 'function'),
        what,
      ).toEqual(['function']);
      expect(Array.isArray(entry.operation.fields), what).toBe(true);
      expect(typeof entry.operation.changesData, what).toBe('boolean');
      for (const word of entry.operation.suggestedFor?.words ?? []) {
        expect(
          Object.keys(entry.commands ?? {}),
          `${what}: ${word} leads to a command`,
        ).not.toEqual([]);
      }
    }
  });

  it.each(foldered.map(([id, entry]) => [id, entry] as const))(
    'holds %s with its fields, history, route, bulk spec and commands',
    async (id, entry) => {
      const folder = join(SRC, 'operations', folderOf(id));
      expect(entry.operation.fields.length).toBeGreaterThan(0);
      expect(typeof (await entry.route?.())?.route.handle).toBe('function');
      const commands = Object.keys(entry.commands ?? {});
      // A read of many groups at once (the Customer API's list) records no history and takes no
      // --from: only its operation, route and command. Anything that changes data records both.
      if (entry.operation.history === undefined) {
        expect(entry.operation.changesData).toBe(false);
        expect(entry.bulk).toBeUndefined();
        expect(commands).not.toEqual([]);
        for (const file of ['operation.ts', 'route.ts', 'command.ts']) {
          expect(existsSync(join(folder, file)), `${folderOf(id)}/${file}`).toBe(true);
        }
        return;
      }
      expect(typeof entry.operation.history?.answer).toBe('function');
      expect(typeof entry.operation.history?.error).toBe('function');
      // An operation with no command of its own (doctor's probe aside, none today) has no
      // command.ts; one whose commands take no --from (`show`) has no bulk spec.
      const files = [
        ...(commands.length > 0 ? ['command.ts'] : []),
        ...(entry.bulk !== undefined ? ['bulk.ts'] : []),
      ];
      for (const file of ['operation.ts', 'route.ts', ...files]) {
        expect(existsSync(join(folder, file)), `${folderOf(id)}/${file}`).toBe(true);
      }
      if (commands.length === 0) {
        expect(entry.bulk).toBeUndefined();
        return;
      }
      // Whether its commands change data is the descriptor's word, read by the typo guard.
      for (const command of commands) {
        expect(changesData.has(command), command).toBe(entry.operation.changesData);
      }
      if (entry.bulk === undefined) {
        expect(existsSync(join(folder, 'bulk.ts')), `${folderOf(id)}/bulk.ts`).toBe(false);
        return;
      }
      const spec = (await entry.bulk())?.spec;
      expect(commands).toContain(spec?.records.command);
      expect(spec?.records.marks.statuses.length).toBeGreaterThan(0);
    },
  );

  it('every bulk command refuses the results files of every other one, in each header', async () => {
    const specs = await Promise.all(
      entries.flatMap(([, entry]) => (entry.bulk === undefined ? [] : [entry.bulk()])),
    );
    const records = specs.map(({ spec }) => spec.records);
    expect(records.map((schema) => schema.command).sort()).toEqual([
      'delete',
      'get',
      'rotate',
      'update',
    ]);
    for (const schema of records) {
      const refused = schema.others.map((other) => `${other.command}: ${other.columns.join(',')}`);
      const expected = records
        .filter((other) => other.command !== schema.command)
        .flatMap((other) =>
          [other.columns, ...(other.formerColumns ?? [])].map(
            (columns) => `${other.command}: ${columns.join(',')}`,
          ),
        );
      expect(refused.sort(), schema.command).toEqual(expected.sort());
    }
  });

  it.each(foldered.map(([id, entry]) => [id, entry] as const))(
    'no module outside the operations folders names %s',
    (id, entry) => {
      const folder = folderOf(id);
      const names = {
        literals: new Set([id, folder, ...Object.keys(entry.commands ?? {})]),
        folder,
        id,
      };
      // Operations may use one another inside their folders (a rotation reads its group back
      // with a get), as commands use them, and the results files' vocabulary they share names
      // each command's files; everything else reads their descriptors.
      const generic = files.filter(
        (file) => !/^operations\/[^/]+\//.test(file) && file !== RESULTS_VOCABULARY,
      );
      const found = generic
        .filter((file) => file !== REGISTRY)
        .flatMap((file) => namings(file, readFileSync(join(SRC, file), 'utf8'), names))
        .filter((naming) => !OTHER_MEANINGS.some((other) => other.test(naming)));
      expect(found).toEqual([]);
    },
  );

  it('the check finds a name in a literal, a path and a method call, not in comments or text', () => {
    const names = {
      literals: new Set(['getUser', 'get-user', 'get']),
      folder: 'get-user',
      id: 'getUser',
    };
    const text = [
      "// 'get' in a comment, and getUser",
      "const hint = 'run ugs get --id acme';",
      "if (command === 'get') {}",
      "import('../operations/get-user/route.js');",
      'client.getUser(request);',
      'map.get(key);',
    ].join('\n');
    expect(namings('x.ts', text, names)).toEqual([
      "x.ts:3 'get'",
      "x.ts:4 '../operations/get-user/route.js'",
      'x.ts:5 getUser',
    ]);
  });

  it('reads a group with the read that creates nothing where the dialect has one', () => {
    const client = fakeService();
    expect(groupReader(client, 'customer', 'a', 'A')?.createsMissing).toBe(false);
    expect(groupReader(client, 'interface', 'a', 'A')?.createsMissing).toBe(true);
    expect(groupReader(client, 'explo', 'a', 'A')?.createsMissing).toBe(true);
  });

  it('nothing below the commands imports a command', () => {
    const importers: string[] = [];
    for (const file of files) {
      const info = ts.preProcessFile(readFileSync(join(SRC, file), 'utf8'), true, true);
      for (const { fileName } of info.importedFiles) {
        if (!fileName.startsWith('.')) continue;
        const target = posix.join(dirname(file), fileName).replace(/\.js$/, '.ts');
        if (posix.basename(target) !== 'command.ts') continue;
        const allowed =
          file.startsWith('cli/') ||
          file.startsWith('commands/') ||
          file === 'main.ts' ||
          /^operations\/[^/]+\/command\.ts$/.test(file);
        if (!allowed) importers.push(`${file} imports ${target}`);
      }
    }
    expect(importers).toEqual([]);
  });
});
