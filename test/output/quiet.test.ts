/**
 * `-q/--quiet` is a user preference: it reaches the printing functions through the settings, not
 * through the IO streams object, and silences notes, warnings and messages only.
 */
import { describe, expect, it } from 'vitest';
import { runLogout } from '../../src/commands/logout.js';
import { runGet } from '../../src/operations/get-user/command.js';
import {
  printError,
  printLine,
  printMessage,
  printNote,
  printWarningNote,
} from '../../src/output/messages.js';
import { createOutput } from '../../src/output/output.js';
import { FakeService, groupResult, makeDeps, makeIO } from '../kit/fakes.js';

describe('quiet comes from the settings', () => {
  it.each([
    [false, /note: .*already existed/],
    [true, /^$/],
  ])('get of an existing group, quiet %s: stderr %s', async (quiet, stderr) => {
    const io = makeIO();
    const service = new FakeService({ get: () => groupResult({}, { new_user_group: false }) });
    await runGet(
      {
        id: 'acme',
        name: 'Acme',
        mapping: undefined,
        properties: undefined,
        format: { kind: 'table' },
      },
      makeDeps({ io, service, settings: { quiet } }),
    );
    expect(io.stderr.text).toMatch(stderr);
    // The result itself is not a note: stdout has it either way.
    expect(io.stdout.text).toMatch(/^token\t/m);
  });

  it('logout with quiet settings prints nothing on stderr', async () => {
    const loud = makeDeps({ settings: { quiet: false } });
    const quiet = makeDeps({ settings: { quiet: true } });
    await runLogout(loud);
    await runLogout(quiet);
    expect(loud.io.stderr.text).toMatch(/Removed the API token/);
    expect(quiet.io.stderr.text).toBe('');
    expect(quiet.config.readProfile('default')?.apiToken).toBeUndefined();
  });

  it('each printing function stays silent under quiet; errors still print', async () => {
    const io = makeIO();
    const preferences = { quiet: true, noColor: true, debug: false };
    const out = createOutput(io, preferences);
    printLine(out, 'a line');
    printNote(out, 'a note');
    await printMessage(out, 'a message', 'warning');
    await printWarningNote(out, 'a warning');
    expect(io.stderr.text).toBe('');
    await printError(out, { message: 'it failed', hint: 'try', error: undefined });
    expect(io.stderr.text).toBe('error: it failed\nhint: try\n');
    printNote(createOutput(io, { ...preferences, quiet: false }), 'shown');
    expect(io.stderr.text).toMatch(/note: shown\n$/);
  });
});
