// AuthZEN Access Evaluations (spec §7): boxcarred evaluations with top-level defaults and the
// three evaluation semantics. `execute_all` runs every item as one BatchCheck; the two
// short-circuit semantics run the items one Check at a time, in order, and stop early. Every
// semantic takes at most `maxBatchCheckItems` items and has one deadline for the whole request;
// the short-circuit ones yield to the event loop between items, so a long request never holds it.
// Per-item errors are embedded as `{decision: false, context: {error: {status, message}}}`.

import { nextTurn } from '../../domain/turn.js';
import type { JsonObject } from '../../domain/types.js';
import type { BatchCheckInput, BatchCheckItem, CheckInput, CheckResult } from '../../engine/contract.js';
import { AppError } from '../../errors.js';
import { clientOf, type CallContext } from '../endpoint.js';
import type { Reason } from '../decisions/replay.js';
import { reasonFor, wantsReason } from './reasons.js';
import {
  actionOf,
  checkKeyOf,
  contextOf,
  mergedContext,
  optional,
  resourceOf,
  subjectOf,
  type Action,
  type Resource,
  type Subject,
} from './shapes.js';
import { isObj, list, typeError, type Obj } from '../validate.js';

type Semantic = 'execute_all' | 'deny_on_first_deny' | 'permit_on_first_permit';

const SEMANTICS: readonly Semantic[] = ['execute_all', 'deny_on_first_deny', 'permit_on_first_permit'];

/** One item after defaulting: a part left undefined is missing from both the item and the request. */
interface Item {
  readonly subject?: Subject | undefined;
  readonly resource?: Resource | undefined;
  readonly action?: Action | undefined;
  readonly context?: JsonObject | undefined;
}

export interface EvaluationsInput {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly semantic: Semantic;
  /** Empty: the request is one evaluation of its top-level fields (spec §7.1). */
  readonly items: readonly Item[];
  readonly defaults: Item;
  /** `options.reason`: each decision carries `context.reason` (./reasons.ts). */
  readonly reason: boolean;
}

interface Decision {
  readonly decision: boolean;
  readonly context?:
    { readonly error: { readonly status: number; readonly message: string } } | { readonly reason: Reason };
}

/** `options.evaluations_semantic`: a name, or the proto enum number OpenFGA also takes. */
function semanticOf(body: Obj): Semantic {
  const options = optional(body, 'options');
  const v = options?.['evaluations_semantic'];
  if (v === undefined || v === null) return 'execute_all';
  if (typeof v === 'string' && (SEMANTICS as readonly string[]).includes(v)) return v as Semantic;
  if (typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < SEMANTICS.length) return SEMANTICS[v] as Semantic;
  throw new AppError('validation_error', `invalid value for enum field evaluations_semantic: ${JSON.stringify(v)}`);
}

/** The four parts of a request or of one item, each optional (an item falls back per part). */
function partsOf(v: Obj): Item {
  const s = optional(v, 'subject');
  const r = optional(v, 'resource');
  const a = optional(v, 'action');
  return { subject: s && subjectOf(s), resource: r && resourceOf(r), action: a && actionOf(a), context: contextOf(v) };
}

/** The most items any configuration takes (`--max-batch-check-items` ≤ 10,000): more are refused before they are read. */
const MAX_ITEMS = 10_000;

export function parseEvaluations(storeId: string, modelId: string | undefined, body: Obj): EvaluationsInput {
  const defaults = partsOf(body);
  const raw = list(body, 'evaluations');
  if (raw.length > MAX_ITEMS)
    throw new AppError(
      'validation_error',
      `batchCheck received ${raw.length} checks, the maximum allowed is ${MAX_ITEMS}`,
    );
  const items = raw.map((v) => {
    if (!isObj(v)) throw typeError('evaluations', 'message', v);
    const own = partsOf(v);
    // The item's context replaces the default, it is not merged with it (spec §7.1.1).
    return {
      subject: own.subject ?? defaults.subject,
      resource: own.resource ?? defaults.resource,
      action: own.action ?? defaults.action,
      context: own.context ?? defaults.context,
    };
  });
  return { storeId, modelId, semantic: semanticOf(body), items, defaults, reason: wantsReason(body) };
}

/** The first part an item lacks, as the message names it; undefined when it is complete. */
function missing(item: Item): string | undefined {
  if (!item.subject) return 'subject';
  if (!item.action) return 'action';
  if (!item.resource) return 'resource';
  return undefined;
}

function checkOf(input: EvaluationsInput, item: Item): CheckInput {
  const { subject, resource, action } = item as Required<Item>;
  return {
    storeId: input.storeId,
    modelId: input.modelId,
    tupleKey: checkKeyOf(subject, resource, action),
    contextualTuples: [],
    context: mergedContext(item.context, subject, resource, action),
    consistency: 'UNSPECIFIED',
  };
}

function failed(status: number, message: string): Decision {
  return { decision: false, context: { error: { status, message } } };
}

/** An item's own failure, embedded; anything that is not a request fault fails the whole call. */
function embedded(err: unknown): Decision {
  if (err instanceof AppError && err.status < 500) return failed(err.status, err.message);
  throw err;
}

/** Refuses a request with more items than one BatchCheck takes (every semantic). */
function assertBatchSize(input: EvaluationsInput, ctx: CallContext): void {
  const max = ctx.latch.config.maxBatchCheckItems;
  if (input.items.length > max) {
    throw new AppError(
      'validation_error',
      `batchCheck received ${input.items.length} checks, the maximum allowed is ${max}`,
    );
  }
}

async function executeAll(input: EvaluationsInput, ctx: CallContext, deadline: number): Promise<Decision[]> {
  const checks: BatchCheckItem[] = input.items.map((item, i) => {
    const gap = missing(item);
    if (gap) throw new AppError('validation_error', `evaluation ${i}: missing ${gap}`);
    const c = checkOf(input, item);
    return { correlationId: String(i), tupleKey: c.tupleKey, contextualTuples: [], context: c.context };
  });
  const batch: BatchCheckInput = {
    storeId: input.storeId,
    modelId: input.modelId,
    checks,
    consistency: 'UNSPECIFIED',
    deadline,
  };
  const r = await ctx.latch.batchCheck(batch);
  ctx.modelId = r.modelId;
  const d = ctx.decisions;
  if (d?.active) d.batch(clientOf(ctx), 'Evaluations', batch, r);
  const out: Decision[] = [];
  for (const c of checks) {
    const outcome = r.results.get(c.correlationId);
    if (outcome === undefined) throw new AppError('internal_error', `no result for evaluation ${c.correlationId}`);
    if ('error' in outcome) out.push(failed(outcome.error.status, outcome.error.message));
    else if (!input.reason) out.push({ decision: outcome.allowed });
    else {
      const q: CheckInput = { ...c, storeId: input.storeId, modelId: input.modelId, consistency: 'UNSPECIFIED' };
      out.push(await decided(ctx, input, q, { ...r, allowed: outcome.allowed }));
    }
  }
  return out;
}

/** A decision made, recorded when `record`, with its reason when the request asks. */
async function decided(
  ctx: CallContext,
  input: EvaluationsInput,
  q: CheckInput,
  r: CheckResult,
  record = false,
): Promise<Decision> {
  const d = ctx.decisions;
  if (record && d?.active) d.check(clientOf(ctx), 'Evaluations', q, r);
  if (!input.reason) return { decision: r.allowed };
  return { decision: r.allowed, context: { reason: await reasonFor(ctx, q, r) } };
}

/**
 * In order, one Check each. deny_on_first_deny stops after the first denial or error (an error
 * counts as a denial, spec §7.1.2.1); permit_on_first_permit stops after the first permit and
 * carries on past errors.
 */
async function shortCircuit(input: EvaluationsInput, ctx: CallContext, deadline: number): Promise<Decision[]> {
  const denyFirst = input.semantic === 'deny_on_first_deny';
  const out: Decision[] = [];
  for (let i = 0; i < input.items.length; i++) {
    if (i > 0) await nextTurn();
    if (Date.now() >= deadline) {
      // The request's time is spent: this item says so and the rest are not evaluated.
      out.push(failed(422, `evaluation ${i}: the request's deadline passed before it was evaluated`));
      break;
    }
    const item = input.items[i] as Item;
    const gap = missing(item);
    let d: Decision;
    if (gap) d = failed(400, `evaluation ${i}: missing ${gap}`);
    else {
      try {
        const q = { ...checkOf(input, item), deadline };
        const r = await ctx.latch.check(q);
        ctx.modelId = r.modelId;
        d = await decided(ctx, input, q, r, true);
      } catch (err) {
        d = embedded(err);
      }
    }
    out.push(d);
    if (denyFirst ? !d.decision : d.decision) break;
  }
  return out;
}

/** The decisions, in request order (cut short by the short-circuit semantics). */
export async function evaluate(input: EvaluationsInput, ctx: CallContext): Promise<Decision[]> {
  if (input.items.length === 0) {
    // No items: exactly one evaluation of the top-level fields; its errors are the request's.
    const gap = missing(input.defaults);
    if (gap)
      throw new AppError(
        'validation_error',
        `invalid EvaluationsRequest.${gap[0]?.toUpperCase()}${gap.slice(1)}: value is required`,
      );
    const q = checkOf(input, input.defaults);
    const r = await ctx.latch.check(q);
    ctx.modelId = r.modelId;
    return [await decided(ctx, input, q, r, true)];
  }
  assertBatchSize(input, ctx);
  const deadline = Date.now() + ctx.latch.config.checkDeadlineMs;
  return input.semantic === 'execute_all' ? executeAll(input, ctx, deadline) : shortCircuit(input, ctx, deadline);
}
