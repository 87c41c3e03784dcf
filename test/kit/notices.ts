/**
 * Which libraries a build bundled, read back from its source maps (every bundled file is a
 * `source` there): a list made independently of the build's own (esbuild's metafile, which
 * scripts/notices.mjs reads), for tests that check the licence notices cover every library.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export function librariesInSourceMaps(distDir: string): string[] {
  const names = new Set<string>();
  const maps = readdirSync(distDir, { recursive: true, encoding: 'utf8' }).filter(
    (file) => file.endsWith('.js.map') || file.endsWith('.cjs.map'),
  );
  for (const file of maps) {
    const { sources } = JSON.parse(readFileSync(join(distDir, file), 'utf8')) as {
      sources: string[];
    };
    for (const source of sources) {
      const at = source.lastIndexOf('node_modules/');
      if (at < 0) continue;
      const parts = source.slice(at + 'node_modules/'.length).split('/');
      names.add(parts[0]?.startsWith('@') ? `${parts[0]}/${parts[1]}` : (parts[0] ?? ''));
    }
  }
  return [...names].sort();
}

/** Whether `notices` has a section for `library` (`name version (licence)` on a line). */
export function hasNoticeFor(notices: string, library: string): boolean {
  const escaped = library.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return new RegExp(`^${escaped} \\S+ \\(.+\\)$`, 'm').test(notices);
}
