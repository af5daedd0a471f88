// A store's assertions (stored with the base model) run under both models: Check on the reference
// evaluator with each assertion's contextual tuples and context, on the impact's snapshot. An
// assertion whose key no longer validates (a relation removed) is an error outcome, as the Check
// would answer. Only assertions whose outcome changes are reported.
// Example: `doc:1#viewer@user:anne expect true`, base allowed, candidate denied → one line with
//   passes: false.

import type { Assertion } from '../../../domain/types.js';
import { AppError } from '../../../errors.js';
import type { TupleView } from '../../../index/types.js';
import { validateCheckTupleKey } from '../../../model/query-validation.js';
import { findTupleProblem } from '../../../model/tuple-validation.js';
import type { CompiledModel } from '../../../model/types.js';
import { ReferenceChecker } from '../semantics/check.js';
import { RequestState } from '../semantics/context.js';
import { overlayView } from '../semantics/view.js';
import type { AssertionOutcome, ImpactLine } from '../../contract.js';

interface AssertionWorld {
  readonly view: TupleView;
  readonly resolveDepth: number;
}

/** The assertion's Check under `model`: its answer, or the error the Check would answer with. */
function assertionOutcome(world: AssertionWorld, model: CompiledModel, a: Assertion): AssertionOutcome {
  const k = a.tuple_key;
  const contextual = a.contextual_tuples ?? [];
  try {
    validateCheckTupleKey(model, k);
    // A contextual tuple's fault is invalid_tuple in Check (docs/reference/semantics.md Appendix A.3).
    for (const t of contextual) {
      const fault = findTupleProblem(model, t, 'contextual');
      if (fault) throw new AppError('invalid_tuple', fault.message);
    }
    const ctx = {
      model,
      view: overlayView(world.view, contextual),
      context: a.context,
      resolveDepth: world.resolveDepth,
      deadline: Number.POSITIVE_INFINITY,
    };
    return { allowed: new ReferenceChecker(new RequestState(ctx), k.user).check(k.object, k.relation) };
  } catch (e) {
    if (e instanceof AppError) return { error: { code: e.code, message: e.message } };
    throw e;
  }
}

const same = (a: AssertionOutcome, b: AssertionOutcome): boolean =>
  'allowed' in a ? 'allowed' in b && a.allowed === b.allowed : 'error' in b && a.error.code === b.error.code;

/** The `assertion` line of `a` when its outcome differs between the models, else undefined. */
export function assertionLine(
  world: AssertionWorld,
  base: CompiledModel,
  candidate: CompiledModel,
  a: Assertion,
): ImpactLine | undefined {
  const before = assertionOutcome(world, base, a);
  const after = assertionOutcome(world, candidate, a);
  if (same(before, after)) return undefined;
  return {
    kind: 'assertion',
    tuple_key: a.tuple_key,
    expectation: a.expectation,
    base: before,
    candidate: after,
    passes: 'allowed' in after && after.allowed === a.expectation,
  };
}
