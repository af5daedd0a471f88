// Authorization model and assertion endpoints (docs/reference/http-api.md §4.6–4.10). Only the proto-level shape
// is checked here; the service validates model semantics (docs/reference/decisions.md D5) and assertions against the model.

import type { Assertion, AuthorizationModelInput, TypeDefinitionJson, UsersetJson } from '../domain/types.js';
import { MAX_VALUE_DEPTH, deeperThan } from '../domain/depth.js';
import { AppError } from '../errors.js';
import { NO_CONTENT, endpoint, ok, type Endpoint } from './endpoint.js';
import { assertionKey, tupleKeyList } from './tuple-key-parsers.js';
import { assertionOut, modelOut } from './render.js';
import { bodyObject } from './stores.js';
import {
  P,
  REASON,
  bool,
  isObj,
  keyViolation,
  list,
  match,
  optMessage,
  pageSize,
  storeId,
  str,
  struct,
  tokenText,
  tooDeep,
  typeError,
  violation,
  type Obj,
} from './validate.js';

const MAX_TYPES = 100;
const MAX_CONDITIONS = 25;
const MAX_ASSERTIONS = 100;
const MAX_ASSERTION_TUPLES = 20;
const SCHEMA_VERSIONS = new Set(['1.0', '1.1', '1.2']);

interface ModelsPageInput {
  readonly storeId: string;
  readonly pageSize: number;
  readonly token: string;
}

const readModels = endpoint<ModelsPageInput>({
  name: 'ReadAuthorizationModels',
  op: 'read-authorization-models',
  method: 'get',
  path: '/stores/:store_id/authorization-models',
  parse(req) {
    const id = storeId(req.params.store_id, 'ReadAuthorizationModelsRequest');
    const size = pageSize(req.query('page_size'), 'ReadAuthorizationModelsRequest');
    return {
      storeId: id,
      pageSize: size,
      token: tokenText(req.query('continuation_token'), 'ReadAuthorizationModelsRequest'),
    };
  },
  async handle(input, ctx) {
    const after = input.token ? ctx.tokens.decode('models', input.storeId, input.token).cursor : undefined;
    const page = await ctx.latch.listModels(input.storeId, { pageSize: input.pageSize, after });
    const token = page.next
      ? ctx.tokens.encode('models', { storeId: input.storeId, filter: '', cursor: page.next })
      : '';
    return ok({ authorization_models: page.items.map(modelOut), continuation_token: token });
  },
});

/** Rewrite nodes accept both json names and proto names (`computedUserset` / `computed_userset`). */
function userset(v: unknown, field: string): UsersetJson {
  if (!isObj(v)) throw typeError(field, 'message', v);
  const cu = v.computedUserset ?? v.computed_userset;
  const ttu = v.tupleToUserset ?? v.tuple_to_userset;
  if (v.this !== undefined && v.this !== null) return { this: {} };
  if (isObj(cu)) return { computedUserset: cu };
  if (isObj(ttu)) {
    const tupleset = isObj(ttu.tupleset) ? ttu.tupleset : {};
    const computed = ttu.computedUserset ?? ttu.computed_userset;
    return { tupleToUserset: { tupleset, computedUserset: isObj(computed) ? computed : {} } };
  }
  for (const op of ['union', 'intersection'] as const) {
    const u = v[op];
    if (isObj(u)) return { [op]: { child: list(u, 'child').map((c) => userset(c, 'child')) } };
  }
  if (isObj(v.difference)) {
    const d = v.difference;
    if (d.base === undefined || d.base === null) throw violation('Difference', 'Base', REASON.required);
    if (d.subtract === undefined || d.subtract === null) throw violation('Difference', 'Subtract', REASON.required);
    return { difference: { base: userset(d.base, 'base'), subtract: userset(d.subtract, 'subtract') } };
  }
  return {};
}

function typeDefinition(v: unknown): TypeDefinitionJson {
  if (!isObj(v)) throw typeError('type_definitions', 'message', v);
  const type = match(str(v, 'type'), P.type, 'TypeDefinition', 'Type');
  const relations: Record<string, UsersetJson> = {};
  const rel = optMessage(v, 'relations') ?? {};
  for (const [name, rewrite] of Object.entries(rel)) {
    if (!P.relation.test(name)) throw keyViolation('TypeDefinition', 'Relations', name, REASON.regex(P.relation));
    relations[name] = userset(rewrite, 'relations');
  }
  const metadata = optMessage(v, 'metadata');
  return metadata ? { type, relations, metadata } : { type, relations };
}

/** WriteAuthorizationModelRequest: type_definitions (2), schema_version (3), conditions (4). */
function modelInput(body: Obj): AuthorizationModelInput {
  // Rewrites are read recursively and metadata and conditions are kept as sent: the whole body is
  // bounded first (a model write is rare; its body is walked once more, iteratively).
  if (deeperThan(body, MAX_VALUE_DEPTH)) throw tooDeep('WriteAuthorizationModelRequest');
  const defs = list(body, 'type_definitions');
  if (defs.length === 0) throw violation('WriteAuthorizationModelRequest', 'TypeDefinitions', REASON.atLeastOne);
  const typeDefinitions = defs.map(typeDefinition);
  const version = str(body, 'schema_version');
  if (!SCHEMA_VERSIONS.has(version)) {
    throw violation('WriteAuthorizationModelRequest', 'SchemaVersion', 'value must be in list [1.0 1.1 1.2]');
  }
  const conditions = optMessage(body, 'conditions') ?? {};
  const names = Object.keys(conditions);
  if (names.length > MAX_CONDITIONS) {
    throw violation(
      'WriteAuthorizationModelRequest',
      'Conditions',
      `value must contain no more than ${MAX_CONDITIONS} pair(s)`,
    );
  }
  for (const name of names) {
    if (!P.relation.test(name))
      throw keyViolation('WriteAuthorizationModelRequest', 'Conditions', name, REASON.regex(P.relation));
  }
  if (typeDefinitions.length > MAX_TYPES) {
    throw new AppError(
      'exceeded_entity_limit',
      `The number of type definitions in an authorization model exceeds the allowed limit of ${MAX_TYPES}`,
    );
  }
  const model: AuthorizationModelInput = { schema_version: version, type_definitions: typeDefinitions };
  if (names.length > 0) model.conditions = conditions as AuthorizationModelInput['conditions'];
  return model;
}

const writeModel = endpoint<{ storeId: string; model: AuthorizationModelInput }>({
  name: 'WriteAuthorizationModel',
  op: 'write-authorization-model',
  method: 'post',
  path: '/stores/:store_id/authorization-models',
  parse(req) {
    const id = storeId(req.params.store_id, 'WriteAuthorizationModelRequest');
    return { storeId: id, model: modelInput(bodyObject(req)) };
  },
  async handle(input, ctx) {
    const id = await ctx.latch.writeModel(input.storeId, input.model);
    return ok({ authorization_model_id: id }, 201);
  },
});

const readModel = endpoint<{ storeId: string; id: string }>({
  name: 'ReadAuthorizationModel',
  op: 'read-authorization-model',
  method: 'get',
  path: '/stores/:store_id/authorization-models/:id',
  parse(req) {
    const store = storeId(req.params.store_id, 'ReadAuthorizationModelRequest');
    return { storeId: store, id: match(req.params.id ?? '', P.ulid, 'ReadAuthorizationModelRequest', 'Id') };
  },
  async handle(input, ctx) {
    return ok({ authorization_model: modelOut(await ctx.latch.readModel(input.storeId, input.id)) });
  },
});

interface AssertionsInput {
  readonly storeId: string;
  readonly modelId: string;
  readonly assertions: readonly Assertion[];
}

function assertionsPath(
  params: Readonly<Record<string, string | undefined>>,
  message: string,
): { storeId: string; modelId: string } {
  const store = storeId(params.store_id, message);
  return {
    storeId: store,
    modelId: match(params.authorization_model_id ?? '', P.ulid, message, 'AuthorizationModelId'),
  };
}

const readAssertions = endpoint<AssertionsInput>({
  name: 'ReadAssertions',
  op: 'read-assertions',
  method: 'get',
  path: '/stores/:store_id/assertions/:authorization_model_id',
  parse: (req) => ({ ...assertionsPath(req.params, 'ReadAssertionsRequest'), assertions: [] }),
  async handle(input, ctx) {
    const assertions = await ctx.latch.readAssertions(input.storeId, input.modelId);
    ctx.modelId = input.modelId;
    return ok({ authorization_model_id: input.modelId, assertions: assertions.map(assertionOut) });
  },
});

function assertion(v: unknown): Assertion {
  if (!isObj(v)) throw typeError('assertions', 'message', v);
  const tupleKey = assertionKey(v);
  const expectation = bool(v, 'expectation');
  const tuples = tupleKeyList(v, 'contextual_tuples', 'Assertion', 'ContextualTuples', MAX_ASSERTION_TUPLES);
  const context = struct(v, 'context');
  const out: { -readonly [K in keyof Assertion]: Assertion[K] } = { tuple_key: tupleKey, expectation };
  if (tuples.length > 0) out.contextual_tuples = [...tuples];
  if (context !== undefined) out.context = context;
  return out;
}

const writeAssertions = endpoint<AssertionsInput>({
  name: 'WriteAssertions',
  op: 'write-assertions',
  method: 'put',
  path: '/stores/:store_id/assertions/:authorization_model_id',
  parse(req) {
    const path = assertionsPath(req.params, 'WriteAssertionsRequest');
    const items = list(bodyObject(req), 'assertions');
    if (items.length > MAX_ASSERTIONS)
      throw violation('WriteAssertionsRequest', 'Assertions', REASON.atMost(MAX_ASSERTIONS));
    return { ...path, assertions: items.map(assertion) };
  },
  async handle(input, ctx) {
    await ctx.latch.writeAssertions(input.storeId, input.modelId, input.assertions);
    ctx.modelId = input.modelId;
    return NO_CONTENT;
  },
});

export const MODEL_ENDPOINTS: readonly Endpoint[] = [
  readModels,
  writeModel,
  readModel,
  readAssertions,
  writeAssertions,
];
