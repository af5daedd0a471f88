// A conformance driver over the real service facade (`openLatch`, in-memory storage, inline
// Check): the same assertions as the direct driver, but through model writes, tuple writes,
// the index and the walker: the `walker` target.

import type { AuthorizationModelInput } from '../../src/domain/types.js';
import type { ListedUser, Latch } from '../../src/engine/contract.js';
import { openLatch } from '../../src/latch.js';
import type { ConformanceDriver, QueryOf, StoreDriver } from './engine.js';

const base = { consistency: 'UNSPECIFIED' as const };

class ServiceStore implements StoreDriver {
  constructor(
    private readonly latch: Latch,
    private readonly storeId: string,
    private readonly toJson: (dsl: string) => AuthorizationModelInput,
  ) {}

  private q<K>(
    modelId: string,
    q: QueryOf<K>,
  ): {
    storeId: string;
    modelId: string;
    contextualTuples: QueryOf<K>['contextualTuples'];
    context: QueryOf<K>['context'];
  } & typeof base {
    return { ...base, storeId: this.storeId, modelId, contextualTuples: q.contextualTuples, context: q.context };
  }

  writeModel(dsl: string): Promise<string> {
    return this.latch.writeModel(this.storeId, this.toJson(dsl));
  }

  async write(modelId: string, tuples: Parameters<StoreDriver['write']>[1]): Promise<void> {
    await this.latch.write({
      storeId: this.storeId,
      modelId,
      writes: tuples,
      deletes: [],
      onDuplicate: 'error',
      onMissing: 'error',
    });
  }

  async check(modelId: string, q: Parameters<StoreDriver['check']>[1]): Promise<boolean> {
    return (await this.latch.check({ ...this.q(modelId, q), tupleKey: q.key })).allowed;
  }

  async listObjects(modelId: string, q: Parameters<StoreDriver['listObjects']>[1]): Promise<string[]> {
    return (await this.latch.listObjects({ ...this.q(modelId, q), ...q.key })).objects;
  }

  async streamedListObjects(modelId: string, q: Parameters<StoreDriver['listObjects']>[1]): Promise<string[]> {
    const out: string[] = [];
    for await (const o of this.latch.streamedListObjects({ ...this.q(modelId, q), ...q.key })) out.push(o);
    return out;
  }

  async listUsers(modelId: string, q: Parameters<StoreDriver['listUsers']>[1]): Promise<ListedUser[]> {
    const input = { ...this.q(modelId, q), object: q.key.object, relation: q.key.relation, userFilters: q.key.filters };
    return (await this.latch.listUsers(input)).users;
  }
}

/** One in-memory service for the whole run, a store per test. */
export function createServiceDriver(toJson: (dsl: string) => AuthorizationModelInput): ConformanceDriver {
  let latch: Promise<Latch> | undefined;
  return {
    async createStore(name: string): Promise<StoreDriver> {
      latch ??= openLatch({ config: { workers: 0, cacheSize: 0 } });
      const l = await latch;
      const store = await l.createStore(name.slice(0, 64));
      return new ServiceStore(l, store.id, toJson);
    },
  };
}
