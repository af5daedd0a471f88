// `latch test --candidate`: a Target whose stores are prepared as the store file says (its model,
// then its tuples, accepted by that model), after which the candidate model is written as the
// store's latest and every query is answered under it. Tuples the candidate no longer accepts
// are then ignored at read time, exactly as they would be once the candidate shipped.
// Example: a file whose model has `viewer: [user, group#member]` and a candidate with
//   `viewer: [user]`: the file's `group#member` viewer tuples load, then grant nothing.

import type { AuthorizationModelInput } from '../domain/types.js';
import type { Target } from './target.js';

export function candidateTarget(inner: Target, candidate: AuthorizationModelInput): Target {
  return {
    ...inner,
    async setup(name, model, tuples) {
      const ids = await inner.setup(name, model, tuples);
      return { ...ids, modelId: await inner.writeModel(ids, candidate) };
    },
  };
}
