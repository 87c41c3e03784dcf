/**
 * The typo guard where no question may be asked: without a terminal, with
 * --yes, and in bulk (a `note:` naming the rows, which are sent). The question itself at a real
 * terminal is in test/history/typo-guard-terminal.process.test.ts; the similarity rules are pure and tested here.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { KnownIds, looseId } from '../../src/history/read.js';
import { editDistance } from '../../src/text/suggest.js';
import {
  customerEnv,
  describeRun,
  makeSandbox,
  runMain,
  type Sandbox,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();

const env = () => customerEnv(emulator);

async function seeded(): Promise<Sandbox> {
  const sb = makeSandbox();
  const result = await runMain(['get', '--id', 'müller-gmbh', '--name', 'Müller'], {
    sandbox: sb,
    env: env(),
  });
  expect(result.code, describeRun(result)).toBe(0);
  return sb;
}

describe('ids that look like known ones', () => {
  it.each([
    ['muller-gmbh', 'müller-gmbh'],
    ['MÜLLER-GMBH', 'müller-gmbh'],
    ['"müller-gmbh".', 'müller-gmbh'],
    ['muller-gmhb', 'müller-gmbh'],
    ['mueller-gmbh', 'müller-gmbh'],
    ['acne', 'acme'],
    ['amce', 'acme'],
  ])('%s looks like %s', (id, known) => {
    expect(new KnownIds(['müller-gmbh', 'acme', 'zeta-industries']).similar(id)).toBe(known);
  });

  it.each([['müller-gmbh'], ['globex'], ['acmecorp'], ['ab']])('%s does not', (id) => {
    expect(new KnownIds(['müller-gmbh', 'acme', 'ac']).similar(id)).toBeUndefined();
  });

  it('past its budget of edit distances (bulk), only case, accents and punctuation are compared', () => {
    const known = new KnownIds(['müller-gmbh', 'acme'], 0);
    expect(known.similar('MULLER-GMBH')).toBe('müller-gmbh');
    expect(known.similar('acne')).toBeUndefined();
  });

  it('loose forms and bounded edit distances', () => {
    expect(looseId(' Müller-GmbH! ')).toBe('muller-gmbh');
    expect(editDistance('kitten', 'sitting', 5)).toBe(3);
    expect(editDistance('kitten', 'sitting', 1)).toBe(2);
    expect(editDistance('ab', 'ba', 2)).toBe(1);
  });
});

describe('no question without a terminal, with --yes, or in bulk', () => {
  it('without a terminal the new id is sent as it is', async () => {
    const sb = await seeded();
    const result = await runMain(['get', '--id', 'muller-gmbh', '--name', 'M'], {
      sandbox: sb,
      env: env(),
    });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).not.toContain('did you mean');
  });

  it('at a terminal the question is asked (an empty stdin cancels it), and --yes skips it', async () => {
    const sb = await seeded();
    const asked = await runMain(['get', '--id', 'muller-gmbh', '--name', 'M'], {
      sandbox: sb,
      env: env(),
      tty: true,
    });
    expect(asked.code, describeRun(asked)).toBe(130);
    expect(asked.stderr).toContain('did you mean müller-gmbh? create muller-gmbh?');
    const forced = await runMain(['get', '--id', 'muller-gmbh', '--name', 'M', '--yes'], {
      sandbox: sb,
      env: env(),
      tty: true,
    });
    expect(forced.code, describeRun(forced)).toBe(0);
    expect(forced.stderr).not.toContain('did you mean');
    // Another profile's history knows no such id: no question.
    const other = await runMain(['-p', 'other', 'get', '--id', 'muller-gmbg', '--name', 'M'], {
      sandbox: sb,
      env: env(),
      tty: true,
    });
    expect(other.code, describeRun(other)).toBe(0);
  });

  it('an id only another profile knows is asked about, naming both and where it would go', async () => {
    const sb = makeSandbox();
    const staging = await runMain(['-p', 'staging', 'get', '--id', 'initech', '--name', 'I'], {
      sandbox: sb,
      env: env(),
    });
    expect(staging.code, describeRun(staging)).toBe(0);
    const asked = await runMain(['-p', 'prod', 'get', '--id', 'initech', '--name', 'I'], {
      sandbox: sb,
      env: env(),
      tty: true,
      columns: 200,
    });
    expect(asked.code, describeRun(asked)).toBe(130);
    expect(asked.stderr).toContain(
      `initech is known on profile staging, not on prod: create it on prod (${emulator.url})?`,
    );
    // Without a terminal, or with --yes, it is sent; then prod knows it too: no more question.
    const sent = await runMain(['-p', 'prod', 'get', '--id', 'initech', '--name', 'I', '--yes'], {
      sandbox: sb,
      env: env(),
      tty: true,
      columns: 200,
    });
    expect(sent.code, describeRun(sent)).toBe(0);
    const again = await runMain(['-p', 'prod', 'get', '--id', 'initech', '--name', 'I'], {
      sandbox: sb,
      env: env(),
      tty: true,
      columns: 200,
    });
    expect(again.code, describeRun(again)).toBe(0);
  });

  it('bulk get names such rows in a note after validation, and sends them', async () => {
    const sb = await seeded();
    const input = join(sb.root, 'rows.csv');
    writeFileSync(
      input,
      'user_group_id,name\nmüller-gmbh,Known\nnew-co,New\nmuller-gmbh,Typo\nMÜLLER-GMBH,Typo too\n',
    );
    const result = await runMain(['get', '--from', input], { sandbox: sb, env: env() });
    expect(result.code, describeRun(result)).toBe(0);
    expect(result.stderr).toMatch(
      /^note: 2 ids are new to profile "default"'s history but look like a known id .*rows 3 \("muller-gmbh", known: "müller-gmbh"\), 4 \("MÜLLER-GMBH", known: "müller-gmbh"\); they are sent as they are$/m,
    );
    expect(result.stderr).not.toContain('did you mean');
    const statuses = result.stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => (JSON.parse(line) as { status: string }).status);
    // Every row was sent (the emulator is shared by this file's tests: some may exist already).
    expect(statuses).toHaveLength(4);
    expect(statuses[0]).toBe('found');
  });
});
