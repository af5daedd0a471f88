// Model resolution for queries and writes: an explicit id or the store's latest model, compiled
// once and cached. Models are immutable, so a compiled model never goes stale; only "latest"
// moves: through `noteWritten` (this node wrote a model), `noteLatestChanged` (a storage event:
// any node wrote one) and `refreshLatest` (a HIGHER_CONSISTENCY query read the latest id).

import type { AuthorizationModel } from '../../domain/types.js';
import { isUlid } from '../../domain/ids.js';
import { fail } from '../../errors.js';
import { compileModel } from '../../model/compile.js';
import type { CompiledModel } from '../../model/types.js';
import type { Storage } from '../../storage/types.js';

const MAX_CACHED = 1024;

export class ModelCache {
  /**
   * Compiled models by model id, each with its store: an id asked of another store is a miss (and
   * then not found in that store's storage). Keyed by the id alone, not `store/id`: a Check naming
   * its model (as the SDKs do) then hashes the id string it already has instead of building and
   * hashing a 53-character key (≈ 0.25 µs on this project's VM).
   */
  private readonly compiled = new Map<string, { readonly storeId: string; readonly model: CompiledModel }>();
  private readonly latest = new Map<string, string>();
  /** The latest model of a store, compiled: one lookup on the hot path (no key string to build). */
  private readonly latestCompiled = new Map<string, CompiledModel>();
  /**
   * Bumped each time a store's latest entry is invalidated: a load of "latest" that started
   * before records its answer only if no invalidation happened meanwhile.
   */
  private readonly generation = new Map<string, number>();

  /** Told whenever a store's "latest" entry is replaced or dropped (the HTTP threads' board). */
  onLatestMoved: ((storeId: string) => void) | undefined;

  constructor(private readonly storage: Storage) {}

  /** The model `modelId` of the store, or its latest when `modelId` is empty; throws 2001 / 2020. */
  resolve(storeId: string, modelId: string | undefined): Promise<CompiledModel> {
    // The common case, a compiled model at hand, without async frames (hot path of every query).
    const hit = modelId ? this.cached(storeId, modelId) : this.latestCompiled.get(storeId);
    return hit ? Promise.resolve(hit) : this.load(storeId, modelId);
  }

  /** The compiled model if it is at hand (nothing loaded or compiled): the synchronous query path. */
  peek(storeId: string, modelId: string | undefined): CompiledModel | undefined {
    return modelId ? this.cached(storeId, modelId) : this.latestCompiled.get(storeId);
  }

  private cached(storeId: string, modelId: string): CompiledModel | undefined {
    const e = this.compiled.get(modelId);
    return e !== undefined && e.storeId === storeId ? e.model : undefined;
  }

  private async load(storeId: string, modelId: string | undefined): Promise<CompiledModel> {
    if (modelId) return this.byId(storeId, modelId);
    const known = this.latest.get(storeId);
    let compiled: CompiledModel;
    if (known) compiled = await this.byId(storeId, known);
    else {
      const gen = this.generation.get(storeId) ?? 0;
      const model = await this.storage.latestModel(storeId);
      if (!model) throw fail.latestModelNotFound(storeId);
      compiled = this.remember(storeId, model);
      // Invalidated meanwhile: this answer is still right for this call, but may be stale after it.
      if ((this.generation.get(storeId) ?? 0) !== gen) return compiled;
      const cur = this.latest.get(storeId);
      if (cur === undefined || cur < model.id) this.latest.set(storeId, model.id);
    }
    // A model written meanwhile is the latest now: record this one only if it still is.
    if (this.latest.get(storeId) === compiled.id) this.latestCompiled.set(storeId, compiled);
    return compiled;
  }

  /** Records a freshly written model as the store's latest and returns it compiled. */
  noteWritten(storeId: string, model: AuthorizationModel): CompiledModel {
    const compiled = this.remember(storeId, model);
    const known = this.latest.get(storeId);
    if (known !== undefined && known > model.id) return compiled; // a later one is known already
    this.latest.set(storeId, model.id);
    this.latestCompiled.set(storeId, compiled);
    if (known !== model.id) this.onLatestMoved?.(storeId);
    return compiled;
  }

  /**
   * A model `modelId` was written to the store (by any node): when it is not the latest this node
   * knows, the latest entry is dropped and the next query without a model id reads it again.
   */
  noteLatestChanged(storeId: string, modelId: string): void {
    const known = this.latest.get(storeId);
    if (known !== undefined && known >= modelId) return; // ULIDs: a later model has a greater id
    this.invalidate(storeId);
  }

  /**
   * Reads the store's latest model id from storage (HIGHER_CONSISTENCY without a model id): a
   * model written through another node and not yet announced becomes the latest here.
   */
  async refreshLatest(storeId: string): Promise<void> {
    const gen = this.generation.get(storeId) ?? 0;
    const model = await this.storage.latestModel(storeId);
    if (!model || this.latest.get(storeId) === model.id || (this.generation.get(storeId) ?? 0) !== gen) return;
    this.noteWritten(storeId, model);
  }

  private invalidate(storeId: string): void {
    this.generation.set(storeId, (this.generation.get(storeId) ?? 0) + 1);
    this.latest.delete(storeId);
    this.latestCompiled.delete(storeId);
    this.onLatestMoved?.(storeId);
  }

  forgetStore(storeId: string): void {
    this.generation.set(storeId, (this.generation.get(storeId) ?? 0) + 1);
    this.latest.delete(storeId);
    this.latestCompiled.delete(storeId);
    this.onLatestMoved?.(storeId);
    for (const [id, e] of this.compiled) if (e.storeId === storeId) this.compiled.delete(id);
  }

  private async byId(storeId: string, modelId: string): Promise<CompiledModel> {
    const hit = this.cached(storeId, modelId);
    if (hit) return hit;
    if (!isUlid(modelId)) throw fail.modelNotFound(modelId);
    const model = await this.storage.getModel(storeId, modelId);
    if (!model) throw fail.modelNotFound(modelId);
    return this.remember(storeId, model);
  }

  private remember(storeId: string, model: AuthorizationModel): CompiledModel {
    const hit = this.cached(storeId, model.id);
    if (hit) return hit;
    if (this.compiled.size >= MAX_CACHED) {
      const oldest = this.compiled.keys().next();
      if (!oldest.done) this.compiled.delete(oldest.value);
    }
    const compiled = compileModel(model);
    // Model ids are ULIDs made at write, so two stores never share one; if they did, the entry
    // would follow the last store compiled (the other's lookups miss and load it again).
    this.compiled.set(model.id, { storeId, model: compiled });
    return compiled;
  }
}
