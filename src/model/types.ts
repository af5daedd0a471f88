// The compiled, immutable form of a validated authorization model: what the engine reads.
// Built once per model by `compileModel` (src/model/compile.ts); pure data plus compiled CEL.
//
// Example: `type document / define viewer: [user, group#member] or editor` compiles to
//   types.get('document').relations.get('viewer') = {
//     rewrite: {kind:'union', children:[{kind:'this'}, {kind:'computed', relation:'editor'}]},
//     directTypes: [{type:'user', wildcard:false}, {type:'group', relation:'member', wildcard:false}],
//     isTupleset: false }

import type { AuthorizationModel, JsonObject } from '../domain/types.js';

export type Rewrite =
  | { readonly kind: 'this' }
  | { readonly kind: 'computed'; readonly relation: string }
  /** `computed from tupleset`: follow `object#tupleset` tuples to parents, evaluate `computed` there. */
  | { readonly kind: 'ttu'; readonly tupleset: string; readonly computed: string }
  | { readonly kind: 'union'; readonly children: readonly Rewrite[] }
  | { readonly kind: 'intersection'; readonly children: readonly Rewrite[] }
  | { readonly kind: 'difference'; readonly base: Rewrite; readonly subtract: Rewrite };

/** One entry of a relation's `directly_related_user_types`: `user`, `user:*`, `group#member`, each `with cond`. */
export interface DirectType {
  readonly type: string;
  /** Set for a userset restriction `type#relation`. */
  readonly relation?: string | undefined;
  /** True for a typed wildcard restriction `type:*`. */
  readonly wildcard: boolean;
  /** Condition name for `... with cond`; undefined when unconditioned. */
  readonly condition?: string | undefined;
}

export interface CompiledRelation {
  readonly name: string;
  readonly rewrite: Rewrite;
  readonly directTypes: readonly DirectType[];
  /** True when this relation is the `Y` of some `X from Y` on its type (subjects must be plain objects). */
  readonly isTupleset: boolean;
}

export interface CompiledType {
  readonly name: string;
  readonly relations: ReadonlyMap<string, CompiledRelation>;
}

export type ParamType =
  | { readonly kind: 'any' | 'bool' | 'string' | 'int' | 'uint' | 'double' | 'duration' | 'timestamp' | 'ipaddress' }
  | { readonly kind: 'map' | 'list'; readonly of: ParamType };

/** Outcome of evaluating one condition for one tuple. */
export type ConditionOutcome =
  | { readonly ok: true; readonly value: boolean }
  /** Evaluation failed (missing parameter, bad value, CEL runtime error, cost). `message` is the wire text. */
  | { readonly ok: false; readonly message: string };

export interface CompiledCondition {
  readonly name: string;
  readonly parameters: ReadonlyMap<string, ParamType>;
  readonly expression: string;
  /**
   * Evaluate with the request context overlaid by the tuple's stored context (tuple wins, §5.9.2).
   * Every declared parameter must be present after the merge, else `{ok:false}` naming the missing ones.
   * `tupleText` is `object#relation@user`, used only in the error message. Never throws.
   */
  evaluate(
    tupleContext: JsonObject | undefined,
    requestContext: JsonObject | undefined,
    tupleText: string,
  ): ConditionOutcome;
  /**
   * Convert and check a stored or contextual tuple's context at write time (§4.2 rule 7):
   * every key is a declared parameter and every value converts. Returns an error reason or undefined.
   */
  checkContext(context: JsonObject): string | undefined;
}

export interface CompiledModel {
  readonly id: string;
  readonly schemaVersion: '1.1' | '1.2';
  /** Types in model order. */
  readonly types: ReadonlyMap<string, CompiledType>;
  readonly conditions: ReadonlyMap<string, CompiledCondition>;
  /** The JSON the model was compiled from (as stored and returned by ReadAuthorizationModel). */
  readonly json: AuthorizationModel;
}
