import { describe, expect, it } from 'vitest';
import { operations } from '../../src/commands/operations.js';
import { fakeService, groupResult, rejection } from '../kit/fakes.js';

describe('fakeService: typed over the operations', () => {
  it('answers the operations a test lists and throws on any other', async () => {
    const client = fakeService({
      getUser: (request) => groupResult({ provided_id: request.user_group_id }),
    });
    const result = await client.getUser({ user_group_id: 'acme', name: 'Acme' });
    expect(result.userGroup.provided_id).toBe('acme');
    const error = await rejection(client.rotateToken('ug-token-aaaaaaaaaaaa'));
    expect(String(error)).toContain('unexpected rotateToken call');
    expect(client.calls.map((call) => call.operation)).toEqual(['getUser', 'rotateToken']);
  });

  it('has a method for every operation of the registry, made from it (none written out)', () => {
    const client = fakeService();
    for (const name of Object.keys(operations)) {
      expect(typeof (client as unknown as Record<string, unknown>)[name], name).toBe('function');
    }
  });
});
