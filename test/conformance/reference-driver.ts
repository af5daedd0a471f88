// The direct conformance driver: an in-memory store (tuple list + compiled models) answering
// queries with the reference evaluator, with the request validation and per-API error codes of
// docs/reference/semantics.md §5.1, §6.1, §6.3 and Appendix A.3. Stands in for the service until openLatch exists.

import type { AuthorizationModelInput, TupleKey } from '../../src/domain/types.js';
import { AppError } from '../../src/errors.js';
import { evalCheck, listObjects, MemoryTupleView, overlayView, type EvalContext } from '../oracle/reference.js';
import { listUsers } from '../../src/engine/evaluation/list/list-users.js';
import type { ListedUser } from '../../src/engine/contract.js';
import { findTupleProblem } from '../../src/model/tuple-validation.js';
import {
  validateQueryKey,
  validateQueryTarget,
  validateQueryUser,
  validateUserFilter,
} from '../../src/model/query-validation.js';
import type { CompiledModel } from '../../src/model/types.js';
import type { ConformanceDriver, QueryOf, StoreDriver } from './engine.js';
import { compile } from '../reference/model.js';

/** Contextual tuples: 2027, except condition problems → 2000 where the API says so (A.3). */
function validateContextual(
  m: CompiledModel,
  tuples: readonly TupleKey[],
  conditionCode: 'invalid_tuple' | 'validation_error',
): void {
  for (const t of tuples) {
    const p = findTupleProblem(m, t, 'contextual');
    if (p) throw new AppError(p.conditionProblem ? conditionCode : 'invalid_tuple', p.message);
  }
}

class DirectStore implements StoreDriver {
  private readonly tuples: TupleKey[] = [];
  private readonly models = new Map<string, CompiledModel>();

  constructor(private readonly toJson: (dsl: string) => AuthorizationModelInput) {}

  private model(id: string): CompiledModel {
    const m = this.models.get(id);
    if (!m) throw new AppError('authorization_model_not_found', `model ${id} not found`);
    return m;
  }

  private ctx(m: CompiledModel, q: QueryOf<unknown>): EvalContext {
    const view = overlayView(new MemoryTupleView(this.tuples), q.contextualTuples);
    return { model: m, view, context: q.context, resolveDepth: 25, deadline: Date.now() + 3000 };
  }

  async writeModel(dsl: string): Promise<string> {
    const id = `model-${this.models.size}`;
    this.models.set(id, compile({ ...this.toJson(dsl), id } as AuthorizationModelInput));
    return id;
  }

  async write(modelId: string, tuples: readonly TupleKey[]): Promise<void> {
    const m = this.model(modelId);
    for (const t of tuples) {
      const p = findTupleProblem(m, t, 'write');
      if (p) throw new AppError('validation_error', p.message);
    }
    this.tuples.push(...tuples);
  }

  async check(modelId: string, q: QueryOf<{ user: string; relation: string; object: string }>): Promise<boolean> {
    const m = this.model(modelId);
    validateQueryKey(m, q.key, 'check');
    validateContextual(m, q.contextualTuples, 'invalid_tuple');
    return evalCheck(this.ctx(m, q), q.key.object, q.key.relation, q.key.user);
  }

  private validateListObjects(m: CompiledModel, q: QueryOf<{ user: string; type: string; relation: string }>): void {
    validateContextual(m, q.contextualTuples, 'validation_error');
    validateQueryTarget(m, q.key.type, q.key.relation, 'listObjects');
    validateQueryUser(m, q.key.user, 'listObjects');
  }

  async listObjects(modelId: string, q: QueryOf<{ user: string; type: string; relation: string }>): Promise<string[]> {
    const m = this.model(modelId);
    this.validateListObjects(m, q);
    return listObjects(this.ctx(m, q), q.key, 1000);
  }

  async streamedListObjects(
    modelId: string,
    q: QueryOf<{ user: string; type: string; relation: string }>,
  ): Promise<string[]> {
    const m = this.model(modelId);
    this.validateListObjects(m, q);
    const seen: string[] = [];
    listObjects(this.ctx(m, q), q.key, Infinity, (o) => seen.push(o));
    return seen;
  }

  async listUsers(
    modelId: string,
    q: QueryOf<{
      object: { type: string; id: string };
      relation: string;
      filters: { type: string; relation?: string }[];
    }>,
  ): Promise<ListedUser[]> {
    const m = this.model(modelId);
    validateContextual(m, q.contextualTuples, 'validation_error');
    const filter = q.key.filters[0];
    if (!filter || q.key.filters.length !== 1)
      throw new AppError('validation_error', 'exactly one user filter is required');
    validateUserFilter(m, filter);
    validateQueryTarget(m, q.key.object.type, q.key.relation, 'listUsers');
    const object = `${q.key.object.type}:${q.key.object.id}`;
    return listUsers(this.ctx(m, q), { object, relation: q.key.relation, filter }, 1000);
  }
}

/** A driver whose stores live in memory and whose queries run the reference evaluator. */
export function createReferenceDriver(toJson: (dsl: string) => AuthorizationModelInput): ConformanceDriver {
  return {
    async createStore(): Promise<StoreDriver> {
      return new DirectStore(toJson);
    },
  };
}
