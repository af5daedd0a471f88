// The host's mirror of assembly/abi.ts: statuses, header word offsets, record formats and opcodes
// of the walker ABI. test/walker/abi.test.ts fails when the two differ; the walker checks
// ABI_VERSION at load.

export const ABI_VERSION = 5;

export const R_FALSE = 0;
export const R_TRUE = 1;
export const R_CYCLE = 2;
export const R_ERR_COND = 3;
export const R_ERR_DEPTH = 4;
export const R_ERR_NEEDHOST = 5;
export const R_ERR_OVERFLOW = 6;
/** Host-only: the worker running the item trapped or died. */
export const R_ERR_INTERNAL = 7;
/** The call exceeded its evaluation step budget (docs/reference/decisions.md D8: 422 throttled_timeout_error). */
export const R_ERR_BUDGET = 8;

/** Snapshot header words. */
export const S = {
  NODE_COUNT: 0,
  NODE_TYPE: 1,
  BASE_NODES: 2,
  FWD_NODE: 3,
  FWD_KEY: 4,
  FWD_ENT: 5,
  ADD_COUNT: 6,
  ADD_PTR: 7,
  DEL_COUNT: 8,
  DEL_PTR: 9,
  COND_COUNT: 10,
  COND_NAME: 11,
  /** ptr u64[condCount]: each binding's expiry in ms since the epoch, 0 = never. */
  COND_EXPIRY: 12,
  WORDS: 16,
} as const;

export const WILDCARD_BIT = 0x80000000;
export const SR_MASK = 0xfff;
export const COND_SHIFT = 12;
/** Largest name id usable as a userset relation (subjRel = id + 1 must fit SR_MASK). */
export const MAX_NAMES = SR_MASK - 1;
/** Condition name id of a binding that only carries an expiry (`expires_at` without a condition). */
export const NO_COND_NAME = 0xffffffff;
/** Largest condition binding id (20 bits above COND_SHIFT). */
export const MAX_CONDS = 0xfffff;

/** Per-call context words. Word C.WORDS holds the memo epoch. */
export const C = {
  OBJECT: 0,
  RELATION: 1,
  SUBJECT: 2,
  SUBJ_REL: 3,
  WILD_NODE: 4,
  DEPTH_LIMIT: 5,
  CTX_COUNT: 6,
  CTX_PTR: 7,
  TEMP_COUNT: 8,
  TEMP_TYPES: 9,
  HANDLE: 10,
  MEMO_PTR: 11,
  MEMO_CAP: 12,
  PATH_PTR: 13,
  PATH_CAP: 14,
  SNAPSHOT: 15,
  PROGRAM: 16,
  TCOND_COUNT: 17,
  TCOND_NAME: 18,
  SUBJ_KIND: 19,
  /** The request's instant, ms since the epoch as a u64 (low, high word): bindings expired at it grant nothing. */
  NOW_LO: 20,
  NOW_HI: 21,
  /** Written by the walker's `check`: the call's resolution depth (deepest hop), read for metrics. */
  DEPTH: 22,
  WORDS: 23,
} as const;
export const NONE = 0xffffffff;
/** A node id no tuple mentions: strings unknown to the snapshot and to the request (their answers need no id). */
export const UNSEEN_NODE = 0xfffffffe;
export const MEMO_SLOT = 16;
/** Batch query record: (object, relation, subject, subjRel, wildNode, subjKind). */
export const QUERY_WORDS = 6;

export const P = {
  STRIDE: 0,
  TYPES: 1,
  REWRITE: 2,
  DIRECT: 3,
  TYPEMAP: 4,
  REACH: 5,
  REACH_WORDS: 6,
  HEIGHT: 7,
  WORDS: 8,
} as const;

export const OP_THIS = 1;
export const OP_COMPUTED = 2;
export const OP_TTU = 3;
export const OP_UNION = 4;
export const OP_INTERSECTION = 5;
export const OP_DIFFERENCE = 6;

/** Restriction forms: object, wildcard, userset (2 + relation id). */
export const FORM_OBJECT = 0;
export const FORM_WILDCARD = 1;
export const FORM_USERSET = 2;
