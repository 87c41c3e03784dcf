// The licence notices of every library bundled into a build, collected from the libraries' own
// licence files at build time. The list of libraries is esbuild's metafile (every input file it
// bundled), not a hand-kept list, so a new dependency cannot ship without its notice: a bundled
// package with no licence file fails the build.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const LICENCE_FILE = /^(licen[cs]e|copying|notice)([.-].*)?$/i;

/** Package directories (`node_modules/a/node_modules/@b/c`) of every bundled input. */
export function bundledPackages(metafiles, root) {
  const dirs = new Set();
  for (const metafile of metafiles) {
    for (const input of Object.keys(metafile.inputs)) {
      const at = input.lastIndexOf('node_modules/');
      if (at < 0) continue;
      const rest = input.slice(at + 'node_modules/'.length).split('/');
      const name = rest[0]?.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0];
      dirs.add(join(root, input.slice(0, at), 'node_modules', name));
    }
  }
  return [...dirs];
}

/**
 * One text: for each package (once per name and version), its name, version and licence, then
 * every licence or notice file it ships, verbatim. `extra` sections (Node.js itself, for the
 * single executable) come first.
 */
export function noticesText(packageDirs, root, extra = []) {
  const sections = new Map();
  for (const dir of packageDirs) {
    const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    const key = `${manifest.name}@${manifest.version}`;
    if (sections.has(key)) continue;
    const files = readdirSync(dir)
      .filter((name) => LICENCE_FILE.test(name))
      .sort();
    if (files.length === 0) {
      throw new Error(
        `${relative(root, dir)} is bundled but ships no licence file: its notice cannot be included`,
      );
    }
    const texts = files.map((name) => readFileSync(join(dir, name), 'utf8').trim());
    sections.set(key, {
      title: `${manifest.name} ${manifest.version} (${licenceOf(manifest)})`,
      text: texts.join('\n\n'),
    });
  }
  const ordered = [...sections.entries()].sort(([a], [b]) => a.localeCompare(b));
  const all = [...extra, ...ordered.map(([, section]) => section)];
  const rule = '-'.repeat(78);
  return [
    'Third-party software in ugs',
    '',
    'ugs is MIT-licensed (see LICENSE). It includes the following software, each under its own',
    'licence, reproduced here as its authors ship it.',
    '',
    ...all.flatMap((section) => [rule, section.title, rule, '', section.text, '']),
  ].join('\n');
}

function licenceOf(manifest) {
  if (typeof manifest.license === 'string') return manifest.license;
  if (manifest.license && typeof manifest.license.type === 'string') return manifest.license.type;
  return 'see below';
}
