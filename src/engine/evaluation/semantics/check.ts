// The reference Check evaluator (docs/reference/semantics.md §5): a direct, three-valued recursion over the
// compiled model and a TupleView. The fast walker is differential-tested against it.
//
// Step 4 of §5.2 is applied as the reference does (PathExists): a node whose relation cannot reach
// the subject's type in the type graph is FALSE without reading tuples, so errors there never surface.
// Outcomes: TRUE, FALSE, CYCLE (FALSE carrying the cycle flag, §5.10) or an AppError (ERROR:
// a condition evaluation failure, or the depth limit). Depth counts tuple hops only (§5.11).
// Example: `doc:1#viewer@group:eng#member`, `group:eng#member@user:anne` →
//   evalCheck(ctx, 'doc:1', 'viewer', 'user:anne') = true (one userset hop, depth 1).

import { parseUser, type ParsedUser } from '../../../domain/tuple.js';
import { AppError, fail } from '../../../errors.js';
import type { TupleEntry } from '../../../index/types.js';
import type { Rewrite } from '../../../model/types.js';
import { RequestState, type TupleOutcome } from './context.js';
import type { Trace } from './trace.js';
import type { TraceKind } from '../../contract.js';

export const FALSE = 0;
export const TRUE = 1;
export const CYCLE = 2;
/** A three-valued outcome; CYCLE is FALSE with the cycle flag. */
export type Outcome = typeof FALSE | typeof TRUE | typeof CYCLE | AppError;

/** Union: TRUE > ERROR > CYCLE > FALSE. */
function orOutcome(a: Outcome, b: Outcome): Outcome {
  if (a === TRUE || b === TRUE) return TRUE;
  if (a instanceof AppError) return a;
  if (b instanceof AppError) return b;
  return a === CYCLE || b === CYCLE ? CYCLE : FALSE;
}

function fromCondition(c: TupleOutcome): Outcome {
  return c === true ? TRUE : c === false ? FALSE : c;
}

/** Check evaluation for one subject; reusable for many (object, relation) pairs of one request. */
export class ReferenceChecker {
  private readonly subject: ParsedUser;
  private readonly subjectType: string;
  private readonly path = new Set<string>();
  private steps = 0;
  /**
   * Memo of `o#r` results whose subtree met no cycle and no depth cut (not even a cut its answer
   * masks, as under a decisive sibling): such a result does not depend on the path it was
   * computed under. `height` (tuple hops below) guards the depth limit: the
   * entry is reused only where the same subtree would stay below the limit.
   */
  private readonly memo = new Map<string, { out: Outcome; height: number }>();
  /** The same memo for the named evaluation (`listed`). */
  private readonly namedMemo = new Map<string, { out: Outcome; height: number }>();
  /**
   * True while evaluating whether a path names the subject (`listed`): a typed wildcard grants
   * nothing then, an intersection needs every operand to hold (fully) and one to name the subject,
   * and a subtract is evaluated fully (anything that excludes the subject excludes it).
   */
  private naming = false;
  /** Cycle hits and depth-limit cuts so far: a subtree that added none was evaluated completely. */
  private stops = 0;
  private deepest = 0;

  /** `trace`: record every step (./trace.ts); the memo is not read then, so every subtree is shown. */
  constructor(
    readonly state: RequestState,
    readonly user: string,
    private readonly trace?: Trace,
  ) {
    const parsed = parseUser(user);
    if (!parsed) throw fail.validation(`invalid user '${user}'`);
    this.subject = parsed;
    // The subject's form as the type graph sees it: `U:x` for an object (only the type matters), else itself.
    this.subjectType = parsed.kind === 'userset' ? `${parsed.type}:x#${parsed.relation}` : `${parsed.type}:x`;
  }

  /** `eval(o, r, s, {}, 0)` as a boolean: FALSE/CYCLE → false, ERROR thrown. */
  check(object: string, relation: string): boolean {
    const out = this.eval(object, relation, 0);
    if (out instanceof AppError) throw out;
    return out === TRUE;
  }

  /**
   * ListUsers' rule for a plain object subject (§6.3 set operators): `U:i` is listed only when a
   * path grants it by name, not only through a typed wildcard `U:*` (which ListUsers lists as
   * itself). Assumes `check` is TRUE for the subject; ERROR thrown as `check` does.
   * Example: `viewer: writer or manager`, `writer: [user:*]`, `manager: [user] but not member`,
   * tuples `g#writer@user:*`, `g#member@user:u` → check TRUE (the wildcard), listed false.
   */
  listed(object: string, relation: string): boolean {
    this.naming = true;
    try {
      const out = this.eval(object, relation, 0);
      if (out instanceof AppError) throw out;
      return out === TRUE;
    } finally {
      this.naming = false;
    }
  }

  /** Runs `fn` as a full Check evaluation (inside a named one: operands and subtracts). */
  private fully(fn: () => Outcome): Outcome {
    const was = this.naming;
    this.naming = false;
    try {
      return fn();
    } finally {
      this.naming = was;
    }
  }

  /** §5.2 steps 1-5. */
  eval(object: string, relation: string, depth: number): Outcome {
    if (this.trace === undefined) return this.evalNode(object, relation, depth);
    this.trace.open('relation', `${object}#${relation}`);
    return this.trace.close(this.evalNode(object, relation, depth));
  }

  private evalNode(object: string, relation: string, depth: number): Outcome {
    if (depth >= this.state.ctx.resolveDepth) {
      this.stops++;
      return fail.tooComplex();
    }
    // Every node entered counts towards the height of the memoised ancestors (even a self hit).
    if (depth > this.deepest) this.deepest = depth;
    const key = `${object}#${relation}`;
    if (this.path.has(key)) {
      this.stops++;
      this.trace?.mark('cycle');
      return CYCLE;
    }
    if (key === this.user) return TRUE;
    const type = object.slice(0, object.indexOf(':'));
    if (!this.state.reaches(this.subjectType, type, relation)) {
      this.trace?.mark('pruned');
      return FALSE;
    }
    const hit = this.trace === undefined ? (this.naming ? this.namedMemo : this.memo).get(key) : undefined;
    if (hit && depth + hit.height < this.state.ctx.resolveDepth) {
      this.deepest = Math.max(this.deepest, depth + hit.height);
      return hit.out;
    }
    if ((++this.steps & 1023) === 0) this.state.checkDeadline();
    const rel = this.state.ctx.model.types.get(type)?.relations.get(relation);
    if (!rel) return FALSE;
    return this.evalFresh(key, object, relation, rel.rewrite, depth);
  }

  /** Evaluate `o#r` on the current path; memoise a path-independent result. */
  private evalFresh(key: string, object: string, relation: string, rw: Rewrite, depth: number): Outcome {
    const before = this.stops;
    const outer = this.deepest;
    this.deepest = depth;
    this.path.add(key);
    try {
      const out = this.rewrite(object, relation, rw, depth);
      if (this.stops === before && (out === TRUE || out === FALSE))
        (this.naming ? this.namedMemo : this.memo).set(key, { out, height: this.deepest - depth });
      return out;
    } finally {
      this.path.delete(key);
      this.deepest = Math.max(outer, this.deepest);
    }
  }

  private rewrite(object: string, relation: string, rw: Rewrite, depth: number): Outcome {
    if (this.trace === undefined) return this.rewriteNode(object, relation, rw, depth);
    const [kind, label] = traceLabel(object, relation, rw);
    this.trace.open(kind, label);
    return this.trace.close(this.rewriteNode(object, relation, rw, depth));
  }

  private rewriteNode(object: string, relation: string, rw: Rewrite, depth: number): Outcome {
    switch (rw.kind) {
      case 'this':
        return this.direct(object, relation, depth);
      case 'computed':
        return this.eval(object, rw.relation, depth);
      case 'ttu':
        return this.ttu(object, rw.tupleset, rw.computed, depth);
      case 'union': {
        let acc: Outcome = FALSE;
        for (const c of rw.children) {
          acc = orOutcome(acc, this.rewrite(object, relation, c, depth));
          if (acc === TRUE) return TRUE;
        }
        return acc;
      }
      case 'intersection':
        return this.intersection(object, relation, rw.children, depth);
      case 'difference':
        return this.difference(object, relation, rw.base, rw.subtract, depth);
    }
  }

  /**
   * The first FALSE or CYCLE child (in model order) decides, flag included; else ERROR; else TRUE.
   * The reference takes whichever falsey child finishes first; fixing the order keeps answers
   * deterministic and identical to the walker's.
   */
  private intersection(object: string, relation: string, children: readonly Rewrite[], depth: number): Outcome {
    let err: AppError | undefined;
    const naming = this.naming;
    for (const c of children) {
      const out = naming
        ? this.fully(() => this.rewrite(object, relation, c, depth))
        : this.rewrite(object, relation, c, depth);
      if (out === FALSE || out === CYCLE) return out;
      if (out instanceof AppError) err ??= out;
    }
    if (err !== undefined || !naming) return err ?? TRUE;
    // Every operand holds; the subject is named when one operand names it.
    for (const c of children) if (this.rewrite(object, relation, c, depth) === TRUE) return TRUE;
    return FALSE;
  }

  /** base FALSE/CYCLE decides; then subtract TRUE → FALSE, CYCLE → CYCLE; then errors. */
  private difference(object: string, relation: string, base: Rewrite, subtract: Rewrite, depth: number): Outcome {
    const b = this.rewrite(object, relation, base, depth);
    if (b === FALSE || b === CYCLE) return b;
    const s = this.fully(() => this.rewrite(object, relation, subtract, depth));
    if (s === TRUE) return FALSE;
    if (s === CYCLE) return CYCLE;
    if (b instanceof AppError) return b;
    if (s instanceof AppError) return s;
    return TRUE;
  }

  /** §5.4.1: exact tuple, typed wildcard, then userset tuples (one hop each). */
  private direct(object: string, relation: string, depth: number): Outcome {
    const s = this.subject;
    const wildcard = s.kind === 'object' ? `${s.type}:*` : undefined;
    let acc: Outcome = FALSE;
    let exactSeen = false;
    let wildSeen = false;
    const usersets: TupleEntry[] = [];
    for (const t of this.state.validUsers(object, relation)) {
      if (t.user === this.user) {
        // (a) Exact-key lookup: the first copy (contextual before stored) is the one evaluated.
        // A userset subject's own tuple is also a userset tuple: (c) scans every copy of it.
        if (s.kind === 'userset') usersets.push(t);
        if (exactSeen) continue;
        exactSeen = true;
        acc = orOutcome(acc, this.leaf(t, fromCondition(this.state.condition(t))));
      } else if (t.user === wildcard) {
        if (wildSeen || this.naming) continue;
        wildSeen = true;
        acc = orOutcome(acc, this.leaf(t, fromCondition(this.state.condition(t))));
      } else if (t.user.includes('#')) {
        usersets.push(t);
      }
      if (acc === TRUE) return TRUE;
    }
    for (const t of usersets) {
      acc = orOutcome(acc, this.viaUserset(t, depth));
      if (acc === TRUE) return TRUE;
    }
    return acc;
  }

  /** A tuple that decides by itself (exact or wildcard match), recorded when tracing. */
  private leaf(t: TupleEntry, out: Outcome): Outcome {
    if (this.trace === undefined) return out;
    this.trace.open('tuple', tupleText(t));
    return this.trace.close(out);
  }

  private viaUserset(t: TupleEntry, depth: number): Outcome {
    if (this.trace === undefined) return this.viaUsersetNode(t, depth);
    this.trace.open('tuple', tupleText(t));
    return this.trace.close(this.viaUsersetNode(t, depth));
  }

  private viaUsersetNode(t: TupleEntry, depth: number): Outcome {
    const cond = this.state.condition(t);
    if (cond !== true) return cond === false ? FALSE : cond;
    const hash = t.user.lastIndexOf('#');
    return this.eval(t.user.slice(0, hash), t.user.slice(hash + 1), depth + 1);
  }

  /** §5.4.3: parents via valid tupleset tuples (condition first); parents whose type lacks `computed` are skipped. */
  private ttu(object: string, tupleset: string, computed: string, depth: number): Outcome {
    let acc: Outcome = FALSE;
    for (const t of this.state.validUsers(object, tupleset)) {
      // The reference filters conditions while reading, before it looks at the parent's type.
      const cond = this.state.condition(t);
      if (cond !== true) {
        acc = orOutcome(acc, fromCondition(cond));
        continue;
      }
      const ptype = t.user.slice(0, t.user.indexOf(':'));
      if (!this.state.ctx.model.types.get(ptype)?.relations.has(computed)) continue;
      this.trace?.open('tuple', tupleText(t));
      const out = this.eval(t.user, computed, depth + 1);
      acc = orOutcome(acc, this.trace === undefined ? out : this.trace.close(out));
      if (acc === TRUE) return TRUE;
    }
    return acc;
  }
}

function tupleText(t: TupleEntry): string {
  return t.condition
    ? `${t.object}#${t.relation}@${t.user} (condition ${t.condition.name})`
    : `${t.object}#${t.relation}@${t.user}`;
}

/** The trace node of a rewrite: its kind and the rewrite in DSL words. */
function traceLabel(object: string, relation: string, rw: Rewrite): [TraceKind, string] {
  switch (rw.kind) {
    case 'this':
      return ['direct', `${object}#${relation}: tuples assigned directly`];
    case 'computed':
      return ['computed', rw.relation];
    case 'ttu':
      return ['ttu', `${rw.computed} from ${rw.tupleset}`];
    case 'union':
      return ['union', 'or'];
    case 'intersection':
      return ['intersection', 'and'];
    case 'difference':
      return ['exclusion', 'but not'];
  }
}

/**
 * One ListObjects candidate checked by the reference checker: allowed or not, a condition error
 * carried as its AppError, 'deadline' once the request's deadline passed; the depth limit throws
 * (it fails the whole request).
 */
export function confirm(checker: ReferenceChecker, object: string, relation: string): boolean | AppError | 'deadline' {
  let out;
  try {
    out = checker.eval(object, relation, 0);
  } catch (e) {
    if (e instanceof AppError && e.code === 'deadline_exceeded') return 'deadline';
    throw e;
  }
  if (out instanceof AppError) {
    if (out.code === 'authorization_model_resolution_too_complex') throw out;
    return out;
  }
  return out === TRUE;
}
