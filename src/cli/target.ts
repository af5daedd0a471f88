// Where `latch test` runs its queries: the embedded engine (default) or a server over HTTP. Both
// answer the same small interface, so the runner does not know which it talks to. ListUsers
// answers are rendered as the strings store files use: `user:anne`, `group:eng#member`, `user:*`.

import type { AuthorizationModelInput, JsonObject, TupleKey } from '../domain/types.js';
import type { Latch, ListedUser } from '../engine/types.js';
import { openLatch } from '../engine/service.js';
import { chunks, writeInChunks } from './common.js';
import type { FgaHttpClient } from './http-client.js';

export interface Target {
  /** True when tests run on an existing store's model and data (the file's model is not used). */
  readonly existingStore: boolean;
  /** Prepares a store holding the model and tuples (a scratch store, or the existing one plus contextual tuples). */
  setup(name: string, model: AuthorizationModelInput | undefined, tuples: readonly TupleKey[]): Promise<Ids>;
  teardown(s: Ids): Promise<void>;
  check(s: Ids, user: string, relation: string, object: string, context?: JsonObject): Promise<boolean>;
  listObjects(s: Ids, user: string, relation: string, type: string, context?: JsonObject): Promise<string[]>;
  listUsers(s: Ids, object: string, relation: string, filters: { type: string; relation?: string }[], context?: JsonObject): Promise<string[]>;
  close(): Promise<void>;
}

export interface Ids {
  readonly storeId: string;
  readonly modelId: string;
  /** Existing-store mode: the test's tuples, sent with every query. */
  readonly contextualTuples?: TupleKey[] | undefined;
}

export function userString(u: ListedUser): string {
  if ('object' in u) return `${u.object.type}:${u.object.id}`;
  if ('userset' in u) return `${u.userset.type}:${u.userset.id}#${u.userset.relation}`;
  return `${u.wildcard.type}:*`;
}

function splitObject(o: string): { type: string; id: string } {
  const i = o.indexOf(':');
  return { type: i === -1 ? o : o.slice(0, i), id: i === -1 ? '' : o.slice(i + 1) };
}

/** Store names must match the API's store-name pattern (3–64 of a small alphabet). */
function storeName(name: string): string {
  const clean = name.replace(/[^a-zA-Z0-9\s.\-/^_&@]/g, '-').slice(0, 64);
  return clean.length >= 3 ? clean : `${clean}---`.slice(0, 3);
}

/** The in-process engine on an in-memory store; queries run inline (no worker threads). */
export async function embeddedTarget(): Promise<Target> {
  const latch: Latch = await openLatch({ config: { workers: 0 } });
  const q = { contextualTuples: [], consistency: 'HIGHER_CONSISTENCY' } as const;
  return {
    existingStore: false,
    async setup(name, model, tuples) {
      if (!model) throw new Error("no 'model' or 'model_file'");
      const store = await latch.createStore(storeName(name));
      const modelId = await latch.writeModel(store.id, model);
      for (const chunk of chunks(tuples, 100)) {
        await latch.write({ storeId: store.id, modelId, writes: chunk, deletes: [], onDuplicate: 'error', onMissing: 'error' });
      }
      return { storeId: store.id, modelId };
    },
    teardown: (s) => latch.deleteStore(s.storeId),
    async check(s, user, relation, object, context) {
      return (await latch.check({ ...q, ...s, tupleKey: { user, relation, object }, context })).allowed;
    },
    async listObjects(s, user, relation, type, context) {
      return (await latch.listObjects({ ...q, ...s, user, relation, type, context })).objects;
    },
    async listUsers(s, object, relation, filters, context) {
      const r = await latch.listUsers({ ...q, ...s, object: splitObject(object), relation, userFilters: filters, context });
      return r.users.map(userString);
    },
    close: () => latch.close(),
  };
}

/**
 * A server. Without `existing`, every test gets a scratch store, deleted afterwards. With
 * `existing` (OpenFGA's `--store-id` mode), tests run on that store's model (`modelId`, else the
 * latest) and stored data, and the file's tuples travel as contextual tuples (at most 100).
 */
export function remoteTarget(client: FgaHttpClient, existing?: { storeId: string; modelId?: string | undefined }): Target {
  const ctx = (context?: JsonObject) => (context ? { context } : {});
  const ct = (s: Ids) => (s.contextualTuples?.length ? { contextual_tuples: { tuple_keys: s.contextualTuples } } : {});
  return {
    existingStore: existing !== undefined,
    async setup(name, model, tuples) {
      if (existing) {
        if (tuples.length > 100) throw new Error(`${tuples.length} tuples; a query carries at most 100 contextual tuples`);
        const modelId = existing.modelId ?? (await client.latestModel(existing.storeId))?.id;
        if (!modelId) throw new Error(`store ${existing.storeId} has no model`);
        return { storeId: existing.storeId, modelId, contextualTuples: [...tuples] };
      }
      if (!model) throw new Error("no 'model' or 'model_file' (or pass --store-id to use a store's model)");
      const store = await client.createStore(storeName(name));
      const modelId = await client.writeModel(store.id, model);
      await writeInChunks(client, store.id, tuples, { modelId });
      return { storeId: store.id, modelId };
    },
    teardown: async (s) => {
      if (!existing) await client.deleteStore(s.storeId);
    },
    check: (s, user, relation, object, context) =>
      client.check(s.storeId, { tuple_key: { user, relation, object }, authorization_model_id: s.modelId, ...ctx(context), ...ct(s) }),
    listObjects: (s, user, relation, type, context) =>
      client.listObjects(s.storeId, { user, relation, type, authorization_model_id: s.modelId, ...ctx(context), ...ct(s) }),
    async listUsers(s, object, relation, filters, context) {
      const plain = s.contextualTuples?.length ? { contextual_tuples: s.contextualTuples } : {};
      const users = await client.listUsers(s.storeId, { object: splitObject(object), relation, user_filters: filters, authorization_model_id: s.modelId, ...ctx(context), ...plain });
      return users.map(userString);
    },
    close: async () => {},
  };
}
