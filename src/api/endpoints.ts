// The one endpoint table: every route of the API, served by the JSON/msgpack HTTP routes and the
// msgpack channel alike (by `op`).

import { AUTHZEN_ENDPOINTS } from './authzen/endpoints.js';
import { DELETE_TUPLES_ENDPOINTS } from './delete-tuples.js';
import { MIGRATE_ENDPOINTS } from './migrate-relations.js';
import type { Endpoint } from './endpoint.js';
import { EXPLAIN_CHECK } from './explain.js';
import { IMPORT_EXPORT_ENDPOINTS } from './import-export.js';
import { IMPACT_MODEL } from './impact.js';
import { MODEL_ENDPOINTS } from './models.js';
import { PERMISSION_INDEX_ENDPOINTS } from './permission-indexes.js';
import { QUERY_ENDPOINTS } from './queries.js';
import { SHADOW_ENDPOINTS } from './shadow.js';
import { STORE_ENDPOINTS } from './stores.js';
import { TUPLE_ENDPOINTS } from './tuples.js';
import { WATCH_ENDPOINTS } from './watch.js';

export const ENDPOINTS: readonly Endpoint[] = [
  ...STORE_ENDPOINTS,
  ...MODEL_ENDPOINTS,
  ...TUPLE_ENDPOINTS,
  ...WATCH_ENDPOINTS,
  ...PERMISSION_INDEX_ENDPOINTS,
  ...QUERY_ENDPOINTS,
  ...DELETE_TUPLES_ENDPOINTS,
  ...IMPORT_EXPORT_ENDPOINTS,
  ...MIGRATE_ENDPOINTS,
  ...AUTHZEN_ENDPOINTS,
  EXPLAIN_CHECK,
  IMPACT_MODEL,
  ...SHADOW_ENDPOINTS,
];

export const ENDPOINTS_BY_OP: ReadonlyMap<string, Endpoint> = new Map(ENDPOINTS.map((e) => [e.op, e]));

/** Parameter names of a route pattern, in order: `/stores/:store_id/x/:id` → [store_id, id]. */
export function paramNames(path: string): string[] {
  return path
    .split('/')
    .filter((s) => s.startsWith(':'))
    .map((s) => s.slice(1));
}
