// Group commit of one store's Writes on this node (latch_write_group, write-group-function.ts).
//
// Writes of one store already run one at a time on a node (the storage's per-store mutex; across
// nodes the store's row lock orders them), each paying a round trip and a commit flush. Here the
// Writes that arrive while the store's previous call is in flight wait in the store's queue and go
// together, in arrival order, as ONE latch_write_group call: one round trip, one transaction, one
// flush. Each keeps its own revision (consecutive, in queue order, so acknowledgement order is
// revision order), its own result and its own error: a Write that breaks a rule fails alone. A
// queue of one is sent as the plain single Write (tuples.ts writeTuples). A group is bounded by
// MAX_GROUP_WRITES and MAX_GROUP_CHANGES; what exceeds waits for the next call.

import type { TupleKey } from '../../domain/types.js';
import type { KeyedMutex } from '../kv.js';
import type { TupleWrite, WriteResult } from '../types.js';
import { classify, num, type Db, type Row } from './db.js';
import { ruleErrorOf, writeArguments, writeTuples } from './tuples.js';

/** The most Writes one group call carries. */
const MAX_GROUP_WRITES = 64;
/** The most changes (deletes + writes) one group call carries, unless its first Write alone has more. */
const MAX_GROUP_CHANGES = 10_000;

const WRITE_GROUP = {
  name: 'latch_write_group',
  text: `SELECT r_revision, r_ms, r_deleted, r_written, r_state, r_message, r_detail FROM latch_write_group($1, $2, $3,
           $4::boolean[], $5::boolean[], $6::boolean[], $7::integer[], $8::integer[],
           $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[],
           $14::text[], $15::text[], $16::text[], $17::text[], $18::text[], $19::bigint[])`,
  rowMode: 'array' as const,
};

interface Queued {
  readonly write: TupleWrite;
  readonly resolve: (r: WriteResult) => void;
  readonly reject: (err: unknown) => void;
}

/** The outcome of one Write of a group: its result, or the error it fails with alone. */
type GroupOutcome = { readonly ok: true; readonly result: WriteResult } | { readonly ok: false; readonly error: Error };

/**
 * Several Writes of one store as one latch_write_group call, in order; one outcome per Write.
 * A failure of the call itself (connection lost, store row gone) rejects; nothing was committed.
 */
export async function writeGroup(
  db: Db,
  storeId: string,
  writes: readonly TupleWrite[],
  node: string,
): Promise<GroupOutcome[]> {
  const args = writes.map(writeArguments);
  const flags: unknown[][] = [[], [], [], [], []];
  const dcols: unknown[][] = [[], [], [], [], []];
  const wcols: unknown[][] = [[], [], [], [], [], []];
  writes.forEach((w, i) => {
    const a = args[i] as ReturnType<typeof writeArguments>;
    flags[0]?.push(w.onDuplicate === 'error');
    flags[1]?.push(w.onMissing === 'error');
    flags[2]?.push(a.distinct);
    flags[3]?.push(a.dels.length);
    flags[4]?.push(a.adds.length);
    a.deletes.forEach((col, j) => dcols[j]?.push(...(col as unknown[])));
    a.writes.forEach((col, j) => wcols[j]?.push(...(col as unknown[])));
  });
  let rows: Row[];
  try {
    const values = [storeId, Date.now(), node, ...flags, ...dcols, ...wcols];
    rows = (await db.pool.query<Row>({ ...WRITE_GROUP, values })).rows;
  } catch (err) {
    return classify(err);
  }
  if (rows.length !== writes.length) throw new Error('latch_write_group returned a row count unlike its writes');
  return rows.map((row, i): GroupOutcome => {
    const a = args[i] as ReturnType<typeof writeArguments>;
    const state = row[4] as string | null;
    if (state !== null) {
      const rule =
        state === 'P0001'
          ? ruleErrorOf(row[5] as string, (row[6] as string | null) ?? undefined, a.dels, a.adds)
          : undefined;
      // Anything but a rule: an unknown error (internal_error, its cause logged, never sent).
      return { ok: false, error: rule ?? new Error(`latch_write_group: ${state} ${String(row[5])}`) };
    }
    const ms = num(row[1]);
    const pick = (idx: unknown, from: readonly TupleKey[]): TupleKey[] =>
      (idx as number[]).map((k) => from[k - 1] as TupleKey);
    return {
      ok: true,
      result: {
        revision: num(row[0]),
        timestamp: new Date(ms).toISOString(),
        deleted: pick(row[2], a.dels),
        written: pick(row[3], a.adds),
      },
    };
  });
}

/** Per-store queues of Writes, sent under the storage's per-store mutex as groups. */
export class GroupWriter {
  private readonly queues = new Map<string, Queued[]>();

  constructor(
    private readonly db: Db,
    private readonly node: string,
    private readonly mutex: KeyedMutex,
  ) {}

  /**
   * Runs `fn` under the store's mutex, after every Write queued before this call and before every
   * Write queued after it: the open queue is closed first, so a later Write starts a queue of its
   * own behind `fn`. Every other operation that takes the store's mutex (store deletion, model
   * writes, guarded writes, delete by filter, imports) goes through here, so call order is
   * commit order on this node, as it was before Writes were grouped.
   */
  exclusive<T>(storeId: string, fn: () => Promise<T>): Promise<T> {
    this.queues.delete(storeId);
    return this.mutex.run(storeId, fn);
  }

  /** Resolves with the Write's own result once its group has committed; rejects with its own error. */
  write(storeId: string, write: TupleWrite): Promise<WriteResult> {
    return new Promise<WriteResult>((resolve, reject) => {
      let queue = this.queues.get(storeId);
      if (queue === undefined) {
        const fresh: Queued[] = [];
        queue = fresh;
        this.queues.set(storeId, fresh);
        // Runs once the store's previous call has finished: everything queued by then goes now.
        void this.mutex.run(storeId, async () => {
          if (this.queues.get(storeId) === fresh) this.queues.delete(storeId);
          await this.drain(storeId, fresh);
        });
      }
      queue.push({ write, resolve, reject });
    });
  }

  /** Sends `queue` as bounded groups, in order; each Write settles with its own outcome. */
  private async drain(storeId: string, queue: readonly Queued[]): Promise<void> {
    for (let at = 0; at < queue.length;) {
      let end = at + 1;
      let changes = size(queue[at] as Queued);
      while (end < queue.length && end - at < MAX_GROUP_WRITES) {
        const next = size(queue[end] as Queued);
        if (changes + next > MAX_GROUP_CHANGES) break;
        changes += next;
        end++;
      }
      const group = queue.slice(at, end);
      at = end;
      if (group.length === 1) {
        const only = group[0] as Queued;
        await writeTuples(this.db, storeId, only.write, this.node).then(only.resolve, only.reject);
        continue;
      }
      try {
        const outcomes = await writeGroup(
          this.db,
          storeId,
          group.map((q) => q.write),
          this.node,
        );
        outcomes.forEach((o, i) => {
          const q = group[i] as Queued;
          if (o.ok) q.resolve(o.result);
          else q.reject(o.error);
        });
      } catch (err) {
        for (const q of group) q.reject(err);
      }
    }
  }
}

const size = (q: Queued): number => q.write.deletes.length + q.write.writes.length;
