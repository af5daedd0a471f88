// The AuthZEN 1.0 endpoints on every store (docs/reference/http-api.md §4.20–4.25), mapped onto Check,
// BatchCheck, ListUsers, StreamedListObjects and the model's relations as OpenFGA's experimental
// implementation maps them. Whole-request errors use latch's error body and status (a 400 with
// its message, as the spec's Transport section asks); per-item errors are embedded (§7.2.1).

import { nextTurn } from '../../domain/turn.js';
import type { AuthorizationModel, JsonObject } from '../../domain/types.js';
import type { CheckInput, ListedUser } from '../../engine/contract.js';
import { AppError } from '../../errors.js';
import { clientOf, endpoint, ok, type ApiRequest, type CallContext, type Endpoint } from '../endpoint.js';
import { bodyObject } from '../stores.js';
import { storeId, type Obj } from '../validate.js';
import { evaluate, parseEvaluations, type EvaluationsInput } from './evaluations.js';
import { reasonFor, wantsReason } from './reasons.js';
import {
  MODEL_HEADER,
  checkKeyOf,
  validatePage,
  contextOf,
  mergedContext,
  modelFromHeader,
  requiredAction,
  requiredResource,
  requiredResourceFilter,
  requiredSubject,
  requiredSubjectFilter,
  userOf,
  type Action,
  type Resource,
  type Subject,
  type TypeFilter,
} from './shapes.js';

const HEADERS = [MODEL_HEADER] as const;
const base = { method: 'post', headers: HEADERS, echoRequestId: true } as const;

/** One AuthZEN request's parts, validated; `S`, `R` and `A` say which parts are exact or filters. */
interface AccessInput<S, R, A> {
  readonly storeId: string;
  readonly modelId?: string | undefined;
  readonly subject: S;
  readonly resource: R;
  readonly action: A;
  readonly context?: JsonObject | undefined;
}

type Part<T> = (body: Obj, request: string) => T;
const noAction: Part<undefined> = () => undefined;

/** Parses a request's parts in the order errors are reported: store, subject, resource, action, page. */
function accessInput<S, R, A>(
  req: ApiRequest,
  request: string,
  subject: Part<S>,
  resource: Part<R>,
  action: Part<A>,
  paged: boolean,
): AccessInput<S, R, A> {
  const id = storeId(req.params.store_id, request);
  const body = bodyObject(req);
  const input = {
    storeId: id,
    modelId: modelFromHeader(req),
    subject: subject(body, request),
    resource: resource(body, request),
    action: action(body, request),
    context: contextOf(body),
  };
  if (paged) validatePage(body);
  return input;
}

const evaluation = endpoint<AccessInput<Subject, Resource, Action> & { readonly reason: boolean }>({
  ...base,
  name: 'Evaluation',
  op: 'evaluation',
  path: '/stores/:store_id/access/v1/evaluation',
  parse: (req) => ({
    ...accessInput(req, 'EvaluationRequest', requiredSubject, requiredResource, requiredAction, false),
    reason: wantsReason(bodyObject(req)),
  }),
  async handle(input, ctx) {
    const q: CheckInput = {
      storeId: input.storeId,
      modelId: input.modelId,
      tupleKey: checkKeyOf(input.subject, input.resource, input.action),
      contextualTuples: [],
      context: mergedContext(input.context, input.subject, input.resource, input.action),
      consistency: 'UNSPECIFIED',
    };
    const r = await ctx.latch.check(q);
    ctx.modelId = r.modelId;
    const d = ctx.decisions;
    if (d?.active) d.check(clientOf(ctx), 'Evaluation', q, r);
    if (!input.reason) return ok({ decision: r.allowed });
    return ok({ decision: r.allowed, context: { reason: await reasonFor(ctx, q, r) } });
  },
});

const evaluations = endpoint<EvaluationsInput>({
  ...base,
  name: 'Evaluations',
  op: 'evaluations',
  path: '/stores/:store_id/access/v1/evaluations',
  parse: (req) =>
    parseEvaluations(storeId(req.params.store_id, 'EvaluationsRequest'), modelFromHeader(req), bodyObject(req)),
  async handle(input, ctx) {
    return ok({ evaluations: await evaluate(input, ctx) });
  },
});

/** Concrete users and typed wildcards (`id: "*"`); usersets are not subjects and are left out. */
function subjectsOf(users: readonly ListedUser[]): { type: string; id: string }[] {
  const out: { type: string; id: string }[] = [];
  for (const u of users) {
    if ('object' in u) out.push({ type: u.object.type, id: u.object.id });
    else if ('wildcard' in u) out.push({ type: u.wildcard.type, id: '*' });
  }
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

const subjectSearch = endpoint<AccessInput<TypeFilter, Resource, Action>>({
  ...base,
  name: 'SubjectSearch',
  op: 'subject-search',
  path: '/stores/:store_id/access/v1/search/subject',
  parse: (req) =>
    accessInput(req, 'SubjectSearchRequest', requiredSubjectFilter, requiredResource, requiredAction, true),
  async handle(input, ctx) {
    const r = await ctx.latch.listUsers({
      storeId: input.storeId,
      modelId: input.modelId,
      object: { type: input.resource.type, id: input.resource.id },
      relation: input.action.name,
      userFilters: [{ type: input.subject.type }],
      contextualTuples: [],
      context: mergedContext(input.context, input.subject, input.resource, input.action),
      consistency: 'UNSPECIFIED',
    });
    ctx.modelId = r.modelId;
    return ok({ results: subjectsOf(r.users) });
  },
});

const resourceSearch = endpoint<AccessInput<Subject, TypeFilter, Action>>({
  ...base,
  name: 'ResourceSearch',
  op: 'resource-search',
  path: '/stores/:store_id/access/v1/search/resource',
  parse: (req) =>
    accessInput(req, 'ResourceSearchRequest', requiredSubject, requiredResourceFilter, requiredAction, true),
  async handle(input, ctx) {
    // StreamedListObjects, collected: every object found before the deadline (no 1000 cap).
    const user = userOf(input.subject);
    ctx.modelId = input.modelId ?? (await ctx.latch.listModels(input.storeId, { pageSize: 1 })).items[0]?.id;
    const objects: string[] = [];
    const stream = ctx.latch.streamedListObjects(
      {
        storeId: input.storeId,
        modelId: ctx.modelId,
        type: input.resource.type,
        relation: input.action.name,
        user,
        contextualTuples: [],
        context: mergedContext(input.context, input.subject, input.resource, input.action),
        consistency: 'UNSPECIFIED',
      },
      ctx.signal,
    );
    for await (const o of stream) objects.push(o);
    objects.sort();
    const type = input.resource.type;
    return ok({ results: objects.map((o) => ({ type, id: o.slice(o.indexOf(':') + 1) })) });
  },
});

/** The model the request names, or the store's latest (latest_authorization_model_not_found without one). */
async function modelOf(ctx: CallContext, store: string, modelId: string | undefined): Promise<AuthorizationModel> {
  if (modelId) return ctx.latch.readModel(store, modelId);
  const latest = (await ctx.latch.listModels(store, { pageSize: 1 })).items[0];
  if (!latest)
    throw new AppError('latest_authorization_model_not_found', `No authorization models found for store '${store}'`);
  return latest;
}

const actionSearch = endpoint<AccessInput<Subject, Resource, undefined>>({
  ...base,
  name: 'ActionSearch',
  op: 'action-search',
  path: '/stores/:store_id/access/v1/search/action',
  parse: (req) => accessInput(req, 'ActionSearchRequest', requiredSubject, requiredResource, noAction, true),
  async handle(input, ctx) {
    const model = await modelOf(ctx, input.storeId, input.modelId);
    ctx.modelId = model.id;
    const type = model.type_definitions.find((t) => t.type === input.resource.type);
    if (!type)
      throw new AppError(
        'validation_error',
        `failed to get relations for type ${input.resource.type}: type '${input.resource.type}' not found`,
      );
    const names = Object.keys(type.relations ?? {}).sort();
    const context = mergedContext(input.context, input.subject, input.resource, input.action);
    const permitted: { name: string }[] = [];
    // One Check per relation, all under ONE deadline for the request, yielding to the event loop
    // between relations: a type with many relations, or relations costly to walk, never holds
    // the loop for more than one relation's walk. A relation whose check fails (its own error,
    // or the deadline spent) is left out, as OpenFGA leaves it out.
    const deadline = Date.now() + ctx.latch.config.checkDeadlineMs;
    for (let i = 0; i < names.length; i++) {
      if (i > 0) await nextTurn();
      if (Date.now() >= deadline) break;
      const name = names[i] as string;
      try {
        const r = await ctx.latch.check({
          storeId: input.storeId,
          modelId: model.id,
          tupleKey: checkKeyOf(input.subject, input.resource, { name }),
          contextualTuples: [],
          context,
          consistency: 'UNSPECIFIED',
          deadline,
        });
        if (r.allowed) permitted.push({ name });
      } catch (err) {
        if (!(err instanceof AppError) || err.status >= 500) throw err;
      }
    }
    return ok({ results: permitted });
  },
});

/** `GET /.well-known/authzen-configuration/{store_id}`: the store's PDP metadata (spec §9). */
const getConfiguration = endpoint<{ storeId: string; host: string | undefined }>({
  name: 'GetConfiguration',
  op: 'get-configuration',
  method: 'get',
  path: '/.well-known/authzen-configuration/:store_id',
  headers: ['host'],
  echoRequestId: true,
  parse: (req) => ({ storeId: storeId(req.params.store_id, 'GetConfigurationRequest'), host: req.headers?.['host'] }),
  async handle(input, ctx) {
    await ctx.latch.getStore(input.storeId);
    const origin = ctx.authzenBaseUrl ?? (input.host ? `http://${input.host}` : undefined);
    if (origin === undefined)
      throw new AppError('failed_precondition', 'AuthZEN base URL is not configured: set --authzen-base-url');
    const pdp = `${origin}/stores/${input.storeId}`;
    // `capabilities` would be empty, and the spec omits parameters with zero values.
    return ok({
      policy_decision_point: pdp,
      access_evaluation_endpoint: `${pdp}/access/v1/evaluation`,
      access_evaluations_endpoint: `${pdp}/access/v1/evaluations`,
      search_subject_endpoint: `${pdp}/access/v1/search/subject`,
      search_resource_endpoint: `${pdp}/access/v1/search/resource`,
      search_action_endpoint: `${pdp}/access/v1/search/action`,
    });
  },
});

export const AUTHZEN_ENDPOINTS: readonly Endpoint[] = [
  evaluation,
  evaluations,
  subjectSearch,
  resourceSearch,
  actionSearch,
  getConfiguration,
];
