// AuthZEN decisions with reasons (docs/authzen.md): a request whose `options.reason` is true gets
// `context.reason` on each decision, built from the explanation of the check at the very revision
// and instant the decision read (../decisions/replay.ts), so the reason always matches the answer.
// Example: `{"decision": true, "context": {"reason": {"allowed": true, "chain": [
// {"kind": "relation", "label": "document:x#viewer"}, …, {"kind": "tuple", …}]}}}`.

import type { CheckInput, CheckResult } from '../../engine/contract.js';
import { AppError } from '../../errors.js';
import type { CallContext } from '../endpoint.js';
import { explainAt, pointOf, reasonOf, type Reason } from '../decisions/replay.js';
import { optional } from './shapes.js';
import type { Obj } from '../validate.js';

/** `options.reason`: absent or false → no reasons; true → reasons; anything else → 400. */
export function wantsReason(body: Obj): boolean {
  const v = optional(body, 'options')?.['reason'];
  if (v === undefined || v === null || v === false) return false;
  if (v === true) return true;
  throw new AppError('validation_error', `invalid value for options.reason: ${JSON.stringify(v)} (a boolean)`);
}

/** The reason of a decision `r` made for `q`. */
export async function reasonFor(ctx: CallContext, q: CheckInput, r: CheckResult): Promise<Reason> {
  const e = await explainAt(ctx.latch, q, r.modelId, pointOf(r, Date.now()));
  return reasonOf(e);
}
