/**
 * `rotate`'s confirmation names what is about to happen: which token (its last 4 characters, as
 * `--debug` fingerprints it) and that the old token stops working.
 */
import { describe, expect, it } from 'vitest';
import { runRotate } from '../../src/operations/rotate-token/command.js';
import { makeDeps, rotateService, terminalIO } from '../kit/fakes.js';

async function confirmationFor(token: string): Promise<string> {
  const service = rotateService();
  const deps = makeDeps({ io: terminalIO(), service, prompts: [['confirm', 'Rotate', true]] });
  await runRotate(
    { currentToken: token, currentTokenFromStdin: false, yes: false, format: { kind: 'table' } },
    deps,
  );
  deps.prompter.assertDone();
  expect(service.rotations).toEqual([token]);
  return deps.prompter.asked[0] ?? '';
}

describe("rotate's confirmation at a terminal", () => {
  it("names the token's last 4 characters and says the old token stops working", async () => {
    const question = await confirmationFor('ug-old-token-a1b2');
    expect(question).toMatch(/^Rotate the token ending in …a1b2\?/);
    expect(question).toMatch(/old token stops working/);
    expect(question).not.toContain('ug-old-token');
  });

  it('a token shorter than 8 characters is not half shown', async () => {
    const question = await confirmationFor('ab12cd');
    expect(question).toMatch(/^Rotate this token\?/);
    expect(question).not.toContain('12cd');
    expect(question).toMatch(/old token stops working/);
  });

  it('controls in the token are shown escaped, never sent to the terminal', async () => {
    const question = await confirmationFor('ug-old-token-\u001b[2J');
    expect(question).not.toContain('\u001b');
    expect(question).toContain('\\u001b[2J');
  });
});
