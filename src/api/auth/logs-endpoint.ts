// SearchStoreLogs — `GET /stores/{store_id}/logs` (docs/reference/http-api.md §4.26) as an entry of the API
// endpoint table, made per server because it reads that server's StoreLogs. Scope `search:logs`
// is enforced by the authenticator before `parse` runs (docs/reference/decisions.md D1); an unknown store is 404 (D2).

import { endpoint, ok, type Endpoint } from '../endpoint.js';
import { searchParams } from '../record-search.js';
import { storeId } from '../validate.js';
import type { LogSearch, StoreLogs } from './logs.js';

interface SearchInput extends LogSearch {
  readonly storeId: string;
}

const MESSAGE = 'SearchStoreLogsRequest';

export function logsEndpoint(logs: StoreLogs): Endpoint {
  return endpoint<SearchInput>({
    name: 'SearchStoreLogs',
    op: 'search-store-logs',
    method: 'get',
    path: '/stores/:store_id/logs',
    parse(req) {
      return { storeId: storeId(req.params.store_id, MESSAGE), ...searchParams(req, MESSAGE) };
    },
    async handle(input, ctx) {
      await ctx.latch.getStore(input.storeId); // 404 store_id_not_found for unknown or deleted stores
      return ok(await logs.search(input.storeId, input));
    },
  });
}
