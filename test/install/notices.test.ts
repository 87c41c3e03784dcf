// scripts/notices.mjs: the libraries a build bundled, from esbuild's metafile, and their notices.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bundledPackages, noticesText } from '../../scripts/notices.mjs';
import { tempDir } from '../kit/binary.js';

function fakePackage(root: string, dir: string, files: Record<string, string>, license = 'MIT') {
  const path = join(root, dir);
  mkdirSync(path, { recursive: true });
  const name = dir.slice(dir.lastIndexOf('node_modules/') + 'node_modules/'.length);
  writeFileSync(join(path, 'package.json'), JSON.stringify({ name, version: '1.2.3', license }));
  for (const [file, text] of Object.entries(files)) writeFileSync(join(path, file), text);
}

describe('bundledPackages', () => {
  it('finds plain, scoped and nested packages once each, and ignores the project files', () => {
    const metafile = {
      inputs: {
        'src/main.ts': {},
        'node_modules/commander/lib/command.js': {},
        'node_modules/commander/index.js': {},
        'node_modules/@inquirer/core/dist/index.js': {},
        'node_modules/wrap-ansi/node_modules/string-width/index.js': {},
      },
    };
    expect(bundledPackages([metafile], '/r').sort()).toEqual([
      '/r/node_modules/@inquirer/core',
      '/r/node_modules/commander',
      '/r/node_modules/wrap-ansi/node_modules/string-width',
    ]);
  });
});

describe('noticesText', () => {
  it('reproduces every licence and notice file, titled by name, version and licence', () => {
    const root = tempDir('notices');
    fakePackage(root, 'node_modules/a', { LICENSE: 'A licence text', NOTICE: 'A notice' });
    fakePackage(root, 'node_modules/@s/b', { 'license.md': 'B licence text' }, 'ISC');
    const text = noticesText(
      [join(root, 'node_modules/a'), join(root, 'node_modules/@s/b')],
      root,
      [{ title: 'Node.js v20 (MIT)', text: 'Node text' }],
    );
    expect(text.indexOf('Node.js v20 (MIT)')).toBeLessThan(text.indexOf('@s/b 1.2.3 (ISC)'));
    expect(text).toMatch(/^@s\/b 1\.2\.3 \(ISC\)$/m);
    expect(text).toMatch(/^a 1\.2\.3 \(MIT\)$/m);
    for (const part of ['A licence text', 'A notice', 'B licence text', 'Node text']) {
      expect(text).toContain(part);
    }
  });

  it('fails the build for a bundled package that ships no licence file', () => {
    const root = tempDir('notices-missing');
    fakePackage(root, 'node_modules/quiet', { 'README.md': 'no licence here' });
    expect(() => noticesText([join(root, 'node_modules/quiet')], root)).toThrow(
      'node_modules/quiet is bundled but ships no licence file',
    );
  });
});
