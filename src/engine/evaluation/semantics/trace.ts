// The evaluation trace of one Check by the reference evaluator (./check.ts), for the debugging
// endpoint POST /stores/{id}/check/explain: one node per relation evaluated, per rewrite operator
// and per tuple followed, each with its outcome. Only built when asked for; never on the walker.

import { AppError } from '../../../errors.js';
import type { TraceKind, TraceNode } from '../../contract.js';

/** Most nodes one trace records; past it, deeper nodes are evaluated but not recorded. */
const MAX_TRACE_NODES = 5000;

export class Trace {
  readonly root: TraceNode = { kind: 'relation', label: '', outcome: 'denied', children: [] };
  private readonly stack: TraceNode[] = [this.root];
  private count = 0;
  /** Nodes not recorded because the trace was full. */
  dropped = 0;

  /** Opens a child of the current node; `close` must follow with its outcome. */
  open(kind: TraceKind, label: string): void {
    const node: TraceNode = { kind, label, outcome: 'denied' };
    if (++this.count > MAX_TRACE_NODES) this.dropped++;
    else (this.top().children ??= []).push(node);
    this.stack.push(node);
  }

  /** Records `out` (an Outcome of ./check.ts: 0 FALSE, 1 TRUE, 2 CYCLE, or an AppError) and returns it. */
  close<T>(out: T): T {
    const node = this.stack.pop() as TraceNode;
    if (out instanceof AppError) {
      node.outcome = 'error';
      node.error = `${out.code}: ${out.message}`;
    } else node.outcome = out === 1 ? 'allowed' : out === 2 ? 'cycle' : 'denied';
    return out;
  }

  /** Relabels the current node (a relation found unreachable, or closing a cycle). */
  mark(kind: TraceKind): void {
    this.top().kind = kind;
  }

  private top(): TraceNode {
    return this.stack[this.stack.length - 1] as TraceNode;
  }
}
