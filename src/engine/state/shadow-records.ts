// The figures of shadow evaluation on this node: per store, what the current shadow model has been
// evaluated on since it was set (counts and the newest disagreements, a bounded ring); for every
// store together, the counters the metrics expose. Nothing here is stored: a restart starts anew.

import type { ShadowDisagreement, ShadowOperation, ShadowReport, ShadowStats } from '../contract.js';
import type { ShadowSetting } from '../../domain/types.js';

interface StoreRecord {
  shadowModelId: string;
  since: string;
  evaluated: number;
  disagreements: number;
  dropped: number;
  /** The newest last; at most `limit`. */
  readonly recent: ShadowDisagreement[];
}

const perOperation = (): Record<ShadowOperation, number> => ({ check: 0, 'batch-check': 0, 'list-objects': 0 });

export class ShadowRecords {
  private readonly stores = new Map<string, StoreRecord>();
  private readonly evaluatedBy = perOperation();
  private readonly disagreementsBy = perOperation();
  private droppedTotal = 0;
  private failedTotal = 0;

  constructor(private readonly limit: number) {}

  /** A new shadow model for the store: its figures start from zero. */
  reset(storeId: string, shadowModelId: string, since: string): void {
    this.stores.set(storeId, { shadowModelId, since, evaluated: 0, disagreements: 0, dropped: 0, recent: [] });
  }

  forget(storeId: string): void {
    this.stores.delete(storeId);
  }

  agreed(storeId: string, shadowModelId: string, op: ShadowOperation): void {
    this.evaluatedBy[op]++;
    const r = this.of(storeId, shadowModelId);
    r.evaluated++;
  }

  disagreed(storeId: string, d: ShadowDisagreement): void {
    this.evaluatedBy[d.operation]++;
    this.disagreementsBy[d.operation]++;
    const r = this.of(storeId, d.shadowModelId);
    r.evaluated++;
    r.disagreements++;
    if (r.recent.length >= this.limit) r.recent.shift();
    if (this.limit > 0) r.recent.push(d);
  }

  dropped(storeId: string, shadowModelId: string): void {
    this.droppedTotal++;
    this.of(storeId, shadowModelId).dropped++;
  }

  failed(): void {
    this.failedTotal++;
  }

  report(storeId: string, setting: ShadowSetting | undefined): ShadowReport {
    const r = this.stores.get(storeId);
    return {
      setting,
      shadowModelId: r?.shadowModelId,
      since: r?.since,
      evaluated: r?.evaluated ?? 0,
      disagreements: r?.disagreements ?? 0,
      dropped: r?.dropped ?? 0,
      records: r ? [...r.recent].reverse() : [],
    };
  }

  stats(queued: number): ShadowStats {
    return {
      evaluated: { ...this.evaluatedBy },
      disagreements: { ...this.disagreementsBy },
      dropped: this.droppedTotal,
      failed: this.failedTotal,
      queued,
    };
  }

  /** The store's record for this shadow model (a node that did not set it starts one at its first evaluation). */
  private of(storeId: string, shadowModelId: string): StoreRecord {
    const r = this.stores.get(storeId);
    if (r && r.shadowModelId === shadowModelId) return r;
    const fresh = {
      shadowModelId,
      since: new Date().toISOString(),
      evaluated: 0,
      disagreements: 0,
      dropped: 0,
      recent: [],
    };
    this.stores.set(storeId, fresh);
    return fresh;
  }
}
