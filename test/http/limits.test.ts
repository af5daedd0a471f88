// Server limits set by configuration reach the API edge: BatchCheck items (`--max-batch-check-items`).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, start, storeWithModel } from './helpers.js';

type Server = Awaited<ReturnType<typeof start>>;

describe('BatchCheck item limit from configuration', () => {
  let server: Server;
  let store = '';
  beforeAll(async () => {
    server = await start({ engine: { maxBatchCheckItems: 60 } });
    store = await storeWithModel(server.base, 'limits');
  });
  afterAll(async () => server.close());

  const batch = (n: number) => ({
    checks: Array.from({ length: n }, (_, i) => ({
      tuple_key: { user: 'user:anne', relation: 'viewer', object: `doc:${i}` },
      correlation_id: `c${i}`,
    })),
  });

  it('60 checks (the configured maximum) => 200 with 60 answers', async () => {
    const r = await call(server.base, 'POST', `/stores/${store}/batch-check`, batch(60));
    expect(r.status).toBe(200);
    expect(Object.keys((r.json as { result: object }).result)).toHaveLength(60);
  });

  it('61 checks => 400 validation_error naming the configured maximum', async () => {
    const r = await call(server.base, 'POST', `/stores/${store}/batch-check`, batch(61));
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({
      code: 'validation_error',
      message: 'batchCheck received 61 checks, the maximum allowed is 60',
    });
  });
});
