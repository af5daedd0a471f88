// The ABI shared with the host (mirrored by src/abi.ts): word offsets of the headers the host
// lays out in linear memory, record formats, opcodes and statuses. Numbers only; no data segment.

// ---- statuses (also the internal three-valued results; >= ERR_COND are errors) ----
export const R_FALSE: i32 = 0;
export const R_TRUE: i32 = 1;
/** FALSE carrying the cycle flag (semantics §5.3, §5.10). */
export const R_CYCLE: i32 = 2;
/** A condition could not be evaluated (missing parameter, CEL error). */
export const R_ERR_COND: i32 = 3;
/** The resolution depth limit was reached. */
export const R_ERR_DEPTH: i32 = 4;
/** The condition evaluator is not available in this thread: the host re-runs the item inline. */
export const R_ERR_NEEDHOST: i32 = 5;
/** The per-call scratch arena is too small. */
export const R_ERR_OVERFLOW: i32 = 6;
/** The call exceeded its evaluation step budget (semantics D8: complexity budget). */
export const R_ERR_BUDGET: i32 = 8;

// ---- snapshot header (u32 words) ----
export const S_NODE_COUNT: i32 = 0; // nodes typed by S_NODE_TYPE (base + overlay-interned)
export const S_NODE_TYPE: i32 = 1; // ptr u32[nodeCount]: type name id | WILDCARD_BIT
export const S_BASE_NODES: i32 = 2; // nodes covered by the forward CSR
export const S_FWD_NODE: i32 = 3; // ptr u32[baseNodes+1]: first key index of each node
export const S_FWD_KEY: i32 = 4; // ptr (rel u32, firstEntry u32)[keys+1] (sentinel last)
export const S_FWD_ENT: i32 = 5; // ptr (subject u32, meta u32)[entries] sorted by (meta&SR_MASK, subject)
export const S_ADD_COUNT: i32 = 6; // overlay adds: records (obj, rel, subj, meta) sorted
export const S_ADD_PTR: i32 = 7;
export const S_DEL_COUNT: i32 = 8; // overlay deletes masking base entries, same record format
export const S_DEL_PTR: i32 = 9;
export const S_COND_COUNT: i32 = 10; // condition bindings: u32[condCount] → condition name id
export const S_COND_NAME: i32 = 11;
export const S_COND_EXPIRY: i32 = 12; // ptr u64[condCount]: expiry of each binding in ms since the epoch, 0 = never
export const S_WORDS: i32 = 16;

export const WILDCARD_BIT: u32 = 0x80000000;
/** meta = subjRel | cond << COND_SHIFT; subjRel = 0 for an object or wildcard, else relation id + 1. */
export const SR_MASK: u32 = 0xfff;
export const COND_SHIFT: u32 = 12;

// ---- per-call context (u32 words), written by the host into the call's scratch ----
export const C_OBJECT: i32 = 0;
export const C_RELATION: i32 = 1;
export const C_SUBJECT: i32 = 2; // node id (temporary ids >= nodeCount for unseen strings)
export const C_SUBJ_REL: i32 = 3; // 0 = object or wildcard, else relation id + 1
export const C_WILD_NODE: i32 = 4; // node of `type(subject):*`, or NONE
export const C_DEPTH_LIMIT: i32 = 5;
export const C_CTX_COUNT: i32 = 6; // contextual tuples: records like overlay adds, sorted
export const C_CTX_PTR: i32 = 7;
export const C_TEMP_COUNT: i32 = 8; // temporary nodes: u32 types after the snapshot's nodes
export const C_TEMP_TYPES: i32 = 9;
export const C_HANDLE: i32 = 10; // opaque request-context handle passed to evalCondition
export const C_MEMO_PTR: i32 = 11; // memo hash table: MEMO_SLOT-byte slots
export const C_MEMO_CAP: i32 = 12; // power of two
export const C_PATH_PTR: i32 = 13; // path stack: (node, rel) pairs
export const C_PATH_CAP: i32 = 14;
export const C_SNAPSHOT: i32 = 15;
export const C_PROGRAM: i32 = 16;
export const C_TCOND_COUNT: i32 = 17; // temporary condition bindings (contextual tuples), ids from condCount
export const C_TCOND_NAME: i32 = 18; // ptr u32[]: condition name id per temporary binding
export const C_SUBJ_KIND: i32 = 19; // dense subject-kind index (program), NONE when the model has none
export const C_NOW_LO: i32 = 20; // the request's instant (ms since the epoch, u64 in two words): a binding
export const C_NOW_HI: i32 = 21; //   whose expiry is at or before it grants nothing
export const C_DEPTH: i32 = 22; // written by `check`: the call's resolution depth (deepest hop)
export const C_WORDS: i32 = 23;
export const NONE: u32 = 0xffffffff;
export const MEMO_SLOT: i32 = 16; // (node, rel+1, result, height)

// ---- program header (u32 words) ----
export const P_STRIDE: i32 = 0; // name ids known to the program; tables are types × stride
export const P_TYPES: i32 = 1; // types of the model
export const P_REWRITE: i32 = 2; // ptr u32[types*stride]: rewrite node ptr or 0
export const P_DIRECT: i32 = 3; // ptr u32[types*stride]: restriction list ptr or 0
export const P_TYPEMAP: i32 = 4; // ptr u32[stride]: name id → type slot, NONE when not a type
export const P_REACH: i32 = 5; // ptr u32[types*stride*reachWords]: subject kinds that can reach type#rel
export const P_REACH_WORDS: i32 = 6;
export const P_HEIGHT: i32 = 7; // reserved (0)
export const P_WORDS: i32 = 8;

// ---- rewrite opcodes: node = [op, ...] ----
export const OP_THIS: u32 = 1; // [op, restrictionListPtr]
export const OP_COMPUTED: u32 = 2; // [op, rel]
export const OP_TTU: u32 = 3; // [op, tuplesetRel, computedRel]
export const OP_UNION: u32 = 4; // [op, n, childPtr × n]
export const OP_INTERSECTION: u32 = 5; // [op, n, childPtr × n]
export const OP_DIFFERENCE: u32 = 6; // [op, basePtr, subtractPtr]
/** Condition name id of a binding that only carries an expiry (no condition). */
export const NO_COND_NAME: u32 = 0xffffffff;
// restriction list = [n, (type, form, condName+1) × n]; form 0 object, 1 wildcard, 2+rel userset
