// `latch review` against a real server: who held each relation on an object at an instant, what a
// user could reach, and who gained and lost access between two instants, each with the revision
// read. The instants are the changelog's own timestamps, so each one names exactly one revision.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, start } from '../http/helpers.js';
import { latch } from './helpers.js';

let s: Awaited<ReturnType<typeof start>>;
let store = '';
/** The instant of each write below (from ReadChanges), by step name. */
const at: Record<string, string> = {};

const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'group',
      relations: { member: { this: {} } },
      metadata: { relations: { member: { directly_related_user_types: [{ type: 'user' }] } } },
    },
    {
      type: 'document',
      relations: {
        editor: { this: {} },
        viewer: { union: { child: [{ this: {} }, { computedUserset: { relation: 'editor' } }] } },
      },
      metadata: {
        relations: {
          editor: { directly_related_user_types: [{ type: 'user' }] },
          viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
  ],
};

/** One write; returns only once the clock has moved past its commit millisecond. */
async function step(name: string, writes: object[], deletes: object[] = []): Promise<void> {
  const body: Record<string, unknown> = {};
  if (writes.length) body.writes = { tuple_keys: writes };
  if (deletes.length) body.deletes = { tuple_keys: deletes };
  const r = await call(s.base, 'POST', `/stores/${store}/write`, body);
  expect(r.status).toBe(200);
  const changes = await call(s.base, 'GET', `/stores/${store}/changes?page_size=100`);
  const list = (changes.json as { changes: { timestamp: string }[] }).changes;
  at[name] = (list[list.length - 1] as { timestamp: string }).timestamp;
  const committed = Date.parse(at[name]);
  while (Date.now() <= committed + 1) await new Promise((r) => setImmediate(r));
}

beforeAll(async () => {
  s = await start();
  store = ((await call(s.base, 'POST', '/stores', { name: 'review' })).json as { id: string }).id;
  expect((await call(s.base, 'POST', `/stores/${store}/authorization-models`, MODEL)).status).toBe(201);
  await step('anne edits', [{ user: 'user:anne', relation: 'editor', object: 'document:contract' }]);
  await step('legal views', [
    { user: 'group:legal#member', relation: 'viewer', object: 'document:contract' },
    { user: 'user:bob', relation: 'member', object: 'group:legal' },
    { user: 'user:bob', relation: 'viewer', object: 'document:memo' },
  ]);
  await step('bob leaves legal', [], [{ user: 'user:bob', relation: 'member', object: 'group:legal' }]);
});
afterAll(() => s.close());

const review = (...argv: string[]) => latch(['review', '--store', store, '--api-url', s.base, ...argv]);

describe('latch review', () => {
  it('--object --at lists every user with each relation, with the revision read (CSV)', async () => {
    const r = await review('--object', 'document:contract', '--at', at['legal views'] as string);
    expect(r.err).toBe('');
    expect(r.out.trim().split('\n')).toEqual([
      'revision,object,relation,user',
      '2,document:contract,editor,user:anne',
      '2,document:contract,viewer,group:legal#member',
      '2,document:contract,viewer,user:anne',
      '2,document:contract,viewer,user:bob',
    ]);
  });

  it('--user --type lists every object the user could reach (JSON)', async () => {
    const r = await review(
      '--user',
      'user:bob',
      '--type',
      'document',
      '--at',
      at['legal views'] as string,
      '--format',
      'json',
    );
    const doc = JSON.parse(r.out) as { revision: number; access: unknown[] };
    expect(doc.revision).toBe(2);
    expect(doc.access).toEqual([
      { object: 'document:contract', relation: 'viewer', user: 'user:bob' },
      { object: 'document:memo', relation: 'viewer', user: 'user:bob' },
    ]);
    const later = JSON.parse(
      (
        await review(
          '--user',
          'user:bob',
          '--type',
          'document',
          '--at',
          at['bob leaves legal'] as string,
          '--format',
          'json',
        )
      ).out,
    ) as { revision: number; access: unknown[] };
    expect(later.revision).toBe(3);
    expect(later.access).toEqual([{ object: 'document:memo', relation: 'viewer', user: 'user:bob' }]);
  });

  it('--between reports who gained and who lost access from one instant to the other', async () => {
    const r = await review(
      '--object',
      'document:contract',
      '--between',
      at['anne edits'] as string,
      at['bob leaves legal'] as string,
      '--format',
      'json',
    );
    const doc = JSON.parse(r.out) as Record<string, unknown>;
    expect(doc.from).toMatchObject({ revision: 1 });
    expect(doc.to).toMatchObject({ revision: 3 });
    // bob held viewer at revision 2 only: at neither end, so neither gained nor lost.
    expect(doc.gained).toEqual([{ object: 'document:contract', relation: 'viewer', user: 'group:legal#member' }]);
    expect(doc.lost).toEqual([]);
    const back = await review(
      '--object',
      'document:contract',
      '--between',
      at['legal views'] as string,
      at['bob leaves legal'] as string,
    );
    expect(back.out.trim().split('\n')).toEqual([
      'change,from_revision,to_revision,object,relation,user',
      'lost,2,3,document:contract,viewer,user:bob',
    ]);
  });

  it("bad input is a usage error; a time in the future is the server's revision_in_future", async () => {
    expect((await review('--object', 'document:contract')).code).not.toBe(0);
    expect((await review('--object', 'contract', '--at', at['anne edits'] as string)).code).not.toBe(0);
    expect((await review('--user', 'user:bob', '--at', at['anne edits'] as string)).code).not.toBe(0);
    const future = await review('--object', 'document:contract', '--at', '2999-01-01T00:00Z');
    expect(future.code).not.toBe(0);
    expect(future.err).toContain('revision_in_future');
  });

  it('latch query takes --at-revision and --at-time', async () => {
    const q = (...argv: string[]) =>
      latch(['query', ...argv, '--store-id', store, '--api-url', s.base]).then((r) => JSON.parse(r.out) as unknown);
    const bob = ['user:bob', 'viewer', 'document:contract'];
    expect(await q('check', ...bob, '--at-revision', '2')).toEqual({ allowed: true });
    expect(await q('check', ...bob, '--at-revision', '3')).toEqual({ allowed: false });
    expect(await q('check', ...bob, '--at-time', at['legal views'] as string)).toEqual({ allowed: true });
    expect(await q('list-objects', 'user:bob', 'viewer', 'document', '--at-revision', '3')).toMatchObject({
      objects: ['document:memo'],
    });
  });
});
