/**
 * `ugs completion`: the scripts are loaded into real shells, which are asked for completions the
 * way a Tab asks (bash: the completion function with COMP_WORDS/COMP_CWORD set, as readline calls
 * it; zsh: an interactive zsh on a pseudo-terminal given a Tab; fish: `complete -C`).
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { writeConfig } from '../kit/binary.js';
import {
  describeRun,
  makeSandbox,
  runMain,
  runShell,
  runUgs,
  type Sandbox,
  tempDir,
  UGS_SHELL,
} from '../kit/index.js';

const has = (shell: string) => spawnSync('sh', ['-c', `command -v ${shell}`]).status === 0;

// zsh and fish are Debian packages that .ci/run installs: without them their tests skip here,
// and fail under CI. PowerShell is not packaged by Debian: it is tested only where installed
// (docs/dev/TESTING.md says so).
for (const shell of ['zsh', 'fish']) {
  it.runIf(!has(shell))(`${shell} is installed (its completion tests skip without it)`, () => {
    expect(process.env.CI, `install ${shell}: CI must run its completion tests`).toBeFalsy();
  });
}
const ZSH_DRIVER = resolve(
  fileURLToPath(new URL('.', import.meta.url)),
  'completion',
  'zpty-complete.zsh',
);

function sandboxWithProfiles(): Sandbox {
  const sandbox = makeSandbox();
  writeConfig(sandbox, {
    profiles: {
      default: { baseUrl: 'https://ugs.example.com', apiToken: 'a'.repeat(40) },
      staging: { baseUrl: 'https://staging.example.com' },
      'prod-eu': { baseUrl: 'https://eu.example.com' },
    },
  });
  return sandbox;
}

/**
 * Completes `line` in bash as readline would: COMP_WORDS split the way bash splits them (at
 * spaces, and "=" as a word of its own), the cursor at the end, `_ugs` called, COMPREPLY read.
 */
async function bashComplete(line: string, sandbox = makeSandbox()): Promise<string[]> {
  const script = `
ugs() { ${UGS_SHELL} "$@"; }
source <(ugs completion bash) || exit 9
COMP_LINE=$1; COMP_POINT=\${#COMP_LINE}
read -ra COMP_WORDS <<<"$(printf '%s' "$COMP_LINE" | sed 's/=/ = /g')"
[[ $COMP_LINE == *" " || $COMP_LINE == *= ]] && COMP_WORDS+=("")
COMP_CWORD=$((\${#COMP_WORDS[@]} - 1))
_ugs
printf '%s\\n' "\${COMPREPLY[@]}"
`;
  const quoted = `'${line.replace(/'/g, "'\\''")}'`;
  const run = await runShell(`set -- ${quoted}\n${script}`, { sandbox });
  expect(run.code, describeRun(run)).toBe(0);
  expect(run.stderr, describeRun(run)).toBe('');
  return run.stdout.split('\n').filter((word) => word !== '');
}

async function zshComplete(line: string, sandbox = makeSandbox()): Promise<string[]> {
  const dir = tempDir('zsh');
  const script = join(dir, '_ugs');
  const out = join(dir, 'matches');
  writeFileSync(out, '');
  const run = await runShell(
    `${UGS_SHELL} completion zsh > '${script}' && zsh -f '${ZSH_DRIVER}' '${script}' "$UGS" "$LINE" '${out}' && cat '${out}'`,
    { sandbox, env: { UGS: UGS_SHELL, LINE: line }, timeoutMs: 30_000 },
  );
  expect(run.code, describeRun(run)).toBe(0);
  return [...new Set(run.stdout.split('\n').filter((word) => word !== ''))];
}

describe('bash: the script loaded into bash, asked as readline asks', () => {
  it('registers a completion function for ugs', async () => {
    const run = await runShell(`source <(${UGS_SHELL} completion bash) && complete -p ugs`);
    expect(run.stdout.trim(), describeRun(run)).toBe('complete -F _ugs ugs');
  });

  it('completes command names, never the hidden __complete', async () => {
    const words = await bashComplete('ugs ');
    expect(words).toEqual(expect.arrayContaining(['login', 'get', 'rotate', 'completion', 'help']));
    expect(words).not.toContain('__complete');
    expect(await bashComplete('ugs ro')).toEqual(['rotate']);
    expect(await bashComplete('ugs help st')).toEqual(['status']);
  });

  it("completes a command's options and the global ones it inherits, offering each once", async () => {
    expect(await bashComplete('ugs get --fo')).toEqual(['--format']);
    expect(await bashComplete('ugs get --base')).toEqual(['--base-url']);
    // --id was given and takes one value; --mapping may repeat.
    expect(await bashComplete('ugs get --id acme --i')).toEqual(['--insecure-http']);
    expect(await bashComplete('ugs get --mapping a=b --map')).toEqual([
      '--mapping',
      '--mapping-json',
    ]);
  });

  it('completes --format values, also after "=" (which bash splits off)', async () => {
    expect(await bashComplete('ugs get --format ')).toEqual(['csv', 'ndjson', 'json']);
    expect(await bashComplete('ugs rotate --format nd')).toEqual(['ndjson']);
    expect(await bashComplete('ugs get --format=')).toEqual(['csv', 'ndjson', 'json']);
    expect(await bashComplete('ugs get --format=j')).toEqual(['json']);
  });

  it('completes shell names and profile names from the config file', async () => {
    expect(await bashComplete('ugs completion ')).toEqual(['bash', 'zsh', 'fish', 'powershell']);
    const sandbox = sandboxWithProfiles();
    expect(await bashComplete('ugs --profile ', sandbox)).toEqual([
      'default',
      'prod-eu',
      'staging',
    ]);
    expect(await bashComplete('ugs get -p st', sandbox)).toEqual(['staging']);
    // No config file: no profile names, and nothing on stderr.
    expect(await bashComplete('ugs --profile ')).toEqual([]);
  });

  it('completes file names for options that take a file', async () => {
    const sandbox = makeSandbox();
    writeFileSync(join(sandbox.root, 'groups.csv'), 'user_group_id,name\n');
    expect(await bashComplete('ugs get --from gro', sandbox)).toEqual(['groups.csv']);
    // --id takes free text: no file names there.
    expect(await bashComplete('ugs get --id gro', sandbox)).toEqual([]);
  });
});

describe.skipIf(!has('zsh'))('zsh: the script loaded into an interactive zsh, given a Tab', () => {
  it('completes commands, options, --format values and profile names', async () => {
    const commands = await zshComplete('ugs ');
    expect(commands).toEqual(expect.arrayContaining(['get', 'rotate', 'login', 'completion']));
    expect(commands).not.toContain('__complete');
    expect(await zshComplete('ugs get --fo')).toEqual(['--format']);
    expect((await zshComplete('ugs get --format ')).sort()).toEqual(['csv', 'json', 'ndjson']);
    expect(await zshComplete('ugs completion z')).toEqual(['zsh']);
    expect((await zshComplete('ugs -p ', sandboxWithProfiles())).sort()).toEqual([
      'default',
      'prod-eu',
      'staging',
    ]);
  }, 60_000);
});

describe.skipIf(!has('fish'))('fish', () => {
  it('parses the script and completes from it', async () => {
    const dir = tempDir('fish');
    const script = join(dir, 'ugs.fish');
    const run = await runShell(
      `${UGS_SHELL} completion fish > '${script}' && fish -n '${script}' && fish -c "function ugs; ${UGS_SHELL.replace(/'/g, '')} \\$argv; end; source '${script}'; complete -C 'ugs get --format '; complete -C 'ugs -p '"`,
      { sandbox: sandboxWithProfiles() },
    );
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stdout.split('\n').filter(Boolean).sort()).toEqual([
      'csv',
      'default',
      'json',
      'ndjson',
      'prod-eu',
      'staging',
    ]);
  });
});

describe.skipIf(!has('pwsh'))('powershell', () => {
  it('parses the script', async () => {
    const run = await runShell(
      `${UGS_SHELL} completion powershell | pwsh -NoProfile -Command '$s = [Console]::In.ReadToEnd(); [void][ScriptBlock]::Create($s)'`,
    );
    expect(run.code, describeRun(run)).toBe(0);
  });
});

describe('ugs completion', () => {
  it('needs a known shell: usage error otherwise', async () => {
    for (const args of [['completion'], ['completion', 'tcsh']]) {
      const run = await runMain(args);
      expect(run.code, describeRun(run)).toBe(2);
      expect(run.stdout).toBe('');
    }
  });

  it('explains how to install it in its --help', async () => {
    const run = await runMain(['completion', '--help']);
    expect(run.code).toBe(0);
    for (const shell of ['bashrc', 'zshrc', 'completions/ugs.fish', '$PROFILE']) {
      expect(run.stdout).toContain(shell);
    }
  });

  it('__complete stays quiet with a corrupt config and never reads stdin', async () => {
    const sandbox = makeSandbox();
    writeConfig(sandbox, {});
    writeFileSync(sandbox.configPath, '{ "profiles": ');
    const run = await runUgs(['completion', '__complete', '--', '--profile', ''], {
      sandbox,
      stdin: null,
      env: { UGS_BASE_URL: 'http://127.0.0.1:1' },
    });
    expect(run.code, describeRun(run)).toBe(0);
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('nofiles\n');
  });
});
