// The store's shadow model setting on PostgreSQL (Storage.readShadow / writeShadow): one row per
// store in latch_shadows (schema step 1), read by every node; reclaimed with the store's rows.

import { fail } from '../../errors.js';
import type { ShadowSetting } from '../../domain/types.js';
import { q, type Db } from './db.js';

const LIVE = 'EXISTS (SELECT 1 FROM latch_stores s WHERE s.id = $1 AND s.deleted_ms IS NULL)';

export async function readShadow(db: Db, storeId: string): Promise<ShadowSetting | undefined> {
  const v = await db.value(`SELECT setting FROM latch_shadows WHERE store_id = $1 AND ${LIVE}`, [storeId]);
  return typeof v === 'string' ? (JSON.parse(v) as ShadowSetting) : undefined;
}

/** Every live store of `storeIds` with its setting (null: none), in one query; others absent. */
export async function readShadows(db: Db, storeIds: readonly string[]): Promise<Map<string, ShadowSetting | null>> {
  const out = new Map<string, ShadowSetting | null>();
  if (storeIds.length === 0) return out;
  const rows = await db.rows(
    `SELECT s.id, sh.setting FROM latch_stores s LEFT JOIN latch_shadows sh ON sh.store_id = s.id
      WHERE s.id = ANY($1::text[]) AND s.deleted_ms IS NULL`,
    [storeIds],
  );
  for (const [id, setting] of rows)
    out.set(String(id), typeof setting === 'string' ? (JSON.parse(setting) as ShadowSetting) : null);
  return out;
}

/** Under the store row's key-share lock, so a concurrent store deletion cannot leave a row behind. */
export async function writeShadow(db: Db, storeId: string, setting: ShadowSetting | undefined): Promise<void> {
  await db.tx(async (c) => {
    const live = await q(c, 'SELECT 1 FROM latch_stores WHERE id = $1 AND deleted_ms IS NULL FOR KEY SHARE', [storeId]);
    if (live.length === 0) throw fail.storeNotFound();
    if (!setting) await q(c, 'DELETE FROM latch_shadows WHERE store_id = $1', [storeId]);
    else
      await q(
        c,
        'INSERT INTO latch_shadows (store_id, setting) VALUES ($1, $2) ON CONFLICT (store_id) DO UPDATE SET setting = EXCLUDED.setting',
        [storeId, JSON.stringify(setting)],
      );
  });
}
