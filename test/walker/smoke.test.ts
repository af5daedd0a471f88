import { describe, expect, it } from 'vitest';
import { answer, index, model } from './helpers.js';

describe('smoke', () => {
  it('direct', () => {
    const m = model(`model
  schema 1.1
type user
type doc
  relations
    define viewer: [user]
`);
    const ix = index(['doc:1#viewer@user:anne']);
    expect(answer(ix, m, 'doc:1#viewer@user:anne')).toBe('true');
    expect(answer(ix, m, 'doc:1#viewer@user:bob')).toBe('false');
    expect(answer(ix, m, 'doc:2#viewer@user:anne')).toBe('false');
  });
});
