/**
 * The Customer API's own data in the emulator (`ugs serve --dialect customer`): emails, group
 * tags, hierarchy level and parent are kept as the service keeps them, so a rehearsal sees what
 * it sent: create_customer/ sets them, update_customer/ changes the ones sent, get_customer/ and
 * the list answer them, and the list filters by parent and level. A parent must be a group of the
 * caller's environment, never the group itself or one under it.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadDataFile } from '../../src/emulator/persistence.js';
import { Store, type StoreChange } from '../../src/emulator/store.js';
import { call, type RawReply, type RunningEmulator, startEmulator, tempDir } from '../kit/index.js';

const apiTokens = [
  { token: 'fields-customer-token', environment: 'Customer' as const },
  { token: 'fields-testing-token', environment: 'Testing' as const },
];
let emulator: RunningEmulator;
let dir: string;
let dataFile: string;

beforeEach(async () => {
  dir = tempDir('customer-fields');
  dataFile = path.join(dir, 'state.json');
  emulator = await startEmulator({ port: 0, dialect: 'customer', apiTokens, dataFile });
});

afterEach(async () => {
  await emulator.close();
  await rm(dir, { recursive: true, force: true });
});

/** Stops the emulator and starts another on the same data file. */
async function restart(): Promise<void> {
  await emulator.close();
  emulator = await startEmulator({ port: 0, dialect: 'customer', apiTokens, dataFile });
}

function send(method: string, path: string, body?: unknown, token = 'fields-customer-token') {
  return call(emulator.url, {
    method,
    path,
    token: null,
    headers: { 'explo-authorization': `Token ${token}` },
    ...(body !== undefined && { body }),
  });
}

const create = (body: Record<string, unknown>, token?: string) =>
  send('POST', '/api/create_customer/', { name: 'N', ...body }, token);
const update = (body: Record<string, unknown>) => send('POST', '/api/update_customer/', body);
const customerOf = (reply: RawReply) => reply.json?.customer as Record<string, unknown>;
const show = async (id: string) =>
  customerOf(await send('POST', '/api/get_customer/', { provided_id: id }));
/** The list's ids and total_count for a query. */
async function listed(query = ''): Promise<{ ids: string[]; total: unknown }> {
  const reply = await send('GET', `/v2/api/customers/${query}`);
  expect(reply.status).toBe(200);
  const results = reply.json?.results as { customers: { provided_id: string }[] } | undefined;
  const customers = results?.customers ?? [];
  return { ids: customers.map((c) => c.provided_id), total: reply.json?.total_count };
}

describe('the Customer API fields in the emulator', () => {
  it('create_customer/ keeps emails, group_tags, hierarchy_level_name and parent_provided_id', async () => {
    expect((await create({ provided_id: 'org' })).status).toBe(200);
    const created = await create({
      provided_id: 'team',
      emails: ['a@b.c', 'd@e.f'],
      group_tags: ['eu', 'paying'],
      hierarchy_level_name: 'Team',
      parent_provided_id: 'org',
    });
    expect(created.status).toBe(200);
    const expected = {
      provided_id: 'team',
      emails: ['a@b.c', 'd@e.f'],
      group_tags: ['eu', 'paying'],
      hierarchy_level: 'Team',
    };
    expect(customerOf(created)).toMatchObject(expected);
    expect(await show('team')).toMatchObject(expected);
    expect((await listed('?parent_provided_id=org')).ids).toEqual(['team']);
    // Kept: the parent cannot now be put under its child.
    expect((await update({ provided_id: 'org', parent_provided_id: 'team' })).status).toBe(400);
    // The vendor's customer object has no parent field: the parent shows in the filter only.
    expect(customerOf(created)).not.toHaveProperty('parent_provided_id');
    // A group found is answered as it is: a second create changes none of it.
    const again = await create({ provided_id: 'team', group_tags: ['other'], emails: [] });
    expect(again.json?.new_customer).toBe(false);
    expect(customerOf(again)).toMatchObject(expected);
  });

  it('update_customer/ changes exactly the fields sent, as get_customer/ and the list show', async () => {
    await create({ provided_id: 'org' });
    await create({ provided_id: 'acme', emails: ['old@b.c'], group_tags: ['old'] });
    const steps: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ group_tags: ['eu'] }, { group_tags: ['eu'], emails: ['old@b.c'] }],
      [{ emails: ['a@b.c'] }, { emails: ['a@b.c'], group_tags: ['eu'] }],
      [{ hierarchy_level: 'Team' }, { hierarchy_level: 'Team', group_tags: ['eu'] }],
      [{ parent_provided_id: 'org' }, { hierarchy_level: 'Team', emails: ['a@b.c'] }],
      [{ group_tags: [] }, { group_tags: [], emails: ['a@b.c'], hierarchy_level: 'Team' }],
      [{ name: 'Acme Corp' }, { name: 'Acme Corp', emails: ['a@b.c'], hierarchy_level: 'Team' }],
    ];
    for (const [fields, expected] of steps) {
      const reply = await update({ provided_id: 'acme', ...fields });
      expect(reply.status, JSON.stringify(fields)).toBe(200);
      expect(customerOf(reply)).toMatchObject(expected);
      expect(await show('acme')).toMatchObject(expected);
      const listedAcme = (await send('GET', '/v2/api/customers/')).json?.results as {
        customers: Record<string, unknown>[];
      };
      expect(listedAcme.customers.find((c) => c.provided_id === 'acme')).toMatchObject(expected);
    }
    expect((await listed('?parent_provided_id=org')).ids).toEqual(['acme']);
    expect((await update({ provided_id: 'org', parent_provided_id: 'acme' })).status).toBe(400);
    // null removes the level and the parent.
    const cleared = await update({
      provided_id: 'acme',
      hierarchy_level: null,
      parent_provided_id: null,
    });
    expect(customerOf(cleared)).toMatchObject({ hierarchy_level: null, emails: ['a@b.c'] });
    expect((await listed('?parent_provided_id=org')).total).toBe(0);
    expect((await update({ provided_id: 'org', parent_provided_id: 'acme' })).status).toBe(200);
  });

  it('the list filters by parent (direct children) and level, together as AND', async () => {
    await create({ provided_id: 'org', hierarchy_level_name: 'Org' });
    await create({ provided_id: 'eu', hierarchy_level_name: 'Region', parent_provided_id: 'org' });
    await create({ provided_id: 'us', hierarchy_level_name: 'Region', parent_provided_id: 'org' });
    await create({ provided_id: 'ops', hierarchy_level_name: 'Team', parent_provided_id: 'org' });
    await create({ provided_id: 'paris', hierarchy_level_name: 'Team', parent_provided_id: 'eu' });
    await create({ provided_id: 'loose', hierarchy_level_name: 'Region' });
    // A group of the other environment, under a parent of the same id, is never listed.
    await create({ provided_id: 'org' }, 'fields-testing-token');
    await create({ provided_id: 'x', parent_provided_id: 'org' }, 'fields-testing-token');

    expect(await listed('?parent_provided_id=org')).toEqual({
      ids: ['eu', 'us', 'ops'],
      total: 3,
    });
    expect(await listed('?hierarchy_level=Region')).toEqual({
      ids: ['eu', 'us', 'loose'],
      total: 3,
    });
    expect(await listed('?parent_provided_id=org&hierarchy_level=Region&page_size=1')).toEqual({
      ids: ['eu'],
      total: 2,
    });
    expect(
      await listed('?parent_provided_id=org&hierarchy_level=Region&page=2&page_size=1'),
    ).toEqual({ ids: ['us'], total: 2 });
    expect(await listed('?parent_provided_id=eu')).toEqual({ ids: ['paris'], total: 1 });
    expect(await listed('?parent_provided_id=nobody')).toEqual({ ids: [], total: 0 });
    expect(await listed('?hierarchy_level=region')).toEqual({ ids: [], total: 0 });
    // An empty filter is no filter, as django-filter reads it.
    expect((await listed('?parent_provided_id=&hierarchy_level=')).total).toBe(6);
  });

  it('refuses a parent the environment does not hold: 400 on parent_provided_id, nothing changed', async () => {
    await create({ provided_id: 'elsewhere' }, 'fields-testing-token');
    const refused = await create({ provided_id: 'team', parent_provided_id: 'elsewhere' });
    expect(refused.status).toBe(400);
    expect(refused.json).toEqual({
      success: 0,
      parent_provided_id: ['Object with provided_id=elsewhere does not exist.'],
    });
    expect((await send('POST', '/api/get_customer/', { provided_id: 'team' })).status).toBe(404);

    await create({ provided_id: 'team', group_tags: ['kept'] });
    const badUpdate = await update({
      provided_id: 'team',
      group_tags: ['lost'],
      parent_provided_id: 'nobody',
    });
    expect(badUpdate.status).toBe(400);
    expect(badUpdate.json).toEqual({
      success: 0,
      parent_provided_id: ['Object with provided_id=nobody does not exist.'],
    });
    expect(await show('team')).toMatchObject({ group_tags: ['kept'] });
    const blank = await update({ provided_id: 'team', parent_provided_id: '' });
    expect(blank.json).toMatchObject({ parent_provided_id: ['This field may not be blank.'] });
    const notList = await update({ provided_id: 'team', emails: 'a@b.c' });
    expect(notList.json).toMatchObject({
      emails: ['Expected a list of items but got type "str".'],
    });
  });

  it('refuses a group as its own parent or under one of its descendants (400)', async () => {
    const own = await create({ provided_id: 'solo', parent_provided_id: 'solo' });
    expect(own.status).toBe(400);
    expect(own.json).toEqual({
      success: 0,
      parent_provided_id: ['A customer cannot be its own parent.'],
    });
    await create({ provided_id: 'top' });
    await create({ provided_id: 'mid', parent_provided_id: 'top' });
    await create({ provided_id: 'low', parent_provided_id: 'mid' });
    const self = await update({ provided_id: 'top', parent_provided_id: 'top' });
    expect(self.status).toBe(400);
    expect(self.json).toMatchObject({
      parent_provided_id: ['A customer cannot be its own parent.'],
    });
    // Renamed in the same request, it is still itself under its new id.
    const renamed = await update({
      provided_id: 'top',
      new_provided_id: 'apex',
      parent_provided_id: 'apex',
    });
    expect(renamed.status).toBe(400);
    const cycle = await update({ provided_id: 'top', parent_provided_id: 'low' });
    expect(cycle.status).toBe(400);
    expect(cycle.json).toMatchObject({
      parent_provided_id: ['A customer cannot be the parent of its own ancestor.'],
    });
    expect((await send('POST', '/api/get_customer/', { provided_id: 'top' })).status).toBe(200);
  });

  it('renaming a parent keeps its children under it', async () => {
    await create({ provided_id: 'org' });
    await create({ provided_id: 'team', parent_provided_id: 'org' });
    expect((await update({ provided_id: 'org', new_provided_id: 'org-2' })).status).toBe(200);
    expect(await listed('?parent_provided_id=org-2')).toEqual({ ids: ['team'], total: 1 });
    expect((await listed('?parent_provided_id=org')).total).toBe(0);
    // Still its child: the renamed parent cannot be put under it.
    const cycle = await update({ provided_id: 'org-2', parent_provided_id: 'team' });
    expect(cycle.json).toMatchObject({
      parent_provided_id: ['A customer cannot be the parent of its own ancestor.'],
    });
  });

  it('deleting a parent leaves its children in place, without a parent', async () => {
    await create({ provided_id: 'top' });
    const mid = customerOf(await create({ provided_id: 'mid', parent_provided_id: 'top' }));
    await create({ provided_id: 'team', parent_provided_id: 'mid', hierarchy_level_name: 'Team' });
    const deleted = await send('DELETE', '/api/delete_customer/', { current_token: mid.token });
    expect(deleted.status).toBe(200);
    expect(await show('team')).toMatchObject({ provided_id: 'team', hierarchy_level: 'Team' });
    // No longer under top (through mid): top may now go under it.
    expect((await update({ provided_id: 'top', parent_provided_id: 'team' })).status).toBe(200);
    // A new group of the deleted one's id is not it: the child is not under it.
    await create({ provided_id: 'mid' });
    expect((await listed('?parent_provided_id=mid')).total).toBe(0);
  });
});

describe('the explo dialect in the emulator', () => {
  it("update_user_group/ reads none of the Customer API's fields", async () => {
    const explo = await startEmulator({ port: 0, dialect: 'explo', apiTokens });
    try {
      const post = (path: string, body: unknown) =>
        call(explo.url, {
          method: 'POST',
          path,
          token: null,
          headers: { 'explo-authorization': 'Token fields-customer-token' },
          body,
        });
      await post('/api/create_user_group/', { user_group_id: 'acme', name: 'Acme' });
      const reply = await post('/api/update_user_group/', {
        user_group_id: 'acme',
        name: 'Acme Corp',
        group_tags: 'not even a list',
        parent_provided_id: 'nobody',
      });
      expect(reply.status).toBe(200);
      expect(reply.json?.user_group).toEqual({
        team_id: 1,
        token: expect.any(String),
        name: 'Acme Corp',
        provided_id: 'acme',
        properties: null,
        is_demo_group: false,
      });
    } finally {
      await explo.close();
    }
  });
});

describe('the Customer API fields in the data file', () => {
  it('keeps emails, tags, level and parent across a restart', async () => {
    await create({ provided_id: 'org', hierarchy_level_name: 'Org' });
    await create({
      provided_id: 'team',
      emails: ['a@b.c'],
      group_tags: ['eu'],
      hierarchy_level_name: 'Team',
      parent_provided_id: 'org',
    });
    await create({ provided_id: 'other', group_tags: ['gone'], hierarchy_level_name: 'Team' });
    await update({ provided_id: 'other', group_tags: [], hierarchy_level: null });
    await update({ provided_id: 'team', emails: ['x@y.z'] });
    await update({ provided_id: 'org', new_provided_id: 'org-2' });
    await restart();
    expect(await show('team')).toMatchObject({
      emails: ['x@y.z'],
      group_tags: ['eu'],
      hierarchy_level: 'Team',
    });
    expect(await show('other')).toMatchObject({ group_tags: [], hierarchy_level: null });
    expect(await listed('?parent_provided_id=org-2')).toEqual({ ids: ['team'], total: 1 });
    // Still under its renamed parent: the parent cannot go under it.
    const cycle = await update({ provided_id: 'org-2', parent_provided_id: 'team' });
    expect(cycle.json).toMatchObject({
      parent_provided_id: ['A customer cannot be the parent of its own ancestor.'],
    });
    // The parent is named by its team_id in the file: a rename left nothing to rewrite.
    const saved = JSON.parse(await readFile(dataFile, 'utf8'));
    const team = saved.user_groups.find((g: { provided_id: string }) => g.provided_id === 'team');
    const org = saved.user_groups.find((g: { provided_id: string }) => g.provided_id === 'org-2');
    expect(team).toMatchObject({ parent_team_id: org.team_id, hierarchy_level: 'Team' });
  });

  it('loads a data file written before these fields existed: none of them set', async () => {
    await emulator.close();
    const group = (id: string, teamId: number) => ({
      team_id: teamId,
      token: teamId.toString(16).padStart(64, '0'),
      name: id,
      provided_id: id,
      environment: 'Customer',
      mapping: {},
      properties: null,
    });
    const old = { version: 1, next_team_id: 3, user_groups: [group('a', 1), group('b', 2)] };
    await writeFile(dataFile, `${JSON.stringify(old, null, 2)}\n`, { mode: 0o600 });
    emulator = await startEmulator({ port: 0, dialect: 'customer', apiTokens, dataFile });
    expect(await show('a')).toMatchObject({ emails: [], group_tags: [], hierarchy_level: null });
    expect((await update({ provided_id: 'b', parent_provided_id: 'a' })).status).toBe(200);
    await restart();
    expect(await listed('?parent_provided_id=a')).toEqual({ ids: ['b'], total: 1 });
  });

  it('journals the fields: the snapshot and its change lines rebuild the same store', () => {
    const store = new Store();
    const input = (userGroupId: string) => ({
      userGroupId,
      name: 'N',
      mapping: undefined,
      properties: undefined,
    });
    const org = store.getOrCreate('Customer', { ...input('org'), hierarchyLevel: 'Org' }).group;
    const snapshot = JSON.parse(JSON.stringify(store));
    const changes: StoreChange[] = [];
    store.onChange = (change) => changes.push(JSON.parse(store.changeLine(change)));
    const team = store.getOrCreate('Customer', { ...input('team'), parent: org }).group;
    const lone = store.getOrCreate('Customer', { ...input('lone'), parent: org }).group;
    store.update(team, { emails: ['a@b.c'], groupTags: ['eu'], hierarchyLevel: 'Team' });
    store.update(lone, { parent: null, groupTags: [] });
    store.update(org, { providedId: 'org-2' });
    const sub = store.getOrCreate('Customer', { ...input('sub'), parent: team }).group;
    store.remove(team);
    expect(changes[2]).toEqual({
      op: 'update',
      team_id: team.teamId,
      fields: { emails: ['a@b.c'], group_tags: ['eu'], hierarchy_level: 'Team' },
    });
    expect(changes[3]).toMatchObject({ fields: { parent_team_id: null, group_tags: [] } });
    // Deleting the parent left its child without one, in memory and in the file alike.
    expect(sub.parent).toBeNull();
    const copy = Store.fromJSON(snapshot, changes);
    expect(copy.toJSON()).toEqual(store.toJSON());
    expect(copy.find('Customer', 'sub')?.parent).toBeNull();
  });

  it('refuses a data file whose parent is missing, in another environment, or a cycle', async () => {
    await emulator.close();
    const group = (id: string, teamId: number, more: Record<string, unknown> = {}) => ({
      team_id: teamId,
      token: teamId.toString(16).padStart(64, '0'),
      name: id,
      provided_id: id,
      environment: 'Customer',
      mapping: {},
      properties: null,
      ...more,
    });
    for (const groups of [
      [group('a', 1, { parent_team_id: 9 })],
      [group('a', 1, { parent_team_id: 2 }), group('b', 2, { environment: 'Testing' })],
      [group('a', 1, { parent_team_id: 2 }), group('b', 2, { parent_team_id: 1 })],
      [group('a', 1, { parent_team_id: 1 })],
    ]) {
      const text = JSON.stringify({ version: 1, next_team_id: 3, user_groups: groups });
      await writeFile(dataFile, text, { mode: 0o600 });
      await expect(loadDataFile(dataFile), text).rejects.toThrow(/parent_team_id/);
    }
    emulator = await startEmulator({ port: 0, dialect: 'customer', apiTokens });
  });
});
