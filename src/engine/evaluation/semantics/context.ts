// Per-request evaluation state shared by Check, ListObjects and ListUsers: the inputs
// (model, tuple view, request context, limits), each tuple's condition outcome evaluated at most
// once per request, and the memoised type-graph reachability of §5.2 step 4.

import type { JsonObject } from '../../../domain/types.js';
import { AppError } from '../../../errors.js';
import type { TupleEntry, TupleView } from '../../../index/types.js';
import type { CompiledModel } from '../../../model/types.js';
import { pathExists } from './graph.js';
import { isValidAtReadTime } from './validity.js';

/** What one query evaluates against. `deadline` is a `Date.now()` timestamp in ms. */
export interface EvalContext {
  readonly model: CompiledModel;
  readonly view: TupleView;
  readonly context?: JsonObject | undefined;
  readonly resolveDepth: number;
  readonly deadline: number;
}

/** Outcome of a tuple's condition: met, not met, or an evaluation error (validation_error). */
export type TupleOutcome = true | false | AppError;

/** Memoised tuple-level facts for one request. */
export class RequestState {
  private readonly cond = new WeakMap<TupleEntry, TupleOutcome>();

  constructor(readonly ctx: EvalContext) {}

  /**
   * Read-time validity (docs/reference/semantics.md §4.5). Not memoised on purpose: the check is an
   * allocation-free scan of a few restrictions, cheaper than any per-request memo lookup.
   */
  isValid(t: TupleEntry): boolean {
    return isValidAtReadTime(this.ctx.model, t);
  }

  private readonly paths = new Map<string, boolean>();

  /** §5.2 step 4 for `subject` and `type#relation`, memoised per request. */
  reaches(subject: string, type: string, relation: string): boolean {
    const key = `${subject}\u0000${type}#${relation}`;
    let v = this.paths.get(key);
    if (v === undefined) {
      v = pathExists(this.ctx.model, subject, type, relation);
      this.paths.set(key, v);
    }
    return v;
  }

  /** The tuple's condition outcome with the request context (tuple context wins, §5.9.2). */
  condition(t: TupleEntry): TupleOutcome {
    if (!t.condition) return true;
    const cached = this.cond.get(t);
    if (cached !== undefined) return cached;
    const out = this.evaluate(t);
    this.cond.set(t, out);
    return out;
  }

  private evaluate(t: TupleEntry): TupleOutcome {
    const name = t.condition?.name ?? '';
    const compiled = this.ctx.model.conditions.get(name);
    const text = `${t.object}#${t.relation}@${t.user}`;
    if (!compiled) return new AppError('validation_error', `condition '${name}' was not found for tuple '${text}'`);
    const res = compiled.evaluate(t.condition?.context, this.ctx.context, text);
    return res.ok ? res.value : new AppError('validation_error', res.message);
  }

  /** Valid tuples `object#relation@*`, in view order. */
  validUsers(object: string, relation: string): TupleEntry[] {
    const out: TupleEntry[] = [];
    for (const t of this.ctx.view.users(object, relation)) if (this.isValid(t)) out.push(t);
    return out;
  }

  /** Throws deadline_exceeded once the request deadline has passed. */
  checkDeadline(): void {
    if (Date.now() > this.ctx.deadline) throw new AppError('deadline_exceeded', 'Deadline exceeded');
  }

  expired(): boolean {
    return Date.now() > this.ctx.deadline;
  }
}
