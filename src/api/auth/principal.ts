// Who is calling, as established by authentication: the client id, the store its credential is
// bound to and its scopes. Authorization (`authorize`) decides per operation from this alone.
// Example: {clientId: 'c1', storeId: '01J…', scopes: {check:tuples}} may Check on 01J… only.

import { AppError } from '../../errors.js';
import { OPERATIONS, type Operation, type OperationRule, type Scope } from './operations.js';

export interface Principal {
  /** Client id (tokens: `sub`), `anonymous` in mode none, the key's name for pre-shared keys. */
  readonly clientId: string;
  /**
   * Store binding: a store id, `*` (account-level: every store), or undefined (the credential
   * names no store: refused on store-scoped operations with missing_store_in_bearer_token).
   */
  readonly storeId: string | undefined;
  /** Granted scopes; `all` for mode none and unrestricted pre-shared keys. */
  readonly scopes: ReadonlySet<string> | 'all';
  /** Unix ms after which the credential is no longer valid (Infinity: never). */
  readonly expiresAt: number;
  /** Key id of the token's signing key (client-credentials and oidc), for cache purges. */
  readonly kid?: string | undefined;
}

export const ANONYMOUS: Principal = Object.freeze({
  clientId: 'anonymous',
  storeId: '*',
  scopes: 'all',
  expiresAt: Infinity,
});

function hasScope(p: Principal, scope: Scope): boolean {
  return p.scopes === 'all' || p.scopes.has(scope);
}

/**
 * The authorization decision of docs/reference/decisions.md D1/D3 for an authenticated principal, in this order:
 * store binding (401 missing_store_in_bearer_token, 403 store_mismatch_in_bearer_token, whether or
 * not the other store exists), then the scope (403 insufficient_permissions). Store-less
 * operations (ListStores, CreateStore) need an account-level principal: a store-bound token
 * must not list or create other stores.
 */
export function authorize(p: Principal, op: Operation, storeId: string | undefined): void {
  const rule: OperationRule = OPERATIONS[op];
  if (p.storeId === undefined) {
    throw new AppError('missing_store_in_bearer_token', 'the bearer token is not bound to a store');
  }
  if (rule.storeScoped) {
    if (p.storeId !== '*' && p.storeId !== storeId) {
      throw new AppError('store_mismatch_in_bearer_token', 'the bearer token is bound to another store');
    }
  } else if (p.storeId !== '*') {
    throw new AppError(
      'insufficient_permissions',
      `${op} needs an account-level client; this token is bound to one store`,
    );
  }
  if (rule.accountLevel && p.storeId !== '*') {
    throw new AppError(
      'insufficient_permissions',
      `${op} needs an account-level client; this token is bound to one store`,
    );
  }
  if (rule.scope !== null && !hasScope(p, rule.scope)) {
    throw new AppError('insufficient_permissions', `${op} needs the scope '${rule.scope}'`);
  }
}
