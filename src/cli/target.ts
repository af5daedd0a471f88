// Where `latch test` runs its queries: the embedded engine (default) or a server over HTTP. Both
// answer the same small interface, so the runner does not know which it talks to. ListUsers
// answers are rendered as the strings store files use: `user:anne`, `group:eng#member`, `user:*`.

import type { AuthorizationModelInput, JsonObject, TupleKey } from '../domain/types.js';
import type { Latch, ListedUser } from '../engine/contract.js';
import { openLatch } from '../engine/service.js';
import { chunks, writeInChunks } from './common.js';
import type { FgaHttpClient } from './http-client.js';
import type { QueryExtras } from './store-file.js';

export interface Target {
  /** True when tests run on an existing store's model and data (the file's model is not used). */
  readonly existingStore: boolean;
  /** Prepares a store holding the model and tuples (a scratch store, or the existing one plus contextual tuples). */
  setup(name: string, model: AuthorizationModelInput | undefined, tuples: readonly TupleKey[]): Promise<Ids>;
  teardown(s: Ids): Promise<void>;
  /** Writes another model to a prepared scratch store (`latch test --candidate`); its id. */
  writeModel(s: Ids, model: AuthorizationModelInput): Promise<string>;
  check(s: Ids, user: string, relation: string, object: string, extras?: QueryExtras): Promise<boolean>;
  listObjects(s: Ids, user: string, relation: string, type: string, extras?: QueryExtras): Promise<string[]>;
  listUsers(
    s: Ids,
    object: string,
    relation: string,
    filters: { type: string; relation?: string }[],
    extras?: QueryExtras,
  ): Promise<string[]>;
  close(): Promise<void>;
}

export interface Ids {
  readonly storeId: string;
  readonly modelId: string;
  /** Existing-store mode: the test's tuples, sent with every query. */
  readonly contextualTuples?: TupleKey[] | undefined;
}

function userString(u: ListedUser): string {
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

/** A query's contextual tuples: the existing-store mode's test tuples, then the query's own. */
function contextualOf(s: Ids, extras: QueryExtras | undefined): TupleKey[] {
  const own = extras?.contextualTuples ?? [];
  return s.contextualTuples?.length ? [...s.contextualTuples, ...own] : [...own];
}

/** The in-process engine on an in-memory store; queries run inline (no worker threads). */
export async function embeddedTarget(): Promise<Target> {
  const latch: Latch = await openLatch({ config: { workers: 0 } });
  const q = { consistency: 'HIGHER_CONSISTENCY' } as const;
  return {
    existingStore: false,
    async setup(name, model, tuples) {
      if (!model) throw new Error("no 'model' or 'model_file'");
      const store = await latch.createStore(storeName(name));
      const modelId = await latch.writeModel(store.id, model);
      for (const chunk of chunks(tuples, 100)) {
        await latch.write({
          storeId: store.id,
          modelId,
          writes: chunk,
          deletes: [],
          onDuplicate: 'error',
          onMissing: 'error',
        });
      }
      return { storeId: store.id, modelId };
    },
    teardown: (s) => latch.deleteStore(s.storeId),
    writeModel: (s, model) => latch.writeModel(s.storeId, model),
    async check(s, user, relation, object, extras) {
      return (
        await latch.check({
          ...q,
          ...s,
          tupleKey: { user, relation, object },
          context: extras?.context,
          contextualTuples: contextualOf(s, extras),
        })
      ).allowed;
    },
    async listObjects(s, user, relation, type, extras) {
      return (
        await latch.listObjects({
          ...q,
          ...s,
          user,
          relation,
          type,
          context: extras?.context,
          contextualTuples: contextualOf(s, extras),
        })
      ).objects;
    },
    async listUsers(s, object, relation, filters, extras) {
      const r = await latch.listUsers({
        ...q,
        ...s,
        object: splitObject(object),
        relation,
        userFilters: filters,
        context: extras?.context,
        contextualTuples: contextualOf(s, extras),
      });
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
export function remoteTarget(
  client: FgaHttpClient,
  existing?: { storeId: string; modelId?: string | undefined },
): Target {
  const ctx = (extras?: QueryExtras): { context?: JsonObject } => (extras?.context ? { context: extras.context } : {});
  const ct = (s: Ids, extras?: QueryExtras) => {
    const keys = contextualOf(s, extras);
    return keys.length ? { contextual_tuples: { tuple_keys: keys } } : {};
  };
  return {
    existingStore: existing !== undefined,
    async setup(name, model, tuples) {
      if (existing) {
        if (tuples.length > 100)
          throw new Error(`${tuples.length} tuples; a query carries at most 100 contextual tuples`);
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
    writeModel: (s, model) => client.writeModel(s.storeId, model),
    check: (s, user, relation, object, extras) =>
      client.check(s.storeId, {
        tuple_key: { user, relation, object },
        authorization_model_id: s.modelId,
        ...ctx(extras),
        ...ct(s, extras),
      }),
    listObjects: (s, user, relation, type, extras) =>
      client.listObjects(s.storeId, {
        user,
        relation,
        type,
        authorization_model_id: s.modelId,
        ...ctx(extras),
        ...ct(s, extras),
      }),
    async listUsers(s, object, relation, filters, extras) {
      const keys = contextualOf(s, extras);
      const plain = keys.length ? { contextual_tuples: keys } : {};
      const users = await client.listUsers(s.storeId, {
        object: splitObject(object),
        relation,
        user_filters: filters,
        authorization_model_id: s.modelId,
        ...ctx(extras),
        ...plain,
      });
      return users.map(userString);
    },
    close: async () => {},
  };
}
