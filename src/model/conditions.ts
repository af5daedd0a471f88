// Conditions (ABAC): compile a model's CEL expressions once and evaluate them per tuple
// (docs/reference/semantics.md §5.9, docs/reference/decisions.md D13). The CEL library is imported here and nowhere else.
// Example: `condition in_net(ip: ipaddress, cidr: string) { ip.in_cidr(cidr) }` evaluated for
// tuple context {cidr:"10.0.0.0/8"} and request context {ip:"10.1.2.3"} → {ok:true, value:true}.

import { Environment } from '@marcbachmann/cel-js';
import { AppError } from '../errors.js';
import type { ConditionJson, JsonObject, JsonValue } from '../domain/types.js';
import { celTypeOf, convertValue, decodeParamType } from './convert.js';
import { DEFAULT_CONDITION_COST_LIMIT, meteredProgram } from './cel-cost.js';
import { IPAddress, parseIPAddress, parsePrefix } from './ipaddr.js';
import type { CompiledCondition, ConditionOutcome, ParamType } from './types.js';

/** CEL standard library plus the `ipaddress` type of OpenFGA; built once, cloned per condition. */
function baseEnvironment(): Environment {
  return (
    new Environment()
      .registerType('ipaddress', IPAddress)
      .registerFunction('ipaddress(string): ipaddress', (s: string) => {
        const ip = parseIPAddress(s);
        if (!ip) throw new Error(`invalid ip address '${s}'`);
        return ip;
      })
      .registerFunction('ipaddress.in_cidr(string): bool', (ip: IPAddress, cidr: string) => {
        const prefix = parsePrefix(cidr);
        if (!prefix) throw new Error(`invalid CIDR '${cidr}'`);
        return ip.inPrefix(prefix.addr, prefix.bits);
      })
      // `!=` is derived from `==` by the library.
      .registerOperator('ipaddress == ipaddress', (a: IPAddress, b: IPAddress) => a.equals(b))
      // CEL-Go treats the well-known Timestamp/Duration messages and the ipaddress object type as
      // nullable, so `t != null` type-checks; a converted parameter is never null.
      .registerOperator('ipaddress == null', () => false)
      .registerOperator('google.protobuf.Timestamp == null', () => false)
      .registerOperator('google.protobuf.Duration == null', () => false)
  );
}

let base: Environment | undefined;

// Message formats follow the reference (openfga internal/condition/errors.go), except the
// missing-parameter text, which is the one the API reports (docs/reference/semantics.md §5.9.3).
const compileError = (name: string, reason: string): AppError =>
  new AppError('validation_error', `failed to compile expression on condition '${name}': ${reason}`);

/** First line of a library error (its later lines draw the source with a caret). */
const firstLine = (err: unknown): string => (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';

/**
 * Compile one model condition (rule R17): key equals name, parameter types decode, the expression
 * type-checks against exactly the declared parameters and yields bool. Throws `validation_error`.
 */
export function compileCondition(key: string, def: ConditionJson): CompiledCondition {
  if (def.name !== key) {
    throw new AppError('validation_error', `condition key '${key}' does not match condition name '${def.name}'`);
  }
  const parameters = new Map<string, ParamType>();
  base ??= baseEnvironment();
  const env = base.clone();
  for (const [param, ref] of Object.entries(def.parameters ?? {})) {
    const t = decodeParamType(ref);
    if (typeof t === 'string')
      throw compileError(key, `failed to decode parameter type for parameter '${param}': ${t}`);
    parameters.set(param, t);
    env.registerVariable(param, celTypeOf(t));
  }
  const checked = env.check(def.expression);
  if (!checked.valid) throw compileError(key, firstLine(checked.error));
  if (checked.type !== 'bool') {
    throw compileError(key, `expected a bool condition expression output, but got '${checked.type ?? 'unknown'}'`);
  }
  return new CelCondition(
    key,
    def.expression,
    parameters,
    meteredProgram(env.parse(def.expression), DEFAULT_CONDITION_COST_LIMIT),
  );
}

type Program = (context: Record<string, unknown>) => unknown;

class CelCondition implements CompiledCondition {
  private readonly sortedParams: readonly string[];
  constructor(
    readonly name: string,
    readonly expression: string,
    readonly parameters: ReadonlyMap<string, ParamType>,
    private readonly program: Program,
  ) {
    this.sortedParams = [...parameters.keys()].sort();
  }

  evaluate(
    tupleContext: JsonObject | undefined,
    requestContext: JsonObject | undefined,
    tupleText: string,
  ): ConditionOutcome {
    const fail = (message: string): ConditionOutcome => ({ ok: false, message });
    if (this.parameters.size === 0 && (nonEmpty(tupleContext) || nonEmpty(requestContext))) {
      return fail(`parameter type error on condition '${this.name}': no parameters defined for the condition`);
    }
    const values: Record<string, unknown> = {};
    const missing: string[] = [];
    for (const param of this.sortedParams) {
      const raw = pick(tupleContext, param) ?? pick(requestContext, param);
      if (raw === undefined) {
        missing.push(param);
        continue;
      }
      const c = convertValue(this.parameters.get(param) ?? { kind: 'any' }, raw.value);
      if (!c.ok) return fail(this.typeError(param, c.reason));
      values[param] = c.value;
    }
    if (missing.length > 0) {
      return fail(
        `failed to evaluate relationship condition: '${this.name}' - tuple '${tupleText}' is missing context parameters '[${missing.join(' ')}]'`,
      );
    }
    const evalError = (why: string): ConditionOutcome =>
      fail(`failed to evaluate relationship condition '${this.name}': failed to evaluate condition expression: ${why}`);
    try {
      const result = this.program(values);
      return typeof result === 'boolean' ? { ok: true, value: result } : evalError('the result is not a bool');
    } catch (err) {
      return evalError(firstLine(err));
    }
  }

  /** Reference order: convert the declared parameters present first, then reject unknown keys. */
  checkContext(context: JsonObject): string | undefined {
    for (const param of this.sortedParams) {
      const raw = pick(context, param);
      const c = raw && convertValue(this.parameters.get(param) ?? { kind: 'any' }, raw.value);
      if (c && !c.ok) return this.typeError(param, c.reason);
    }
    for (const key of Object.keys(context))
      if (!this.parameters.has(key)) return `found invalid context parameter: ${key}`;
    return undefined;
  }

  private typeError(param: string, reason: string): string {
    return `parameter type error on condition '${this.name}': failed to convert context parameter '${param}': ${reason}`;
  }
}

function nonEmpty(ctx: JsonObject | undefined): boolean {
  if (!ctx) return false;
  for (const _ in ctx) return true;
  return false;
}

/** The value of an own key (so a JSON `null` is present, not missing). */
function pick(ctx: JsonObject | undefined, key: string): { value: JsonValue } | undefined {
  return ctx !== undefined && Object.prototype.hasOwnProperty.call(ctx, key)
    ? { value: ctx[key] as JsonValue }
    : undefined;
}
