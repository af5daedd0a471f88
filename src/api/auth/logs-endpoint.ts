// SearchStoreLogs — `GET /stores/{store_id}/logs` (docs/reference/http-api.md §4.26) as an entry of the API
// endpoint table, made per server because it reads that server's StoreLogs. Scope `search:logs`
// is enforced by the authenticator before `parse` runs (docs/reference/decisions.md D1); an unknown store is 404 (D2).

import { endpoint, ok, type Endpoint } from '../endpoint.js';
import { pageSize, storeId, tokenText } from '../validate.js';
import type { LogSearch, StoreLogs } from './logs.js';

interface SearchInput extends LogSearch {
  readonly storeId: string;
}

const MESSAGE = 'SearchStoreLogsRequest';

function param(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  return typeof v === 'string' ? v : String(v);
}

export function logsEndpoint(logs: StoreLogs): Endpoint {
  return endpoint<SearchInput>({
    name: 'SearchStoreLogs',
    op: 'search-store-logs',
    method: 'get',
    path: '/stores/:store_id/logs',
    parse(req) {
      return {
        storeId: storeId(req.params.store_id, MESSAGE),
        startTime: param(req.query('start_time')),
        endTime: param(req.query('end_time')),
        sort: param(req.query('sort')),
        query: param(req.query('query')),
        continuationToken: tokenText(req.query('continuation_token'), MESSAGE) || undefined,
        pageSize: req.query('page_size') === undefined ? 100 : pageSize(req.query('page_size'), MESSAGE),
      };
    },
    async handle(input, ctx) {
      await ctx.latch.getStore(input.storeId); // 404 store_id_not_found for unknown or deleted stores
      return ok(await logs.search(input.storeId, input));
    },
  });
}
