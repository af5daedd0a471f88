// The facade: `LatchService` is the `Latch` of ./contract.ts, each operation handed to its command
// (./commands/, one file per operation, where its steps read top to bottom) with the parts the
// wiring (./wiring.ts) built. Writes reach the index through the one store writer before they are
// acknowledged, so a query on this node that starts after an acknowledged write sees it.

import type {
  Assertion,
  AuthorizationModel,
  AuthorizationModelInput,
  Page,
  PageRequest,
  ShadowSetting,
  Store,
  Tuple,
  TupleChange,
} from '../domain/types.js';
import { openStorage } from '../storage/index.js';
import type { Storage } from '../storage/types.js';
import * as assertions from './commands/assertions.js';
import { batchCheck } from './commands/batch-check.js';
import { checkIds } from './commands/check-ids.js';
import { threadModel } from './commands/thread-model.js';
import { check, checkSync } from './commands/check.js';
import { deleteTuples } from './commands/delete-tuples.js';
import { exportTuples, importTuples } from './commands/import-tuples.js';
import { migrateRelations } from './commands/migrate-relations.js';
import { expand } from './commands/expand.js';
import { explainCheck } from './commands/explain.js';
import { impact } from './commands/impact.js';
import { listObjects, streamedListObjectBatches, streamedListObjects } from './commands/list-objects.js';
import { listUsers } from './commands/list-users.js';
import * as models from './commands/models.js';
import type { EngineParts } from './commands/parts.js';
import * as pis from './commands/permission-indexes.js';
import * as placement from './commands/placement.js';
import { readChanges } from './commands/read-changes.js';
import { read } from './commands/read.js';
import * as shadow from './commands/shadow.js';
import { stats } from './commands/stats.js';
import * as stores from './commands/stores.js';
import { watch } from './commands/watch.js';
import { write } from './commands/write.js';
import { DEFAULT_ENGINE_CONFIG } from './config.js';
import type * as C from './contract.js';
import { closeEngine, wireEngine, type Engine, type LatchOptions } from './wiring.js';

export type { LatchOptions } from './wiring.js';

/** Opens storage and returns a ready-to-use service; indexes load in the background (see `ready`). */
export async function openLatch(options: LatchOptions = {}): Promise<C.Latch> {
  const storage = options.storage ?? (await openStorage({ path: options.path, postgres: options.postgres }));
  return new LatchService(storage, { ...DEFAULT_ENGINE_CONFIG, ...options.config }, options.log, options);
}

export class LatchService implements C.Latch {
  private readonly engine: Engine;
  private readonly e: EngineParts;

  constructor(
    storage: Storage,
    readonly config: C.EngineConfig,
    log?: C.EngineLog,
    options: Pick<LatchOptions, 'clock' | 'expirySweepMs' | 'preload'> = {},
  ) {
    this.engine = wireEngine(storage, config, log, options);
    this.e = this.engine.parts;
  }

  ready = (): Promise<void> => this.engine.preload.done;
  holdStore = (storeId: string): Promise<void> => placement.holdStore(this.e, storeId);
  releaseStore = (storeId: string): void => placement.releaseStore(this.e, storeId);
  heldStores = (): C.HeldStore[] => placement.heldStores(this.e);
  stats = (): C.EngineStats => stats(this.e);
  close = (): Promise<void> => closeEngine(this.engine);

  /** One pass of the expiry sweeper now (the background one runs every `expirySweepMs`); resolves with the tuples deleted. */
  async sweepExpired(): Promise<number> {
    await this.engine.preload.done;
    return this.engine.sweeper.sweep();
  }

  /**
   * Resolves when every catch-up running now has ended and the indexes hold each store's
   * committed revision as of this call (tests and tools: a replica that has caught up).
   */
  async caughtUp(): Promise<void> {
    await this.e.feed.poll();
    await this.e.feed.settled();
  }

  createStore = (name: string): Promise<Store> => stores.createStore(this.e, name);
  getStore = (storeId: string): Promise<Store> => stores.getStore(this.e, storeId);
  listStores = (q: PageRequest & { name?: string | undefined }): Promise<Page<Store>> => stores.listStores(this.e, q);
  deleteStore = (storeId: string): Promise<void> => stores.deleteStore(this.e, storeId);

  writeModel = (storeId: string, model: AuthorizationModelInput): Promise<string> =>
    models.writeModel(this.e, storeId, model);
  readModel = (storeId: string, modelId: string): Promise<AuthorizationModel> =>
    models.readModel(this.e, storeId, modelId);
  listModels = (storeId: string, page: PageRequest): Promise<Page<AuthorizationModel>> =>
    models.listModels(this.e, storeId, page);
  impact = (input: C.ImpactInput, signal?: AbortSignal): Promise<C.ImpactStream> => impact(this.e, input, signal);
  setShadow = (input: C.ShadowInput): Promise<ShadowSetting> => shadow.setShadow(this.e, input);
  getShadow = (storeId: string): Promise<ShadowSetting | undefined> => shadow.getShadow(this.e, storeId);
  clearShadow = (storeId: string): Promise<void> => shadow.clearShadow(this.e, storeId);
  shadowReport = (storeId: string): Promise<C.ShadowReport> => shadow.shadowReport(this.e, storeId);

  /** Resolves once every shadow evaluation queued so far has run (tests, tools). */
  shadowIdle = (): Promise<void> => this.e.shadow.idle();

  readAssertions = (storeId: string, modelId: string): Promise<Assertion[]> =>
    assertions.readAssertions(this.e, storeId, modelId);
  writeAssertions = (storeId: string, modelId: string, list: readonly Assertion[]): Promise<void> =>
    assertions.writeAssertions(this.e, storeId, modelId, list);

  write = (input: C.WriteInput): Promise<C.WriteOutput> => write(this.e, input);
  migrateRelations = (input: C.MigrateInput): Promise<C.MigrateOutput> => migrateRelations(this.e, input);
  deleteTuples = (input: C.DeleteTuplesInput): Promise<C.DeleteTuplesOutput> => deleteTuples(this.e, input);
  importTuples = (input: C.ImportTuplesInput): Promise<C.ImportTuplesOutput> => importTuples(this.e, input);
  exportTuples = (input: C.ExportTuplesInput, signal?: AbortSignal): AsyncIterable<C.ExportBatch> =>
    exportTuples(this.e, input, signal);
  read = (input: C.ReadInput): Promise<Page<Tuple>> => read(this.e, input);
  readChanges = (input: C.ReadChangesInput): Promise<Page<TupleChange>> => readChanges(this.e, input);
  watch = (input: C.WatchInput, signal?: AbortSignal): AsyncIterable<C.WatchEvent> => watch(this.e, input, signal);

  createPermissionIndex = (input: C.CreatePermissionIndex): Promise<C.PermissionIndexInfo> =>
    pis.createPermissionIndex(this.e, input);
  listPermissionIndexes = (storeId: string): Promise<C.PermissionIndexInfo[]> =>
    pis.listPermissionIndexes(this.e, storeId);
  getPermissionIndex = (storeId: string, indexId: string): Promise<C.PermissionIndexInfo> =>
    pis.getPermissionIndex(this.e, storeId, indexId);
  deletePermissionIndex = (storeId: string, indexId: string): Promise<void> =>
    pis.deletePermissionIndex(this.e, storeId, indexId);
  permissionIndexesCaughtUp = (storeId: string): Promise<void> => pis.permissionIndexesCaughtUp(this.e, storeId);
  expansions = (input: C.ExpansionsInput, signal?: AbortSignal): AsyncIterable<C.ExpansionStreamEvent> =>
    pis.expansions(this.e, input, signal);

  check = (input: C.CheckInput): Promise<C.CheckResult> => check(this.e, input);
  checkSync = (input: C.CheckInput): C.CheckResult | undefined => checkSync(this.e, input);
  batchCheck = (input: C.BatchCheckInput): Promise<C.BatchCheckResult> => batchCheck(this.e, input);
  checkIds = (input: C.CheckIdsInput): Promise<C.CheckIdsResult> => checkIds(this.e, input);
  threadModel = (storeId: string, modelId: string | undefined): Promise<C.ThreadModel | undefined> =>
    threadModel(this.e, storeId, modelId);
  listObjects = (input: C.ListObjectsInput): Promise<C.ListObjectsResult> => listObjects(this.e, input);
  streamedListObjects = (
    input: C.ListObjectsInput,
    signal?: AbortSignal,
    evaluated?: C.StreamEvaluated,
  ): AsyncIterable<string> => streamedListObjects(this.e, input, signal, evaluated);
  streamedListObjectBatches = (
    input: C.ListObjectsInput,
    signal?: AbortSignal,
    evaluated?: C.StreamEvaluated,
  ): AsyncIterable<readonly string[]> => streamedListObjectBatches(this.e, input, signal, evaluated);
  listUsers = (input: C.ListUsersInput): Promise<C.ListUsersResult> => listUsers(this.e, input);
  expand = (input: C.ExpandInput): Promise<C.ExpandResult> => expand(this.e, input);
  explainCheck = (input: C.CheckInput): Promise<C.CheckExplanation> => explainCheck(this.e, input);
}
