// Node ids and the reference confirmer for the indexed ListObjects walk (list-objects.ts):
// the ids a request's strings get when the reference checker (not the wasm walker) confirms
// candidates, and that confirmer itself.
//
// Example: new RequestNodeIds(snapshot, requestNodes('user:anne', [])).id('user:anne') is the
// snapshot's node id of user:anne, or a temporary id past the snapshot's nodes if it has none.

import type { TupleKey } from '../../../domain/types.js';
import type { IndexSnapshot } from '../../../index/store-index.js';
import { ReferenceChecker } from '../semantics/check.js';
import { confirm } from '../semantics/check.js';
import { RequestState } from '../semantics/context.js';
import { UNSEEN_NODE, type Confirmation, type Confirmer, type IndexedListInput, type NodeIds } from './list-objects.js';
import { overlayView } from '../semantics/view.js';

/** NodeIds for the reference confirmer: the snapshot's ids plus temporary ids for request strings. */
export class RequestNodeIds implements NodeIds {
  private readonly temp = new Map<string, number>();
  private readonly tempList: string[] = [];
  constructor(
    private readonly snapshot: IndexSnapshot,
    strings: Iterable<string>,
  ) {
    for (const s of strings) {
      if (snapshot.nodeId(s) !== undefined || this.temp.has(s)) continue;
      this.temp.set(s, snapshot.nodeCount + this.tempList.length);
      this.tempList.push(s);
    }
  }
  id(s: string): number {
    return this.snapshot.nodeId(s) ?? this.temp.get(s) ?? UNSEEN_NODE;
  }
  str(id: number): string {
    return id < this.snapshot.nodeCount
      ? this.snapshot.nodeOf(id)
      : (this.tempList[id - this.snapshot.nodeCount] ?? '');
  }
}

/** Node strings a request mentions: the user's node and every contextual tuple's object and user. */
export function requestNodes(user: string, contextual: readonly TupleKey[]): string[] {
  const node = (u: string): string => (u.lastIndexOf('#') > u.indexOf(':') ? u.slice(0, u.lastIndexOf('#')) : u);
  const out = [node(user)];
  for (const t of contextual) out.push(t.object, node(t.user));
  return out;
}

/**
 * Confirms candidates with the reference checker over the snapshot plus the contextual tuples (one
 * ReferenceChecker per request: its memo is shared by every candidate).
 */
export function referenceConfirmer(
  inp: Omit<IndexedListInput, 'ids' | 'confirmer'>,
  user: string,
  ids: NodeIds,
): Confirmer {
  const state = new RequestState({
    model: inp.model,
    view: overlayView(inp.snapshot.at(inp.now ?? Date.now()), inp.contextual),
    context: inp.context,
    resolveDepth: inp.resolveDepth,
    deadline: inp.deadline,
  });
  const checker = new ReferenceChecker(state, user);
  return {
    confirm(obj: number, rel: number): Confirmation {
      const out = confirm(checker, ids.str(obj), inp.snapshot.nameOf(rel));
      return out === 'deadline' ? 'stop' : out;
    },
  };
}
