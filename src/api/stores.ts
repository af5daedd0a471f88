// Store endpoints (docs/reference/http-api.md §4.1–4.5) and the operational health checks (§4.31).

import { AppError } from '../errors.js';
import {
  NO_CONTENT,
  constantReply,
  endpoint,
  ok,
  storeEndpoint,
  type ApiRequest,
  type CallContext,
  type Endpoint,
  type Reply,
} from './endpoint.js';
import { storeOut } from './render.js';
import { P, isObj, match, pageSize, str, tokenText, typeError, type Obj } from './validate.js';

/** A POST body as an object; `{}` for an empty body (the transport already mapped that). */
export function bodyObject(req: ApiRequest): Obj {
  if (isObj(req.body)) return req.body;
  throw typeError('body', 'message', req.body);
}

/** A query parameter as a string ('' when absent); the channel may pass numbers. */
export function queryText(req: ApiRequest, name: string): string {
  const v = req.query(name);
  if (v === undefined || v === null) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw typeError(name, 'string', v);
}

interface ListStoresInput {
  readonly pageSize: number;
  readonly token: string;
  readonly name: string;
}

const listStores = endpoint<ListStoresInput>({
  name: 'ListStores',
  op: 'list-stores',
  method: 'get',
  path: '/stores',
  parse(req) {
    const size = pageSize(req.query('page_size'), 'ListStoresRequest');
    const token = tokenText(req.query('continuation_token'), 'ListStoresRequest');
    const name = match(queryText(req, 'name'), P.storeName, 'ListStoresRequest', 'Name', true);
    return { pageSize: size, token, name };
  },
  async handle(input, ctx) {
    const after = input.token ? ctx.tokens.decode('stores', '', input.token) : undefined;
    if (after && after.filter !== input.name)
      throw new AppError('invalid_continuation_token', 'Invalid continuation token');
    const page = await ctx.latch.listStores({
      pageSize: input.pageSize,
      after: after?.cursor,
      name: input.name || undefined,
    });
    const token = page.next ? ctx.tokens.encode('stores', { storeId: '', filter: input.name, cursor: page.next }) : '';
    return ok({ stores: page.items.map(storeOut), continuation_token: token });
  },
});

const createStore = endpoint<{ name: string }>({
  name: 'CreateStore',
  op: 'create-store',
  method: 'post',
  path: '/stores',
  parse(req) {
    const body = bodyObject(req);
    return { name: match(str(body, 'name'), P.storeName, 'CreateStoreRequest', 'Name') };
  },
  async handle(input, ctx) {
    const s = await ctx.latch.createStore(input.name);
    return ok({ id: s.id, name: s.name, created_at: s.created_at, updated_at: s.updated_at }, 201);
  },
});

const getStore = storeEndpoint({
  name: 'GetStore',
  op: 'get-store',
  method: 'get',
  path: '/stores/:store_id',
  async handle(input, ctx) {
    return ok(storeOut(await ctx.latch.getStore(input.storeId)));
  },
});

const deleteStore = storeEndpoint({
  name: 'DeleteStore',
  op: 'delete-store',
  method: 'del',
  path: '/stores/:store_id',
  async handle(input, ctx) {
    await ctx.latch.deleteStore(input.storeId);
    return NO_CONTENT;
  },
});

/** Declared by the OpenFGA protos, never implemented (§4.5). */
const updateStore = endpoint<never>({
  name: 'UpdateStore',
  op: 'update-store',
  method: 'patch',
  path: '/stores/:store_id',
  parse() {
    throw new AppError('unimplemented', 'method UpdateStore not implemented');
  },
  handle: () => Promise.reject(new AppError('unimplemented', 'method UpdateStore not implemented')),
});

const SERVING: Reply = constantReply({ status: 'SERVING' });

const healthz = endpoint<undefined>({
  name: 'Health',
  op: 'health',
  method: 'get',
  path: '/healthz',
  parse: () => undefined,
  handle: () => Promise.resolve(SERVING),
});

/** 200 once the service reported every store index loaded; `unavailable` before. */
const readyz = endpoint<undefined>({
  name: 'Ready',
  op: 'ready',
  method: 'get',
  path: '/readyz',
  parse: () => undefined,
  handle(_input, ctx: CallContext) {
    if (!ctx.ready()) return Promise.reject(new AppError('unavailable', 'latch is loading its indexes'));
    return Promise.resolve(SERVING);
  },
});

export const STORE_ENDPOINTS: readonly Endpoint[] = [
  listStores,
  createStore,
  getStore,
  deleteStore,
  updateStore,
  healthz,
  readyz,
];
