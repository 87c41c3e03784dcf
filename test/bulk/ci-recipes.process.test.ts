/**
 * docs/CI.md keeps bulk results files secret: its warning comes first, no recipe caches or uploads
 * a results file in clear, and its `openssl enc` commands (run here with bash and openssl, as a CI
 * step runs them) give back the file they encrypted, with no token left readable in between and
 * the key never in argv.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../kit/index.js';

const CI_MD = readFileSync(join(__dirname, '..', '..', 'docs', 'CI.md'), 'utf8');

/** The YAML blocks of the page. */
const yamlBlocks = [...CI_MD.matchAll(/```yaml\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');

describe('docs/CI.md: results files are secrets', () => {
  it('says so first, before anything else on the page', () => {
    const afterTitle = CI_MD.split('\n').slice(1).join('\n').trimStart();
    expect(afterTitle.startsWith('> **Bulk results files are secrets.**')).toBe(true);
  });

  it('caches and uploads only encrypted results, or results written with --output-tokens last4', () => {
    const kept: string[] = [];
    for (const block of yamlBlocks) {
      if (!/rotate --from|get --from|update --from|delete --from/.test(block)) continue;
      const paths = [
        ...[...block.matchAll(/^\s*path: (\S+)/gm)].map((match) => match[1] ?? ''),
        ...[...block.matchAll(/paths: \[([^\]]*)\]/g)].flatMap((match) =>
          (match[1] ?? '').split(',').map((path) => path.trim()),
        ),
      ];
      for (const path of paths) {
        kept.push(path);
        expect(path.endsWith('.enc'), `${path} is kept in clear`).toBe(true);
      }
      // A block that runs a bulk job without encrypting its file keeps no whole token in it.
      if (paths.length === 0 && /--output /.test(block) && !/openssl enc/.test(block)) {
        expect(block).toMatch(/--output-tokens last4/);
      }
    }
    expect(kept.length).toBeGreaterThanOrEqual(3);
  });

  // Two processes each: a loaded machine may take a while to start them.
  it("the recipe's openssl commands encrypt and decrypt a results file, the key from the environment only", {
    timeout: 60_000,
  }, () => {
    const commands = [
      ...CI_MD.matchAll(/^\s*(?:- )?(?:if \[ -f \S+ \]; then )?(openssl enc [^\n;]+)/gm),
    ].map((match) => match[1]?.trim() ?? '');
    const encrypt = commands.find((command) => !command.includes(' -d '));
    const decrypt = commands.find((command) => command.includes(' -d '));
    expect(encrypt).toBeDefined();
    expect(decrypt).toBeDefined();
    for (const command of commands) expect(command).toContain('-pass env:UGS_RESULTS_KEY');
    const dir = tempDir();
    const token = 'f0e1d2c3b4a5968778695a4b3c2d1e0ff0e1d2c3b4a5968778695a4b3c2d1e0f';
    const record = `${JSON.stringify({ row: 1, user_group_id: 'acme', status: 'rotated', token })}\n`;
    writeFileSync(join(dir, 'rotated.ndjson'), record);
    const env = { PATH: process.env.PATH ?? '', UGS_RESULTS_KEY: 'key-from-the-secret-store' };
    execFileSync('bash', ['-c', `set -e; umask 077; ${encrypt}; rm rotated.ndjson`], {
      cwd: dir,
      env,
    });
    const sealed = readFileSync(join(dir, 'rotated.ndjson.enc'));
    expect(sealed.includes(Buffer.from(token.slice(0, 16)))).toBe(false);
    execFileSync('bash', ['-c', `set -e; umask 077; ${decrypt}`], { cwd: dir, env });
    expect(readFileSync(join(dir, 'rotated.ndjson'), 'utf8')).toBe(record);
  });
});
