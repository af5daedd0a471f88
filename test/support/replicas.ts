// Nodes in one process over one datastore: each node is a LatchService over a view of ONE shared
// storage object, so a test can make a node miss notifications or read the change log slowly.

import { LatchService } from '../../src/engine/service.js';
import type { EngineConfig } from '../../src/engine/contract.js';
import type { RevisionChange, Storage } from '../../src/storage/types.js';
import { DEFAULT_ENGINE_CONFIG } from '../../src/engine/config.js';

export interface NodeView {
  /** Storage events reach the node (false: notifications lost; only polls and the log help). */
  readonly events?: boolean;
  /** The change log is read one change per event-loop turn (a slow reader, interleaved with queries). */
  readonly slowLog?: boolean;
}

/** The shared storage as one node sees it; closing the node leaves the shared object open. */
export function nodeStorage(shared: Storage, view: NodeView = {}): Storage {
  return new Proxy(shared, {
    get(target, prop) {
      if (prop === 'close') return () => Promise.resolve();
      if (prop === 'subscribe' && view.events === false) return () => () => undefined;
      if (prop === 'changesSince' && view.slowLog)
        return (storeId: string, revision: number) => slowly(target.changesSince(storeId, revision));
      const v: unknown = Reflect.get(target, prop, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}

async function* slowly(changes: AsyncIterable<RevisionChange>): AsyncGenerator<RevisionChange> {
  for await (const c of changes) {
    await new Promise<void>((r) => setImmediate(r));
    yield c;
  }
}

const silent = (): void => undefined;

/** A node over `shared`: no worker threads, no poll timer unless asked (tests call `caughtUp`). */
export function node(shared: Storage, view: NodeView = {}, config: Partial<EngineConfig> = {}): LatchService {
  return new LatchService(
    nodeStorage(shared, view),
    { ...DEFAULT_ENGINE_CONFIG, workers: 0, pollIntervalMs: 0, ...config },
    silent,
  );
}
