/**
 * The layers of src/, lowest first. A file may import (statically, for types only, or with
 * `import()`) files of its own layer and of the layers below it, never of a layer above: so no
 * two folders import each other, and a folder's place in this list says what it may use. A new
 * folder must be placed here before anything imports it. Each operation's folder
 * (`operations/<name>/`) sits above everything it is made of (the service's `Operation`, the
 * emulator's routes, bulk specs, the command kit), and nothing below the commands imports it:
 * the service, the emulator and bulk runs are handed the operations they run.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, posix, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = join(import.meta.dirname, '..', '..', 'src');

const LAYERS: readonly (readonly [name: string, paths: readonly string[]])[] = [
  ['errors', ['errors.ts']],
  ['vendor: the third-party libraries, each behind one file', ['vendor/']],
  ['platform: streams, guards, version, compile cache', ['platform/']],
  ['text: escaping, redaction, the JSON text reader, suggestions', ['text/']],
  ['fs: durable files and file locks', ['fs/']],
  ['input: flag values, capped reads, the prompter', ['input/']],
  ['jwt: embed JWTs (durations, origins, the compact form; jose behind import())', ['jwt/']],
  ['output: printing, styles, CI masking, debug traces', ['output/']],
  ['transport: HTTP on undici, network probes', ['transport/']],
  ['config: the config file and the credential store', ['config/']],
  ['service: dialects, rates, answers, operations as data, the client', ['service/']],
  ['emulator: `ugs serve`, handed the routes it serves', ['emulator/']],
  ['history: the token history', ['history/']],
  ['context: settings, credentials, profiles, the dependencies of a run', ['context/']],
  ['bulk: `--from` runs, handed an operation spec', ['bulk/']],
  ['doctor: the checks of `ugs doctor`', ['doctor/']],
  [
    'cli: the command kit (shared flags, help, completion engine) and the default factory',
    ['cli/'],
  ],
  ['operations: one folder per operation of the service, and their registry', ['operations/']],
  ['commands: commands that are not operations, and the list of every command', ['commands/']],
  ['main', ['main.ts']],
];

/** At most this many files directly in src/: everything else lives in a layer's folder. */
const MAX_LOOSE_FILES = 3;

interface Import {
  from: string;
  to: string;
}

function layerOf(path: string, layers = LAYERS): number {
  return layers.findIndex(([, paths]) =>
    paths.some((p) => (p.endsWith('/') ? path.startsWith(p) : path === p)),
  );
}

/** Imports that go up the layers, and files that belong to no layer. */
function violations(imports: readonly Import[], layers = LAYERS): string[] {
  const found: string[] = [];
  for (const { from, to } of imports) {
    const [a, b] = [layerOf(from, layers), layerOf(to, layers)];
    if (a < 0 || b < 0) found.push(`${a < 0 ? from : to} is in no layer`);
    else if (b > a) found.push(`${from} (${layers[a]?.[0]}) imports ${to} (${layers[b]?.[0]})`);
  }
  return [...new Set(found)];
}

/** Pairs of top-level folders of src/ that import each other, in either direction. */
function twoWayFolders(imports: readonly Import[]): string[] {
  const folderOf = (path: string) => (path.includes('/') ? path.split('/')[0] : path);
  const edges = new Set(
    imports
      .map(({ from, to }) => [folderOf(from), folderOf(to)] as const)
      .filter(([a, b]) => a !== b)
      .map(([a, b]) => `${a}>${b}`),
  );
  return [...edges]
    .map((edge) => edge.split('>') as [string, string])
    .filter(([a, b]) => a < b && edges.has(`${b}>${a}`))
    .map(([a, b]) => `${a} <-> ${b}`);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

/** Every relative import of every file under src/, type-only and dynamic ones included. */
function importsOfSrc(): Import[] {
  return sourceFiles(SRC).flatMap((file) => {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    return [
      ...info.importedFiles,
      ...(info.ambientExternalModules ?? []).map((fileName) => ({ fileName })),
    ]
      .map(({ fileName }) => fileName)
      .filter((spec) => spec.startsWith('.'))
      .map((spec) => join(dirname(file), spec).replace(/\.js$/, '.ts'))
      .filter((target) => target.startsWith(`${SRC}/`))
      .map((target) => ({
        from: relative(SRC, file).split('\\').join(posix.sep),
        to: relative(SRC, target).split('\\').join(posix.sep),
      }));
  });
}

describe('the layers of src/', () => {
  const imports = importsOfSrc();

  it('no import goes up the layers, and every file is in a layer', () => {
    expect(imports.length).toBeGreaterThan(300);
    expect(violations(imports)).toEqual([]);
  });

  it('no two folders import each other', () => {
    expect(twoWayFolders(imports)).toEqual([]);
  });

  it(`at most ${MAX_LOOSE_FILES} files lie directly in src/`, () => {
    const loose = readdirSync(SRC).filter((name) => statSync(join(SRC, name)).isFile());
    expect(loose.length, loose.join(', ')).toBeLessThanOrEqual(MAX_LOOSE_FILES);
  });

  it('the check catches an upward import, a file in no layer and a two-way pair', () => {
    const planted = [
      { from: 'text/redact.ts', to: 'service/dialect.ts' },
      { from: 'service/dialect.ts', to: 'text/redact.ts' },
      { from: 'stray.ts', to: 'errors.ts' },
    ];
    expect(violations(planted)).toEqual([
      'text/redact.ts (text: escaping, redaction, the JSON text reader, suggestions) imports service/dialect.ts (service: dialects, rates, answers, operations as data, the client)',
      'stray.ts is in no layer',
    ]);
    expect(twoWayFolders(planted)).toEqual(['service <-> text']);
  });
});
