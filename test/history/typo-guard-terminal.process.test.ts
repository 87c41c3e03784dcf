/**
 * The typo guard at a real terminal: `get` with an id new to the profile's
 * history that looks like a known one asks "did you mean <known>? create <id>? [y/N]" before
 * anything is sent. The built binary on a pseudo-terminal, the bundled emulator as the service.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { readRecords } from '../kit/bulk.js';
import {
  customerEnv,
  describeRun,
  killAllPtys,
  makeSandbox,
  runUgs,
  STACK_LINE,
  startPty,
  useEmulator,
} from '../kit/index.js';

const emulator = useEmulator();
afterEach(() => killAllPtys());

const historyIds = (configDir: string) =>
  readRecords<{ user_group_id: string }>(join(configDir, 'history.ndjson')).map(
    (event) => event.user_group_id,
  );

describe('get at a terminal, with an id that looks like a known one', () => {
  it('asks "did you mean ...? create ...?": no sends nothing (exit 130), yes creates it', async () => {
    const sandbox = makeSandbox();
    const env = customerEnv(emulator);
    const known = await runUgs(['get', '--id', 'müller-gmbh', '--name', 'Müller GmbH'], {
      sandbox,
      env,
    });
    expect(known.code, describeRun(known)).toBe(0);

    const declined = startPty(sandbox, ['get', '--id', 'muller-gmbh', '--name', 'Muller'], { env });
    await declined.waitFor('did you mean müller-gmbh? create muller-gmbh?');
    await declined.waitFor('(y/N)');
    await declined.type('n\r');
    const no = await declined.finish();
    expect(no.code, declined.text()).toBe(130);
    expect(declined.text()).toContain('nothing was created');
    expect(declined.text()).not.toMatch(STACK_LINE);
    expect(historyIds(sandbox.configDir)).toEqual(['müller-gmbh']);

    const accepted = startPty(sandbox, ['get', '--id', 'muller-gmbh', '--name', 'Muller'], { env });
    await accepted.waitFor('did you mean müller-gmbh? create muller-gmbh?');
    await accepted.type('y\r');
    const yes = await accepted.finish();
    expect(yes.code, accepted.text()).toBe(0);
    expect(accepted.text()).toContain('Created user group muller-gmbh');
    expect(historyIds(sandbox.configDir)).toEqual(['müller-gmbh', 'muller-gmbh']);

    // Known now: no question the next time, and none with --yes for another lookalike.
    const again = startPty(sandbox, ['get', '--id', 'muller-gmbh', '--name', 'Muller'], { env });
    expect((await again.finish()).code, again.text()).toBe(0);
    expect(again.text()).not.toContain('did you mean');
    const forced = startPty(sandbox, ['get', '--id', 'Muller-GmbH.', '--name', 'M', '--yes'], {
      env,
    });
    expect((await forced.finish()).code, forced.text()).toBe(0);
    expect(forced.text()).not.toContain('did you mean');
  });
});

describe('get at a terminal, with an id known only on another profile', () => {
  it('asks "known on profile staging, not on prod: create it on prod (url)?"; yes creates it', async () => {
    const sandbox = makeSandbox();
    const env = customerEnv(emulator);
    const staging = await runUgs(['get', '--id', 'initech', '--name', 'Initech', '-p', 'staging'], {
      sandbox,
      env,
    });
    expect(staging.code, describeRun(staging)).toBe(0);
    const argv = ['get', '--id', 'initech', '--name', 'Initech', '-p', 'prod'];
    const question = `initech is known on profile staging, not on prod: create it on prod (${emulator.url})?`;
    const declined = startPty(sandbox, argv, { env, columns: 200 });
    await declined.waitFor(question);
    await declined.waitFor('(y/N)');
    await declined.type('\r');
    expect((await declined.finish()).code, declined.text()).toBe(130);
    expect(historyIds(sandbox.configDir)).toEqual(['initech']);

    const accepted = startPty(sandbox, argv, { env, columns: 200 });
    await accepted.waitFor(question);
    await accepted.type('y\r');
    expect((await accepted.finish()).code, accepted.text()).toBe(0);
    expect(accepted.text()).toContain(`Found user group initech on prod (${emulator.url})`);
  });
});
