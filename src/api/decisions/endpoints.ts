// The decision log's endpoints (latch's own, docs/audit.md), made per server because they read
// that server's DecisionLog: search a store's decisions (`GET /stores/{id}/decisions`, like the
// store logs), explain one (`GET /stores/{id}/decisions/{decision_id}/explain`), and read or set
// the store's sampling (`GET`/`PUT /stores/{id}/decision-log`, persisted in the datastore).
// Scopes (docs/auth.md): `search:decisions` for search and explain, `manage:decisions` to set.

import { isUlid } from '../../domain/ids.js';
import { AppError } from '../../errors.js';
import { endpoint, ok, storeEndpoint, type Endpoint } from '../endpoint.js';
import { searchParams, searchRecords, type RecordSearch } from '../record-search.js';
import { bodyObject } from '../stores.js';
import { storeId } from '../validate.js';
import { isSampling, type DecisionLog } from './log.js';
import { replay } from './replay.js';

interface SearchInput extends RecordSearch {
  readonly storeId: string;
}

interface DecisionInput {
  readonly storeId: string;
  readonly decisionId: string;
}

interface SettingInput {
  readonly storeId: string;
  readonly sampling?: number | undefined;
}

const SEARCH = 'SearchDecisionsRequest';

function decisionId(v: string | undefined): string {
  if (v === undefined || !isUlid(v))
    throw new AppError('validation_error', `invalid decision_id: '${v ?? ''}' is not a ULID`);
  return v;
}

const notFound = (id: string): AppError =>
  new AppError('decision_not_found', `decision '${id}' not found in this store`);

function settingOf(log: DecisionLog, storeId: string): Record<string, unknown> {
  return { store_id: storeId, sampling: log.storeSetting(storeId) ?? null, effective_sampling: log.rate(storeId) };
}

export function decisionEndpoints(log: DecisionLog): Endpoint[] {
  const search = endpoint<SearchInput>({
    name: 'SearchDecisions',
    op: 'search-decisions',
    method: 'get',
    path: '/stores/:store_id/decisions',
    parse: (req) => ({ storeId: storeId(req.params.store_id, SEARCH), ...searchParams(req, SEARCH) }),
    async handle(input, ctx) {
      await ctx.latch.getStore(input.storeId); // 404 store_id_not_found
      await log.flush();
      const page = await searchRecords(
        async (s) =>
          (await log.records.scan({ storeId: input.storeId, ...s })).map((r) => ({
            position: r.position,
            entry: r.record as unknown as Record<string, unknown>,
          })),
        input,
        { message: SEARCH, retentionMs: log.retentionMs, isPosition: isUlid },
      );
      return ok({ decisions: page.entries, continuation_token: page.continuation_token });
    },
  });
  const explain = endpoint<DecisionInput>({
    name: 'ExplainDecision',
    op: 'explain-decision',
    method: 'get',
    path: '/stores/:store_id/decisions/:decision_id/explain',
    parse: (req) => ({
      storeId: storeId(req.params.store_id, 'ExplainDecisionRequest'),
      decisionId: decisionId(req.params.decision_id),
    }),
    async handle(input, ctx) {
      await ctx.latch.getStore(input.storeId);
      await log.flush();
      const d = await log.records.get(input.storeId, input.decisionId);
      if (!d) throw notFound(input.decisionId);
      const r = await replay(ctx.latch, d);
      ctx.modelId = d.authorization_model_id;
      return ok({
        decision: r.decision,
        replayed: r.replayed,
        equal: r.equal,
        reason: r.reason ?? null,
        tree: r.tree ?? null,
        ...(r.whys ? { whys: r.whys } : {}),
      });
    },
  });
  const read = storeEndpoint({
    name: 'ReadDecisionLog',
    op: 'read-decision-log',
    method: 'get',
    path: '/stores/:store_id/decision-log',
    async handle(input, ctx) {
      await ctx.latch.getStore(input.storeId);
      return ok(settingOf(log, input.storeId));
    },
  });
  const write = endpoint<SettingInput>({
    name: 'WriteDecisionLog',
    op: 'write-decision-log',
    method: 'put',
    path: '/stores/:store_id/decision-log',
    parse(req) {
      const id = storeId(req.params.store_id, 'WriteDecisionLogRequest');
      const body = bodyObject(req);
      const s = body['sampling'];
      if (s !== null && !isSampling(s))
        throw new AppError('validation_error', 'invalid sampling: a number in [0, 1], or null for the server default');
      return { storeId: id, sampling: s === null ? undefined : s };
    },
    async handle(input, ctx) {
      await ctx.latch.getStore(input.storeId);
      await log.setSampling(input.storeId, input.sampling);
      return ok(settingOf(log, input.storeId));
    },
  });
  return [search, explain, read, write];
}
