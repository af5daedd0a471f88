// This node's copy of each store's shadow model setting (docs/changing-models.md): read from the
// datastore the first time a request of the store asks, refreshed every `refreshMs` (another node
// may set or clear it) with ONE datastore read for every store seen, and at once when this node
// sets, clears or reads it. `get` never waits: a store whose setting is still loading is answered
// without a shadow.

import type { ShadowSetting } from '../../domain/types.js';
import type { Storage } from '../../storage/types.js';
import type { EngineLog } from '../contract.js';

export class ShadowSettings {
  /** Per store seen: its setting, or null when it has none. */
  private readonly known = new Map<string, ShadowSetting | null>();
  /** Bumped by every local `put`: a load that started before it must not overwrite it. */
  private readonly versions = new Map<string, number>();
  private readonly timer: NodeJS.Timeout | undefined;
  private refreshing = false;
  /** Told each store's setting as this node learns it (the HTTP threads' board forwards shadowed stores' Checks). */
  onChange: ((storeId: string, setting: ShadowSetting | undefined) => void) | undefined;

  constructor(
    private readonly storage: Storage,
    refreshMs: number,
    private readonly log: EngineLog,
  ) {
    if (refreshMs > 0) {
      this.timer = setInterval(() => void this.refresh(), refreshMs);
      this.timer.unref();
    }
  }

  /** The store's setting as this node knows it; the first call for a store starts loading it (undefined meanwhile). */
  get(storeId: string): ShadowSetting | undefined {
    const s = this.known.get(storeId);
    if (s !== undefined) return s ?? undefined;
    this.known.set(storeId, null);
    void this.load(storeId);
    return undefined;
  }

  /** What the datastore now holds for the store (this node's own change, or one just read). */
  put(storeId: string, setting: ShadowSetting | undefined): void {
    this.versions.set(storeId, (this.versions.get(storeId) ?? 0) + 1);
    this.known.set(storeId, setting ?? null);
    this.onChange?.(storeId, setting);
  }

  /**
   * Reloads every store this node has seen in ONE datastore read (`Storage.readShadows`: one
   * query on PostgreSQL, one multi-get on LevelDB), a deleted store forgotten, and never two
   * refreshes at once: a node holding hundreds of stores costs the datastore one query per
   * interval and holds at most one connection (one query per store, or all at once, took the
   * pool from requests). A store this node set meanwhile keeps its own newer setting.
   */
  async refresh(): Promise<void> {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      const ids = [...this.known.keys()];
      if (ids.length === 0) return;
      const versions = ids.map((id) => this.versions.get(id) ?? 0);
      const read = await this.storage.readShadows(ids);
      ids.forEach((id, i) => {
        if ((this.versions.get(id) ?? 0) !== versions[i]) return;
        const before = this.known.get(id);
        const setting = read.get(id);
        if (setting === undefined) this.known.delete(id);
        else this.known.set(id, setting);
        // A setting another node made or cleared reaches the listeners as a local one does.
        if (!sameSetting(before ?? null, setting ?? null)) this.onChange?.(id, setting ?? undefined);
      });
    } catch (err) {
      this.log('warn', 'shadow settings not read', { stores: this.known.size, cause: String(err) });
    } finally {
      this.refreshing = false;
    }
  }

  /** Reads the store's setting now (`onChange` follows once it is read). */
  reload(storeId: string): Promise<void> {
    return this.load(storeId);
  }

  close(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async load(storeId: string): Promise<void> {
    const version = this.versions.get(storeId) ?? 0;
    try {
      const setting = await this.storage.readShadow(storeId);
      if ((this.versions.get(storeId) ?? 0) !== version) return;
      if (setting) this.known.set(storeId, setting);
      else if ((await this.storage.getStore(storeId)) === undefined) this.known.delete(storeId);
      else this.known.set(storeId, null);
      this.onChange?.(storeId, setting);
    } catch (err) {
      this.log('warn', 'shadow setting not read', { store_id: storeId, cause: String(err) });
    }
  }
}

/** Equal settings: each read of the datastore makes new objects, so compare what they say. */
function sameSetting(a: ShadowSetting | null, b: ShadowSetting | null): boolean {
  if (a === null || b === null) return a === b;
  return a.modelId === b.modelId && a.sampling === b.sampling && a.updatedAt === b.updatedAt;
}
