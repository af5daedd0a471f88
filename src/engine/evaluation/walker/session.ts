// Many Checks of one request (user, contextual tuples, context) on this thread's walker host, by
// object id: ListObjects confirms its candidates here. The statuses go through the host's one
// mapping (`outcomeOf`): a condition error is remembered (it fails the list only if the walk ends
// below maxResults), the deadline or step budget stops the walk, other errors fail it at once.

import type { JsonObject, TupleKey } from '../../../domain/types.js';
import type { CompiledModel } from '../../../model/types.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import type { Confirmation, Confirmer, NodeIds } from '../list/list-objects.js';
import { AppError } from '../../../errors.js';
import { outcomeOf, walkerHost, type CheckItem, type WalkerHost } from './host.js';

/**
 * Synchronous use only between two awaits; a session survives other calls of the host in between
 * (the host re-prepares the request).
 */
export class WalkerSession implements Confirmer {
  readonly ids: NodeIds;
  readonly host: WalkerHost = walkerHost();
  private readonly temps: readonly string[];
  /** The candidate being confirmed (fields, not an argument object: nothing is allocated per candidate). */
  private obj = 0;
  private rel = 0;
  private static run(s: WalkerSession): number {
    return s.host.runObject(s.snapshot, s.model, s.item, s.depth, s.now, s.obj, s.rel);
  }

  constructor(
    readonly snapshot: IndexSnapshot,
    readonly model: CompiledModel,
    readonly item: CheckItem,
    readonly depth: number,
    readonly deadline: number,
    /** The request's instant (ms): stored tuples expired at it grant nothing. */
    readonly now: number,
  ) {
    this.ids = {
      id: (s: string): number => this.host.nodeId(snapshot, model, item, depth, now, s),
      str: (id: number): string => (id < snapshot.nodeCount ? snapshot.nodeOf(id) : this.tempString(id)),
    };
    this.ids.id(item.user); // prepares the scratch now
    this.temps = [...this.host.tempNodes()];
  }

  tempString(id: number): string {
    return this.temps[id - this.snapshot.nodeCount] ?? '';
  }

  confirm(obj: number, rel: number): Confirmation {
    // The list's deadline bounds each confirming walk too (past it the walker gives up: 'stop').
    this.obj = obj;
    this.rel = rel;
    const status = this.host.withDeadline(this.deadline, WalkerSession.run, this);
    const o = outcomeOf(status, this.host.firstError);
    if (o === 'host') throw new AppError('internal_error', 'Internal Server Error'); // this thread evaluates every condition
    if ('allowed' in o) return o.allowed;
    if (o.error.code === 'validation_error') return o.error;
    if (o.error.code === 'throttled_timeout_error') return 'stop';
    throw o.error;
  }

  get contextual(): readonly TupleKey[] {
    return this.item.contextualTuples;
  }
  get context(): JsonObject | undefined {
    return this.item.context;
  }
  get resolveDepth(): number {
    return this.depth;
  }
}
