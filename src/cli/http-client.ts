// A small typed client of the OpenFGA HTTP API (docs/reference/http-api.md §4) on `fetch`, for the command line.
// Credentials: a static bearer token (`--api-token`), or OAuth2 client credentials
// (`--client-id`, `--client-secret`, `--api-token-issuer`, `--api-audience`, docs/reference/http-api.md §4.30):
// the token is fetched on first use and reused until shortly before `expires_in` elapses.
// Every non-2xx answer becomes an ApiError carrying the status and the `{code, message}` body.

import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  JsonObject,
  Store,
  Tuple,
  TupleKey,
} from '../domain/types.js';
import type { ListedUser, UsersetTreeNode } from '../engine/contract.js';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(`${status} ${code}: ${message}`);
  }
}

export interface ClientCredentials {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Host (`auth.fga.dev`) or URL of the token endpoint; a bare host gets `https://` and `/oauth/token`. */
  readonly issuer: string;
  readonly audience?: string | undefined;
}

export interface ClientOptions {
  readonly apiUrl: string;
  readonly apiToken?: string | undefined;
  readonly credentials?: ClientCredentials | undefined;
}

export interface Page {
  readonly pageSize?: number | undefined;
  readonly continuationToken?: string | undefined;
}

export interface CheckBody {
  readonly tuple_key: { user: string; relation: string; object: string };
  readonly contextual_tuples?: { tuple_keys: TupleKey[] };
  readonly context?: JsonObject;
  readonly authorization_model_id?: string;
  readonly consistency?: string;
}

export interface BatchCheckBody {
  readonly checks: (Omit<CheckBody, 'authorization_model_id' | 'consistency'> & { correlation_id: string })[];
  readonly authorization_model_id?: string;
  readonly consistency?: string;
}

export type BatchCheckItemResult =
  { allowed: boolean } | { error: { input_error?: string; internal_error?: string; message: string } };

/** A past point of a query (docs/audit.md): one of the two, or neither for now. */
export interface AtPoint {
  readonly at_revision?: number;
  readonly at_time?: string;
}

export interface ListObjectsBody extends AtPoint {
  readonly type: string;
  readonly relation: string;
  readonly user: string;
  readonly contextual_tuples?: { tuple_keys: TupleKey[] };
  readonly context?: JsonObject;
  readonly authorization_model_id?: string;
}

export interface ListUsersBody extends AtPoint {
  readonly object: { type: string; id: string };
  readonly relation: string;
  readonly user_filters: { type: string; relation?: string }[];
  readonly contextual_tuples?: TupleKey[];
  readonly context?: JsonObject;
  readonly authorization_model_id?: string;
}

export interface WriteBody {
  readonly writes?: { tuple_keys: TupleKey[]; on_duplicate?: 'error' | 'ignore' };
  readonly deletes?: { tuple_keys: Omit<TupleKey, 'condition'>[]; on_missing?: 'error' | 'ignore' };
  readonly authorization_model_id?: string;
}

export interface DeleteTuplesBody {
  filter: { object_type?: string; object?: string; relation?: string; user?: string };
  dry_run?: boolean;
  limit?: number;
}

export interface DeleteTuplesReply {
  tuple_keys: TupleKey[];
  more: boolean;
  dry_run: boolean;
  revision: number;
}

export interface WriteCounts {
  readonly written: number;
  readonly deleted: number;
}

export class FgaHttpClient {
  private readonly base: string;
  private token: { value: string; expires: number } | undefined;

  constructor(private readonly options: ClientOptions) {
    this.base = options.apiUrl.replace(/\/+$/, '');
  }

  // ---- stores ----
  listStores(
    page: Page & { name?: string | undefined } = {},
  ): Promise<{ stores: Store[]; continuation_token: string }> {
    return this.get(
      `/stores${query({ page_size: page.pageSize, continuation_token: page.continuationToken, name: page.name })}`,
    );
  }
  createStore(name: string): Promise<Store> {
    return this.send('POST', '/stores', { name });
  }
  getStore(storeId: string): Promise<Store> {
    return this.get(`/stores/${enc(storeId)}`);
  }
  async deleteStore(storeId: string): Promise<void> {
    await this.send('DELETE', `/stores/${enc(storeId)}`);
  }

  // ---- models ----
  listModels(
    storeId: string,
    page: Page = {},
  ): Promise<{ authorization_models: AuthorizationModel[]; continuation_token: string }> {
    return this.get(
      `/stores/${enc(storeId)}/authorization-models${query({ page_size: page.pageSize, continuation_token: page.continuationToken })}`,
    );
  }
  async writeModel(storeId: string, model: AuthorizationModelInput): Promise<string> {
    const r = await this.send<{ authorization_model_id: string }>(
      'POST',
      `/stores/${enc(storeId)}/authorization-models`,
      model,
    );
    return r.authorization_model_id;
  }
  async getModel(storeId: string, modelId: string): Promise<AuthorizationModel> {
    return (
      await this.get<{ authorization_model: AuthorizationModel }>(
        `/stores/${enc(storeId)}/authorization-models/${enc(modelId)}`,
      )
    ).authorization_model;
  }
  /** The store's latest model, or undefined when it has none. */
  async latestModel(storeId: string): Promise<AuthorizationModel | undefined> {
    return (await this.listModels(storeId, { pageSize: 1 })).authorization_models[0];
  }

  // ---- assertions ----
  async readAssertions(storeId: string, modelId: string): Promise<Assertion[]> {
    return (await this.get<{ assertions: Assertion[] }>(`/stores/${enc(storeId)}/assertions/${enc(modelId)}`))
      .assertions;
  }
  async writeAssertions(storeId: string, modelId: string, assertions: readonly Assertion[]): Promise<void> {
    await this.send('PUT', `/stores/${enc(storeId)}/assertions/${enc(modelId)}`, { assertions });
  }

  // ---- tuples ----
  /**
   * What the server applied: latch says it in `Latch-Tuples-Written` / `Latch-Tuples-Deleted`
   * (ignored duplicates and missing deletes left out); undefined when the server does not say.
   */
  async write(storeId: string, body: WriteBody): Promise<WriteCounts | undefined> {
    let counts: WriteCounts | undefined;
    await this.send('POST', `/stores/${enc(storeId)}/write`, body, (h) => {
      const written = h.get('latch-tuples-written');
      const deleted = h.get('latch-tuples-deleted');
      if (written !== null && deleted !== null && /^\d+$/.test(written) && /^\d+$/.test(deleted))
        counts = { written: Number(written), deleted: Number(deleted) };
    });
    return counts;
  }
  read(
    storeId: string,
    body: {
      tuple_key?: { user?: string; relation?: string; object?: string };
      page_size?: number;
      continuation_token?: string;
    },
  ): Promise<{ tuples: Tuple[]; continuation_token: string }> {
    return this.send('POST', `/stores/${enc(storeId)}/read`, body);
  }
  /** Every tuple matching the filter, following continuation tokens. */
  async readAll(storeId: string, tupleKey?: { user?: string; relation?: string; object?: string }): Promise<Tuple[]> {
    const out: Tuple[] = [];
    let token = '';
    do {
      const r = await this.read(storeId, {
        ...(tupleKey ? { tuple_key: tupleKey } : {}),
        page_size: 100,
        ...(token ? { continuation_token: token } : {}),
      });
      out.push(...r.tuples);
      token = r.continuation_token;
    } while (token);
    return out;
  }

  /** Delete by filter (`POST /stores/{id}/delete-tuples`): one bounded, atomic request. */
  deleteTuples(storeId: string, body: DeleteTuplesBody): Promise<DeleteTuplesReply> {
    return this.send('POST', `/stores/${enc(storeId)}/delete-tuples`, body);
  }

  // ---- queries ----
  async check(storeId: string, body: CheckBody): Promise<boolean> {
    return (await this.send<{ allowed: boolean }>('POST', `/stores/${enc(storeId)}/check`, body)).allowed;
  }
  async batchCheck(storeId: string, body: BatchCheckBody): Promise<Record<string, BatchCheckItemResult>> {
    return (
      await this.send<{ result: Record<string, BatchCheckItemResult> }>(
        'POST',
        `/stores/${enc(storeId)}/batch-check`,
        body,
      )
    ).result;
  }
  async listObjects(storeId: string, body: ListObjectsBody): Promise<string[]> {
    return (await this.send<{ objects: string[] }>('POST', `/stores/${enc(storeId)}/list-objects`, body)).objects;
  }
  async listUsers(storeId: string, body: ListUsersBody): Promise<ListedUser[]> {
    return (await this.send<{ users: ListedUser[] }>('POST', `/stores/${enc(storeId)}/list-users`, body)).users;
  }
  /** Every object, page after page (latch's paged ListObjects): complete and in order, whatever the server's result cap. */
  async listAllObjects(
    storeId: string,
    body: ListObjectsBody,
    pageSize = 1000,
    onRevision?: (revision: number) => void,
  ): Promise<string[]> {
    const out: string[] = [];
    let token = '';
    do {
      const page = await this.send<{ objects: string[]; continuation_token?: string }>(
        'POST',
        `/stores/${enc(storeId)}/list-objects`,
        { ...body, page_size: pageSize, ...(token ? { continuation_token: token } : {}) },
        revisionHeader(onRevision),
      );
      out.push(...page.objects);
      token = page.continuation_token ?? '';
    } while (token);
    return out;
  }
  /** Every user, page after page (latch's paged ListUsers). */
  async listAllUsers(
    storeId: string,
    body: ListUsersBody,
    pageSize = 1000,
    onRevision?: (revision: number) => void,
  ): Promise<ListedUser[]> {
    const out: ListedUser[] = [];
    let token = '';
    do {
      const page = await this.send<{ users: ListedUser[]; continuation_token?: string }>(
        'POST',
        `/stores/${enc(storeId)}/list-users`,
        { ...body, page_size: pageSize, ...(token ? { continuation_token: token } : {}) },
        revisionHeader(onRevision),
      );
      out.push(...page.users);
      token = page.continuation_token ?? '';
    } while (token);
    return out;
  }
  async expand(
    storeId: string,
    body: {
      tuple_key: { object: string; relation: string };
      authorization_model_id?: string;
      contextual_tuples?: { tuple_keys: TupleKey[] };
    },
  ): Promise<{ root: UsersetTreeNode }> {
    return (await this.send<{ tree: { root: UsersetTreeNode } }>('POST', `/stores/${enc(storeId)}/expand`, body)).tree;
  }

  // ---- clients (latch's /clients endpoints: an account-level credential with manage:clients) ----
  async listClients(): Promise<Record<string, unknown>[]> {
    return (await this.get<{ clients: Record<string, unknown>[] }>('/clients')).clients;
  }
  createClient(body: {
    store_id: string;
    scopes: string[];
    name?: string;
    public_key?: Record<string, unknown>;
  }): Promise<Record<string, unknown>> {
    return this.send('POST', '/clients', body);
  }
  rotateClient(clientId: string): Promise<Record<string, unknown>> {
    return this.send('POST', `/clients/${enc(clientId)}/rotate`, {});
  }
  revokeClient(clientId: string): Promise<Record<string, unknown>> {
    return this.send('DELETE', `/clients/${enc(clientId)}`);
  }

  // ---- permission indexes (docs/permission-indexes.md) ----
  listIndexes(
    storeId: string,
    page: Page = {},
  ): Promise<{ indexes: Record<string, unknown>[]; continuation_token: string }> {
    return this.get(
      `/stores/${enc(storeId)}/indexes${query({ page_size: page.pageSize, continuation_token: page.continuationToken })}`,
    );
  }
  getIndex(storeId: string, indexId: string): Promise<Record<string, unknown>> {
    return this.get(`/stores/${enc(storeId)}/indexes/${enc(indexId)}`);
  }
  createIndex(
    storeId: string,
    body: { name: string; relations: { object_type: string; relation: string }[]; authorization_model_id?: string },
  ): Promise<Record<string, unknown>> {
    return this.send('POST', `/stores/${enc(storeId)}/indexes`, body);
  }
  async deleteIndex(storeId: string, indexId: string): Promise<void> {
    await this.send('DELETE', `/stores/${enc(storeId)}/indexes/${enc(indexId)}`);
  }

  /** ReadExpansions: each `{"result": …}` line's result as it arrives; an error line or status throws ApiError. */
  expansions(
    storeId: string,
    indexId: string,
    q: { authorization_model_id: string; from?: string | undefined },
    signal?: AbortSignal,
  ): AsyncGenerator<Record<string, unknown>> {
    return this.stream(`/stores/${enc(storeId)}/indexes/${enc(indexId)}/expansions${query(q)}`, signal);
  }

  // ---- changes (ReadChanges, and Watch: docs/watch.md) ----
  readChanges(
    storeId: string,
    q: Page & { type?: string | undefined; startTime?: string | undefined } = {},
  ): Promise<{ changes: Record<string, unknown>[]; continuation_token: string }> {
    return this.get(
      `/stores/${enc(storeId)}/changes${query({ type: q.type, start_time: q.startTime, page_size: q.pageSize, continuation_token: q.continuationToken })}`,
    );
  }
  /** Watch: each event (`{change, continuation_token}` or `{heartbeat}`) as it arrives. */
  watch(
    storeId: string,
    q: { type?: string | undefined; start_time?: string | undefined; continuation_token?: string | undefined },
    signal?: AbortSignal,
  ): AsyncGenerator<Record<string, unknown>> {
    return this.stream(`/stores/${enc(storeId)}/watch${query(q)}`, signal);
  }

  /** A streamed endpoint's `{"result": …}` lines; a refused request or an error line throws ApiError. */
  private async *stream(path: string, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    const headers: Record<string, string> = { accept: 'application/json' };
    const auth = await this.authorization();
    if (auth) headers.authorization = auth;
    const res = await fetch(`${this.base}${path}`, { headers, signal }).catch((err: unknown) => {
      throw new ApiError(
        0,
        'connection_failed',
        `cannot reach ${this.base}: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    yield* ndjson(res);
  }

  /**
   * ImpactAuthorizationModel (docs/changing-models.md): each line's result as it arrives. An error
   * before the first line is a plain error reply; one after it, an error line: both throw ApiError.
   */
  async *impact(
    storeId: string,
    body: Record<string, unknown>,
    signal?: AbortSignal,
  ): AsyncGenerator<Record<string, unknown>> {
    const headers: Record<string, string> = { accept: 'application/json', 'content-type': 'application/json' };
    const auth = await this.authorization();
    if (auth) headers.authorization = auth;
    const res = await fetch(`${this.base}/stores/${enc(storeId)}/authorization-models/impact`, {
      method: 'POST',
      headers,
      body: JSON.stringify(body),
      signal,
    }).catch((err: unknown) => {
      throw new ApiError(
        0,
        'connection_failed',
        `cannot reach ${this.base}: ${err instanceof Error ? err.message : String(err)}`,
      );
    });
    yield* ndjson(res);
  }

  // ---- transport ----
  private get<T>(path: string): Promise<T> {
    return this.send<T>('GET', path);
  }

  private async send<T>(
    method: string,
    path: string,
    body?: unknown,
    onHeaders?: (headers: Headers) => void,
  ): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const auth = await this.authorization();
    if (auth) headers.authorization = auth;
    let res: Response;
    try {
      res = await fetch(this.base + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (err) {
      const cause = err instanceof Error && err.cause instanceof Error ? `: ${err.cause.message}` : '';
      throw new ApiError(0, 'connection_failed', `cannot reach ${this.base}${cause}`);
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : {};
    } catch {
      json = undefined;
    }
    if (!res.ok) {
      const o = (typeof json === 'object' && json !== null ? json : {}) as { code?: unknown; message?: unknown };
      throw new ApiError(
        res.status,
        typeof o.code === 'string' ? o.code : 'http_error',
        typeof o.message === 'string' ? o.message : text.slice(0, 200),
      );
    }
    if (json === undefined) throw new ApiError(res.status, 'invalid_response', `not JSON: ${text.slice(0, 200)}`);
    onHeaders?.(res.headers);
    return json as T;
  }

  private async authorization(): Promise<string | undefined> {
    if (this.options.apiToken) return `Bearer ${this.options.apiToken}`;
    const c = this.options.credentials;
    if (!c) return undefined;
    if (!this.token || Date.now() > this.token.expires) this.token = await fetchToken(c);
    return `Bearer ${this.token.value}`;
  }
}

/** OAuth2 client-credentials grant, form-encoded as the official SDKs send it. */
async function fetchToken(c: ClientCredentials): Promise<{ value: string; expires: number }> {
  const url = /^https?:\/\//.test(c.issuer) ? c.issuer : `https://${c.issuer}`;
  const endpoint = new URL(url).pathname === '/' ? new URL('/oauth/token', url).toString() : url;
  const form = new URLSearchParams({
    grant_type: 'client_credentials',
    client_id: c.clientId,
    client_secret: c.clientSecret,
  });
  if (c.audience) form.set('audience', c.audience);
  let res: Response;
  try {
    res = await fetch(endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: form,
    });
  } catch {
    throw new ApiError(0, 'connection_failed', `cannot reach token issuer ${endpoint}`);
  }
  const body = (await res.json().catch(() => ({}))) as {
    access_token?: unknown;
    expires_in?: unknown;
    error?: unknown;
    error_description?: unknown;
  };
  if (!res.ok || typeof body.access_token !== 'string') {
    throw new ApiError(
      res.status,
      typeof body.error === 'string' ? body.error : 'token_request_failed',
      typeof body.error_description === 'string' ? body.error_description : 'no access_token in the response',
    );
  }
  const ttl = typeof body.expires_in === 'number' ? body.expires_in : 300;
  return { value: body.access_token, expires: Date.now() + Math.max(0, ttl - 30) * 1000 };
}

/** The `{"result": …}` lines of a streamed reply; a plain error reply or an error line throws ApiError. */
async function* ndjson(res: Response): AsyncGenerator<Record<string, unknown>> {
  const dec = new TextDecoder();
  let buf = '';
  for await (const chunk of res.body as ReadableStream<Uint8Array>) {
    buf += dec.decode(chunk, { stream: true });
    for (let nl = buf.indexOf('\n'); nl !== -1; nl = buf.indexOf('\n')) {
      const line = JSON.parse(buf.slice(0, nl)) as StreamLine;
      buf = buf.slice(nl + 1);
      if (line.result) yield line.result;
      else throw streamError(res.status, line);
    }
  }
  // A plain (non-streamed) error reply is one JSON object without a final newline.
  if (buf.trim() !== '') throw streamError(res.status, JSON.parse(buf) as StreamLine);
}

interface StreamLine {
  result?: Record<string, unknown>;
  error?: { code?: unknown; message?: string };
  code?: string;
  message?: string;
}

function streamError(status: number, line: StreamLine): ApiError {
  return new ApiError(
    status,
    typeof line.code === 'string' ? line.code : typeof line.error?.code === 'string' ? line.error.code : 'stream_error',
    line.error?.message ?? line.message ?? 'stream error',
  );
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

function query(params: Record<string, string | number | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : '';
}

/** Reads `Latch-Revision` (the revision a past query read) into `onRevision`. */
function revisionHeader(onRevision?: (revision: number) => void): ((h: Headers) => void) | undefined {
  if (!onRevision) return undefined;
  return (h) => {
    const v = h.get('latch-revision');
    if (v !== null && /^\d+$/.test(v)) onRevision(Number(v));
  };
}
