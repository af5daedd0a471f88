// The runtime cost limit of a condition evaluation (docs/reference/semantics.md §5.9.3: default 100 units, never
// below 100). The CEL library has no cost tracker, so the compiled program's syntax tree is
// instrumented once, at model compile time: every node evaluation adds its cost to one meter, and
// passing the limit aborts the evaluation with an error (→ `validation_error` for that tuple).
//
// Cost model (CEL's runtime costs, simplified): an identifier or field selection costs 1, a
// function or operator call 1, a list literal 10, a map literal 30; constants, `&&`, `||` and
// `?:` cost nothing themselves. A comprehension (`all`, `exists`, `exists_one`, `map`, `filter`)
// pays its body's cost once per element, so it is charged in proportion to the list the request
// supplies. String and list operations are charged 1 whatever their length (CEL charges a tenth of
// a unit per character or element): the limit bounds the number of steps, which is what keeps a
// request from spending the server's time.
// Example: `xs.exists(x, x == 7)` over a 60-element list costs 1 (xs) + 60 × 2 (x, ==) = 121 > 100.

/** A syntax tree node as the CEL library builds it (its public shape). */
interface CelNode {
  readonly op: string;
  readonly args: unknown;
  readonly meta: { evaluate?: NodeEval; alternate?: CelNode; macro?: { evaluate: NodeEval } };
  evaluate: NodeEval;
}

type NodeEval = (this: unknown, ev: unknown, ast: unknown, ctx: unknown) => unknown;

/** A parsed program: callable with a context, its tree on `.ast`. */
type CelProgram = ((context: Record<string, unknown>) => unknown) & { readonly ast?: unknown };

export const DEFAULT_CONDITION_COST_LIMIT = 100;

const FREE = new Set(['value', '&&', '||', '?:', 'accuValue', 'accuInc', 'accuPush']);
const OP_COST: Readonly<Record<string, number>> = { list: 10, map: 30 };

/** Thrown (and caught by the condition) when an evaluation passes its budget. */
class CostLimitExceeded extends Error {}

/** One meter for the thread: evaluations are synchronous, so they never interleave. */
const meter = { spent: 0, limit: DEFAULT_CONDITION_COST_LIMIT };

function isNode(v: unknown): v is CelNode {
  return typeof v === 'object' && v !== null && typeof (v as { op?: unknown }).op === 'string' && 'meta' in v;
}

/** What the library's own first call would resolve `evaluate` to (alternate, macro or operator). */
function resolve(node: CelNode): NodeEval {
  const meta = node.meta;
  const alternate = meta.alternate;
  if (alternate) return (ev, _ast, ctx) => alternate.evaluate(ev, alternate, ctx);
  const macro = meta.macro;
  if (macro) return (ev, _ast, ctx) => macro.evaluate(ev, macro, ctx);
  const own = meta.evaluate;
  if (!own) throw new Error('CEL node without an evaluator');
  return own;
}

function instrument(node: CelNode, seen: Set<CelNode>): void {
  if (seen.has(node)) return;
  seen.add(node);
  const cost = FREE.has(node.op) ? 0 : (OP_COST[node.op] ?? 1);
  let inner: NodeEval | undefined;
  const metered: NodeEval = function (this: unknown, ev, ast, ctx) {
    meter.spent += cost;
    if (meter.spent > meter.limit) throw new CostLimitExceeded(`operation cancelled: actual cost limit exceeded`);
    inner ??= resolve(node);
    return inner.call(this, ev, ast, ctx);
  };
  // The library replaces `evaluate` on a node's first call; the setter keeps the meter in place
  // (the replacement is what `resolve` computes, so nothing is lost by ignoring it).
  Object.defineProperty(node, 'evaluate', { get: () => metered, set: () => undefined, configurable: true });
  visit(node.args, seen);
}

/** Nodes sit in `args` directly or in nested arrays (call arguments, map entries). */
function visit(value: unknown, seen: Set<CelNode>): void {
  if (isNode(value)) instrument(value, seen);
  else if (Array.isArray(value)) for (const v of value as unknown[]) visit(v, seen);
}

/** Instruments `program`'s tree once and returns a runner that evaluates it under `limit`. */
export function meteredProgram(program: CelProgram, limit: number): (context: Record<string, unknown>) => unknown {
  if (isNode(program.ast)) instrument(program.ast, new Set());
  const budget = Math.max(limit, DEFAULT_CONDITION_COST_LIMIT);
  return (context) => {
    meter.spent = 0;
    meter.limit = budget;
    return program(context);
  };
}

/** The cost the latest evaluation on this thread spent (tests and diagnostics). */
export function lastEvaluationCost(): number {
  return meter.spent;
}
