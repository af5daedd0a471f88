// The typed endpoints of the OpenFGA HTTP API (docs/reference/http-api.md §4) for the command line,
// on the one JSON client src/client/json.ts (shared with the playground). Credentials: a static
// bearer token (`--api-token`), or OAuth2 client credentials (`--client-id`, `--client-secret`,
// `--api-token-issuer`, `--api-audience`, docs/reference/http-api.md §4.30): the token is fetched on
// first use and reused until shortly before `expires_in` elapses. Every non-2xx answer becomes an
// ApiError carrying the status and the `{code, message}` body.

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
import { ApiError, Credentials, JsonClient, RawBody, queryString as query, tokenUrlOf } from '../client/json.js';

export { ApiError };

interface ClientCredentials {
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

interface Page {
  readonly pageSize?: number | undefined;
  readonly continuationToken?: string | undefined;
}

interface CheckBody {
  readonly tuple_key: { user: string; relation: string; object: string };
  readonly contextual_tuples?: { tuple_keys: TupleKey[] };
  readonly context?: JsonObject;
  readonly authorization_model_id?: string;
  readonly consistency?: string;
}

interface BatchCheckBody {
  readonly checks: (Omit<CheckBody, 'authorization_model_id' | 'consistency'> & { correlation_id: string })[];
  readonly authorization_model_id?: string;
  readonly consistency?: string;
}

export type BatchCheckItemResult =
  { allowed: boolean } | { error: { input_error?: string; internal_error?: string; message: string } };

/** A past point of a query (docs/audit.md): one of the two, or neither for now. */
interface AtPoint {
  readonly at_revision?: number;
  readonly at_time?: string;
}

interface ListObjectsBody extends AtPoint {
  readonly type: string;
  readonly relation: string;
  readonly user: string;
  readonly contextual_tuples?: { tuple_keys: TupleKey[] };
  readonly context?: JsonObject;
  readonly authorization_model_id?: string;
}

interface ListUsersBody extends AtPoint {
  readonly object: { type: string; id: string };
  readonly relation: string;
  readonly user_filters: { type: string; relation?: string }[];
  readonly contextual_tuples?: TupleKey[];
  readonly context?: JsonObject;
  readonly authorization_model_id?: string;
}

interface WriteBody {
  readonly writes?: { tuple_keys: TupleKey[]; on_duplicate?: 'error' | 'ignore' };
  readonly deletes?: { tuple_keys: Omit<TupleKey, 'condition'>[]; on_missing?: 'error' | 'ignore' };
  readonly authorization_model_id?: string;
  /** Guarded write: docs/changing-models.md, "Guarded writes". */
  readonly preconditions?: readonly Record<string, unknown>[];
}

export interface DeleteTuplesBody {
  filter: { object_type?: string; object?: string; relation?: string; user?: string };
  dry_run?: boolean;
  limit?: number;
}

interface DeleteTuplesReply {
  tuple_keys: TupleKey[];
  more: boolean;
  dry_run: boolean;
  revision: number;
}

export interface MigrateReply {
  readonly matching: number;
  readonly copied: number;
  readonly carried: number;
  readonly deleted: number;
  readonly rejected: number;
  readonly rejected_sample: TupleKey[];
  readonly cursor: string;
  readonly done: boolean;
  readonly phase: string;
  readonly revision: number;
}

interface WriteCounts {
  readonly written: number;
  readonly deleted: number;
}

export class FgaHttpClient {
  private readonly json: JsonClient;

  constructor(options: ClientOptions) {
    const c = options.credentials;
    const credential = options.apiToken
      ? ({ kind: 'token', token: options.apiToken } as const)
      : c
        ? ({
            kind: 'client',
            clientId: c.clientId,
            clientSecret: c.clientSecret,
            tokenUrl: tokenUrlOf(c.issuer),
            audience: c.audience,
          } as const)
        : undefined;
    this.json = new JsonClient({ baseUrl: options.apiUrl, credentials: new Credentials(credential) });
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
  /** One chunk of a bulk import (latch's `POST /stores/{id}/tuples/import`). */
  importTuples(
    storeId: string,
    tupleKeys: readonly TupleKey[],
    modelId?: string,
  ): Promise<{ written: number; revision: number }> {
    return this.send('POST', `/stores/${enc(storeId)}/tuples/import`, {
      tuple_keys: tupleKeys,
      ...(modelId ? { authorization_model_id: modelId } : {}),
    });
  }
  /** One chunk of a bulk import as NDJSON bytes, one tuple key per line, sent as they are. */
  importNdjson(storeId: string, ndjson: Uint8Array, modelId?: string): Promise<{ written: number; revision: number }> {
    const headers: Record<string, string> = modelId ? { 'latch-authorization-model-id': modelId } : {};
    return this.send(
      'POST',
      `/stores/${enc(storeId)}/tuples/import`,
      new RawBody(ndjson, 'application/x-ndjson', headers),
    );
  }
  /** Every tuple of the store at one revision (latch's `GET /stores/{id}/tuples/export`), as it streams. */
  exportTuples(storeId: string, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    return this.stream(`/stores/${enc(storeId)}/tuples/export`, signal);
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
  /** One step of a relation migration (docs/changing-models.md, "Migrating data"). */
  migrateRelations(storeId: string, body: Record<string, unknown>): Promise<MigrateReply> {
    return this.send('POST', `/stores/${enc(storeId)}/migrate-relations`, body);
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

  // ---- shadow evaluation (docs/changing-models.md) ----
  setShadow(
    storeId: string,
    body: { authorization_model_id: string; sampling: number },
  ): Promise<Record<string, unknown>> {
    return this.send('PUT', `/stores/${enc(storeId)}/shadow`, body);
  }
  async clearShadow(storeId: string): Promise<void> {
    await this.send('DELETE', `/stores/${enc(storeId)}/shadow`);
  }
  shadowReport(storeId: string): Promise<Record<string, unknown>> {
    return this.get(`/stores/${enc(storeId)}/shadow/report`);
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

  // ---- the decision log (docs/audit.md) ----
  searchDecisions(
    storeId: string,
    q: Page & { startTime?: string | undefined; endTime?: string | undefined; query?: string | undefined },
  ): Promise<{ decisions: Record<string, unknown>[]; continuation_token: string }> {
    const params = {
      start_time: q.startTime,
      end_time: q.endTime,
      query: q.query,
      page_size: q.pageSize,
      continuation_token: q.continuationToken,
    };
    return this.get(`/stores/${enc(storeId)}/decisions${query(params)}`);
  }
  explainDecision(storeId: string, decisionId: string): Promise<Record<string, unknown>> {
    return this.get(`/stores/${enc(storeId)}/decisions/${enc(decisionId)}/explain`);
  }
  decisionLog(storeId: string, sampling?: number | null): Promise<Record<string, unknown>> {
    const path = `/stores/${enc(storeId)}/decision-log`;
    return sampling === undefined ? this.get(path) : this.send('PUT', path, { sampling });
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

  /** A streamed GET endpoint's `{"result": …}` lines; a refused request or an error line throws ApiError. */
  private stream(path: string, signal?: AbortSignal): AsyncGenerator<Record<string, unknown>> {
    return this.json.stream('GET', path, undefined, signal);
  }

  /**
   * ImpactAuthorizationModel (docs/changing-models.md): each line's result as it arrives. An error
   * before the first line is a plain error reply; one after it, an error line: both throw ApiError.
   */
  impact(
    storeId: string,
    body: Record<string, unknown>,
    signal?: AbortSignal,
  ): AsyncGenerator<Record<string, unknown>> {
    return this.json.stream('POST', `/stores/${enc(storeId)}/authorization-models/impact`, body, signal);
  }

  // ---- transport ----
  private get<T>(path: string): Promise<T> {
    return this.json.call<T>('GET', path);
  }

  private send<T>(method: string, path: string, body?: unknown, onHeaders?: (headers: Headers) => void): Promise<T> {
    return this.json.call<T>(method, path, body, onHeaders);
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

/** Reads `Latch-Revision` (the revision a past query read) into `onRevision`. */
function revisionHeader(onRevision?: (revision: number) => void): ((h: Headers) => void) | undefined {
  if (!onRevision) return undefined;
  return (h) => {
    const v = h.get('latch-revision');
    if (v !== null && /^\d+$/.test(v)) onRevision(Number(v));
  };
}
