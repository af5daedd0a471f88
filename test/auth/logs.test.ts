// Store logs on both backends (memory and LevelDB): order, filters, continuation tokens (sticky
// when caught up), retention pruning, and what a record may contain.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { StoreLogs, summarize } from '../../src/api/auth/logs.js';
import { parseLogQuery } from '../../src/api/auth/log-query.js';
import { openAuthKv } from '../../src/storage/auth/kv.js';
import { LogRecords } from '../../src/storage/auth/logs.js';
import { AppError } from '../../src/errors.js';

const S1 = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const S2 = '01JBBBBBBBBBBBBBBBBBBBBBBB';
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const call = (time: number, operation: string, storeId = S1, status = 200, errorCode = '') => ({
  time,
  clientId: 'c1',
  operation,
  storeId,
  modelId: 'M1',
  status,
  errorCode,
  latencyMs: 1.5,
  input: {
    storeId,
    tupleKey: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
    context: { secret: 'never-logged' },
  },
});

for (const backend of ['memory', 'leveldb'] as const) {
  describe(`store logs (${backend})`, () => {
    const open = async (): Promise<StoreLogs> => {
      let path: string | undefined;
      if (backend === 'leveldb') {
        path = await mkdtemp(join(tmpdir(), 'latch-logs-'));
        dirs.push(path);
      }
      return new StoreLogs(new LogRecords(await openAuthKv(path)), 7);
    };

    it('pages in time order per store, with a sticky token once caught up', async () => {
      const logs = await open();
      const t0 = Date.now() - 10_000;
      for (let i = 0; i < 5; i++) logs.recordCall(call(t0 + i, i % 2 ? 'Check' : 'Write'));
      logs.recordCall(call(t0 + 2, 'Read', S2));
      const p1 = await logs.search(S1, { pageSize: 2 });
      expect(p1.logs.map((l) => (l.request as { operation: string }).operation)).toEqual(['Write', 'Check']);
      const p2 = await logs.search(S1, { pageSize: 2, continuationToken: p1.continuation_token });
      const p3 = await logs.search(S1, { pageSize: 2, continuationToken: p2.continuation_token });
      expect(p3.logs).toHaveLength(1);
      const p4 = await logs.search(S1, { pageSize: 2, continuationToken: p3.continuation_token });
      expect(p4).toEqual({ logs: [], continuation_token: p3.continuation_token });
      logs.recordCall(call(Date.now(), 'Expand'));
      const p5 = await logs.search(S1, { continuationToken: p3.continuation_token });
      expect(p5.logs.map((l) => (l.request as { operation: string }).operation)).toEqual(['Expand']);
      expect(await logs.search('01JCCCCCCCCCCCCCCCCCCCCCCC', {})).toEqual({ logs: [], continuation_token: '' });
      await logs.close();
    });

    it('filters by query, sorts descending and rejects foreign tokens', async () => {
      const logs = await open();
      const t0 = Date.now() - 5000;
      logs.recordCall(call(t0, 'Write'));
      logs.recordCall(call(t0 + 1, 'Check', S1, 403, 'insufficient_permissions'));
      logs.recordCall(call(t0 + 2, 'Check'));
      const failed = await logs.search(S1, { query: 'response.status:403 AND request.operation:"Check"' });
      expect(failed.logs).toHaveLength(1);
      expect(failed.logs[0]).toMatchObject({
        client_id: 'c1',
        store_id: S1,
        response: { status: 403, error_code: 'insufficient_permissions' },
      });
      const desc = await logs.search(S1, { sort: 'timestamp:-1' });
      expect(desc.logs.map((l) => (l.response as { status: number }).status)).toEqual([200, 403, 200]);
      const asc = await logs.search(S1, { pageSize: 1 });
      await expect(
        logs.search(S1, { pageSize: 1, continuationToken: asc.continuation_token, query: 'client_id:c1' }),
      ).rejects.toThrow(AppError);
      await expect(logs.search(S1, { startTime: 'yesterday' })).rejects.toMatchObject({ code: 'validation_error' });
      await logs.close();
    });

    it("a malformed store id never becomes a key (no writing into another store's range)", async () => {
      const logs = await open();
      logs.recordCall(call(Date.now(), 'Check', `${S2}\u00009999999999999`));
      logs.recordCall(call(Date.now(), 'Check', 'not-a-store'));
      expect((await logs.search(S2, {})).logs).toEqual([]);
      await logs.close();
    });

    it('prunes records past the retention period', async () => {
      const logs = await open();
      const day = 86_400_000;
      logs.recordCall(call(Date.now() - 8 * day, 'Write'));
      logs.recordCall(call(Date.now() - 1000, 'Check'));
      await logs.flush();
      expect(await logs.prune()).toBe(1);
      const all = await logs.search(S1, { startTime: new Date(Date.now() - 30 * day).toISOString() });
      expect(all.logs.map((l) => (l.request as { operation: string }).operation)).toEqual(['Check']);
      await logs.close();
    });
  });
}

describe('record content', () => {
  it('keeps the tuple key and drops contexts', () => {
    const s = summarize({
      storeId: S1,
      tupleKey: { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
      context: { secret: 'x' },
    });
    expect(s).toEqual({ tupleKey: { user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: undefined } });
    expect(
      JSON.stringify(
        summarize({
          writes: [{ user: 'u:1', relation: 'r', object: 'o:1', condition: { name: 'c', context: { pw: 'x' } } }],
          deletes: [],
        }),
      ),
    ).not.toContain('pw');
    expect(summarize({ filter: { object: 'doc:', relation: 'viewer' } })).toEqual({
      filter: { object: 'doc:', relation: 'viewer' },
    });
  });

  it('query syntax', () => {
    const e = { request: { operation: 'Check' }, response: { status: 200 }, client_id: 'abc' };
    expect(parseLogQuery('request.operation:Check')(e)).toBe(true);
    expect(parseLogQuery('request.operation:Write OR client_id:ab*')(e)).toBe(true);
    expect(parseLogQuery('NOT response.status:200')(e)).toBe(false);
    expect(parseLogQuery('-(request.operation:Check AND client_id:abc)')(e)).toBe(false);
    expect(() => parseLogQuery('request.operation:')).toThrow(expect.objectContaining({ code: 'validation_error' }));
  });
});
