// Relation migrations (docs/changing-models.md, "Migrating data"): one bounded step per call, all
// writes ordinary ones through the store writer (each a revision in the changelog), the progress
// in an opaque cursor the caller keeps. The phases, in order:
//   copy   each old relation's tuples, read in pages (Read order), written again under the new
//          relation (same object, user, condition, expiry; duplicates ignored), old ones kept;
//   carry  the changelog after the revision the copy started at, replayed onto the new relations
//          (a write or delete of document:1#reader@user:anne → the same of document:1#viewer@…),
//          so writes made meanwhile are not lost; each step folds its changes to one final
//          state per key, so a step applies them in any order;
//   delete (finish only, once the latest model has the new relations and not the old ones) the
//          old tuples, after the copy and the carry have caught up.
// Re-running a step is harmless: every write ignores what is already there or already gone.

import type { TupleKey } from '../../domain/types.js';
import { parseExpiry } from '../../domain/expiry.js';
import { AppError } from '../../errors.js';
import { compileModel } from '../../model/compile.js';
import type { CompiledModel } from '../../model/types.js';
import { validateModel } from '../../model/validate.js';
import type { MigrateInput, MigrateOutput, RelationMap } from '../contract.js';
import type { EngineParts } from './parts.js';
import { storeOf } from './request-steps.js';
import { validateWrite } from './validate-request.js';

/** Tuples per storage write (the API's per-Write limit). */
const WRITE_BATCH = 100;
/** Changes one carry step reads at most, relevant or not (the changelog holds every relation). */
const SCAN_CAP = 10_000;

type Phase = MigrateOutput['phase'];

interface Cursor {
  /** The maps this cursor belongs to. */
  readonly maps: string;
  /** The store revision the copy started at: the carry replays the changes after it. */
  readonly r0: number;
  readonly phase: Phase;
  /** copy / delete: the map being read, and the Read cursor within it (copy). */
  readonly map: number;
  readonly after?: string | undefined;
  /** carry: every change up to this revision is carried. */
  readonly rev: number;
}

interface Tally {
  matching: number;
  copied: number;
  carried: number;
  deleted: number;
  rejected: number;
  readonly sample: TupleKey[];
}

const mapsKey = (maps: readonly RelationMap[]): string =>
  maps.map((m) => `${m.objectType}#${m.from}=${m.to}`).join(',');

export async function migrateRelations(e: EngineParts, input: MigrateInput): Promise<MigrateOutput> {
  const { storeId } = input;
  await storeOf(e, storeId);
  checkMaps(input.maps);
  const target = await targetModel(e, input);
  let c = input.cursor ? decodeCursor(input.cursor, input.maps) : await start(e, input);
  const t: Tally = { matching: 0, copied: 0, carried: 0, deleted: 0, rejected: 0, sample: [] };
  let budget = input.limit;
  let caughtUp = false;
  while (budget > 0 && c.phase !== 'done' && !caughtUp) {
    const before = t.matching + t.carried + t.deleted;
    if (c.phase === 'copy') c = await copyStep(e, input, target, c, Math.min(budget, WRITE_BATCH), t);
    else if (c.phase === 'carry') {
      const next = await carryStep(e, input, target, c, budget, t);
      caughtUp = next.rev === c.rev && next.phase === 'carry';
      c = next;
    } else c = await deleteStep(e, input, c, Math.min(budget, WRITE_BATCH), t);
    budget -= Math.max(1, t.matching + t.carried + t.deleted - before);
  }
  const done = c.phase === 'done' || (caughtUp && input.mode !== 'finish');
  return {
    ...t,
    rejectedSample: t.sample,
    cursor: Buffer.from(JSON.stringify(c)).toString('base64url'),
    done,
    phase: c.phase,
    revision: await e.storage.revision(storeId),
  };
}

function checkMaps(maps: readonly RelationMap[]): void {
  if (maps.length === 0) throw new AppError('validation_error', 'a migration needs at least one map');
  const froms = new Set(maps.map((m) => `${m.objectType}#${m.from}`));
  for (const m of maps) {
    if (m.from === m.to)
      throw new AppError('validation_error', `map ${m.objectType}#${m.from}: same relation on both sides`);
    if (froms.has(`${m.objectType}#${m.to}`))
      throw new AppError(
        'validation_error',
        `map ${m.objectType}#${m.to}: a relation cannot be both copied and a copy`,
      );
  }
}

/**
 * The model copies must fit: for finish the latest, which must define every new relation and none
 * of the old ones (its answers no longer read the old tuples); otherwise the candidate, the model
 * id, or the latest, which must define every new relation.
 */
async function targetModel(e: EngineParts, input: MigrateInput): Promise<CompiledModel> {
  const finish = input.mode === 'finish';
  const model =
    input.candidate && !finish
      ? compileModel({ ...validateModel(input.candidate), id: 'candidate' })
      : await e.models.resolve(input.storeId, finish ? undefined : input.modelId);
  for (const m of input.maps) {
    const relations = model.types.get(m.objectType)?.relations;
    if (!relations?.has(m.to))
      throw new AppError('validation_error', `the target model ${model.id} has no relation ${m.objectType}#${m.to}`);
    if (finish && relations.has(m.from))
      throw new AppError(
        'validation_error',
        `finish deletes ${m.objectType}#${m.from}, which the latest model ${model.id} still defines: write the model without it first`,
      );
  }
  return model;
}

async function start(e: EngineParts, input: MigrateInput): Promise<Cursor> {
  const r0 = await e.storage.revision(input.storeId);
  return { maps: mapsKey(input.maps), r0, phase: 'copy', map: 0, rev: r0 };
}

function decodeCursor(text: string, maps: readonly RelationMap[]): Cursor {
  let c: Cursor | undefined;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8')) as Cursor;
  } catch {
    c = undefined;
  }
  if (!c || typeof c !== 'object' || c.maps !== mapsKey(maps) || !['copy', 'carry', 'delete', 'done'].includes(c.phase))
    throw new AppError('invalid_continuation_token', 'the migration cursor is invalid or belongs to other maps');
  return c;
}

/** One page of the current map's old tuples: counted (dry run) or copied. */
async function copyStep(
  e: EngineParts,
  input: MigrateInput,
  target: CompiledModel,
  c: Cursor,
  size: number,
  t: Tally,
): Promise<Cursor> {
  const m = input.maps[c.map] as RelationMap;
  const filter = { object: `${m.objectType}:`, relation: m.from };
  const page = await e.storage.readTuples(input.storeId, filter, { pageSize: size, after: c.after });
  t.matching += page.items.length;
  const now = e.clock();
  const copies = page.items.map((x) => ({ ...x.key, relation: m.to })).filter((k) => !expired(k, now));
  if (input.mode === 'dry_run') countRejected(target, copies, t);
  else if (copies.length > 0) {
    validateWrite(target, copies, [], WRITE_BATCH);
    t.copied += await write(e, input.storeId, copies, []);
  }
  if (page.next !== undefined && page.items.length > 0) return { ...c, after: page.next };
  const map = c.map + 1;
  if (map < input.maps.length) return { ...c, map, after: undefined };
  return { ...c, map: 0, after: undefined, phase: input.mode === 'dry_run' ? 'done' : 'carry', rev: c.r0 };
}

/**
 * Carries the changelog after `c.rev` onto the new relations: whole revisions, until `budget`
 * relevant changes or SCAN_CAP changes were read. The same `rev` back (phase carry) = caught up.
 */
async function carryStep(
  e: EngineParts,
  input: MigrateInput,
  target: CompiledModel,
  c: Cursor,
  budget: number,
  t: Tally,
): Promise<Cursor> {
  const byFrom = new Map(input.maps.map((m) => [`${m.objectType}#${m.from}`, m]));
  const last = new Map<string, { key: TupleKey; write: boolean; deleted: boolean }>();
  let rev = c.rev;
  let scanned = 0;
  let relevant = 0;
  let exhausted = true;
  const now = e.clock();
  for await (const change of e.storage.changesSince(input.storeId, c.rev)) {
    if (change.revision !== rev && (relevant >= budget || scanned >= SCAN_CAP)) {
      exhausted = false;
      break; // stop between two revisions: `rev` is carried whole
    }
    rev = change.revision;
    scanned++;
    const k = change.tuple;
    const m = byFrom.get(`${k.object.slice(0, k.object.indexOf(':'))}#${k.relation}`);
    if (!m) continue;
    relevant++;
    const copy: TupleKey = { ...k, relation: m.to };
    const id = `${copy.object}\u0000${copy.relation}\u0000${copy.user}`;
    const write = change.operation === 'write' && !expired(copy, now);
    last.set(id, { key: copy, write, deleted: (last.get(id)?.deleted ?? false) || !write });
  }
  const entries = [...last.values()];
  const writes = entries.filter((x) => x.write).map((x) => x.key);
  if (writes.length > 0) validateWrite(target, writes, [], Number.MAX_SAFE_INTEGER);
  // Each key's final state, in writes of ≤ 100 changes; a key deleted and written again (its
  // condition changed) is deleted and rewritten in the same write (deletes go first).
  let batch: { writes: TupleKey[]; deletes: TupleKey[] } = { writes: [], deletes: [] };
  for (const [i, x] of entries.entries()) {
    if (x.deleted) batch.deletes.push({ object: x.key.object, relation: x.key.relation, user: x.key.user });
    if (x.write) batch.writes.push(x.key);
    if (batch.writes.length + batch.deletes.length >= WRITE_BATCH - 1 || i === entries.length - 1) {
      await write(e, input.storeId, batch.writes, batch.deletes);
      batch = { writes: [], deletes: [] };
    }
  }
  t.carried += relevant;
  if (exhausted && input.mode === 'finish') return { ...c, rev, phase: 'delete', map: 0 };
  return { ...c, rev };
}

/** Finish: one page of the current map's old tuples deleted. */
async function deleteStep(e: EngineParts, input: MigrateInput, c: Cursor, size: number, t: Tally): Promise<Cursor> {
  const m = input.maps[c.map] as RelationMap;
  const page = await e.storage.readTuples(
    input.storeId,
    { object: `${m.objectType}:`, relation: m.from },
    { pageSize: size },
  );
  if (page.items.length > 0) {
    const keys = page.items.map(({ key }) => ({ object: key.object, relation: key.relation, user: key.user }));
    t.deleted += await write(e, input.storeId, [], keys);
  }
  if (page.items.length === size) return c;
  const map = c.map + 1;
  return map < input.maps.length ? { ...c, map } : { ...c, phase: 'done' };
}

/** One ordinary write through the store writer, duplicates and missing deletes ignored. */
async function write(e: EngineParts, storeId: string, writes: TupleKey[], deletes: TupleKey[]): Promise<number> {
  const r = await e.writer.write(storeId, (commit) =>
    commit((storage) => storage.writeTuples(storeId, { writes, deletes, onDuplicate: 'ignore', onMissing: 'ignore' })),
  );
  return r.written.length + r.deleted.length;
}

function expired(k: TupleKey, now: number): boolean {
  if (k.expires_at === undefined) return false;
  const ms = parseExpiry(k.expires_at);
  return ms !== undefined && ms <= now; // a tuple grants nothing from its expiry instant on
}

/** Dry run: the copies the target model refuses, counted, the first ten kept. */
function countRejected(target: CompiledModel, copies: readonly TupleKey[], t: Tally): void {
  for (const k of copies) {
    try {
      validateWrite(target, [k], [], 1);
    } catch {
      t.rejected++;
      if (t.sample.length < 10) t.sample.push(k);
    }
  }
}
