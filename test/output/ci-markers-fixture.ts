/**
 * What the CI-marker tests share: the runners, markers in the places each runner looks for them,
 * the check for a line that carries one, and a service whose every answer is full of them.
 */
import { expect } from 'vitest';
import { type ReplyContext, sendJson } from '../kit/index.js';

export const RUNNERS: Record<string, Record<string, string>> = {
  'Azure Pipelines': { TF_BUILD: 'True' },
  'GitHub Actions': { GITHUB_ACTIONS: 'true' },
};

/** Every marker, in the places the runners look for them. */
export const AZURE = '##vso[task.prependpath]/tmp/evil';
export const GITHUB_OLD = '##[set-env name=PATH;]/tmp/evil';
export const GITHUB_LINE = '::set-env name=PATH::/tmp/evil';
export const EVIL_NAME = `Acme ${AZURE} ${GITHUB_OLD}`;
export const EVIL_ID = `acme-${GITHUB_OLD}`;

/** ugs's own commands: the prefix is ours; what follows it is checked like any other text. */
const OWN_COMMAND =
  /^(::add-mask::|::error title=ugs::|##vso\[task\.setsecret\]|##vso\[task\.logissue type=error\]ugs: )/;

/** Lines (as a runner splits them) that carry a marker not of ugs's own making. */
export function offendingLines(text: string): string[] {
  return text.split(/\r\n|\r|\n/).filter((line) => {
    const own = OWN_COMMAND.exec(line);
    const rest = own === null ? line : line.slice(own[0].length);
    return /##(vso)?\[/i.test(rest) || (own === null && /^[\s\u0085]*::/.test(rest));
  });
}

export function expectNoInjection(
  result: { stdout: string; stderr: string },
  context: string,
): void {
  expect(offendingLines(result.stdout), context).toEqual([]);
  expect(offendingLines(result.stderr), context).toEqual([]);
}

/** The bodies the server sent, in order: `--json` must parse to them. */
export const sent: unknown[] = [];

/** A hostile service: every field of the group it answers carries the markers. */
export function hostileAnswer(ctx: ReplyContext): void {
  const request = JSON.parse(ctx.request.body || '{}') as Record<string, unknown>;
  const body = {
    success: 1,
    new_user_group: true,
    user_group: {
      team_id: 7,
      token: `tok-${ctx.index}-0123456789abcdef`,
      name: request.name ?? EVIL_NAME,
      provided_id: request.user_group_id ?? EVIL_ID,
      properties: { note: AZURE, [GITHUB_LINE]: GITHUB_LINE },
      api_environment_tag: `Customer ${AZURE}`,
      // A key the table prints at the start of its line.
      [GITHUB_LINE]: 'set',
    },
  };
  sent.push(body);
  sendJson(ctx.res, 200, body);
}
