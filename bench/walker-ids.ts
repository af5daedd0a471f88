// A bare walker on this thread for id-level benchmarks: requests are interned once up front, so a
// timed check is "write five words + one wasm call" — the cost the pool pays per item.

import { C, NONE, QUERY_WORDS } from '../src/abi.js';
import { memory, u32 } from '../src/index/memory.js';
import type { IndexSnapshot } from '../src/index/store-index.js';
import type { CompiledModel } from '../src/model/types.js';
import { programFor } from '../src/engine/walker/program.js';
import { Scratch, UNSEEN } from '../src/engine/walker/request.js';
import { instantiate, walkerModule, type WalkerExports } from '../src/engine/walker/wasm.js';

export interface Query {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
}

export class IdWalker {
  readonly ex: WalkerExports = instantiate(walkerModule(), memory);
  readonly scratch = new Scratch();
  constructor(readonly snapshot: IndexSnapshot, model: CompiledModel, depth = 25) {
    this.scratch.bind(snapshot, programFor(model, snapshot.dict), depth);
  }

  /** Interned query records (QUERY_WORDS u32 each). Objects must be known to the snapshot. */
  intern(qs: readonly Query[]): Uint32Array {
    const s = this.snapshot;
    const out = new Uint32Array(qs.length * QUERY_WORDS);
    qs.forEach((q, i) => {
      const hash = q.user.lastIndexOf('#');
      const un = hash === -1 ? q.user : q.user.slice(0, hash);
      out.set([
        s.nodeId(q.object) ?? NONE,
        s.dict.names.get(q.relation) ?? NONE,
        s.nodeId(un) ?? UNSEEN,
        hash === -1 ? 0 : (s.dict.names.get(q.user.slice(hash + 1)) ?? 0) + 1,
        hash === -1 && !un.endsWith(':*') ? (s.nodeId(un.slice(0, un.indexOf(':')) + ':*') ?? NONE) : NONE,
      ], i * QUERY_WORDS);
    });
    return out;
  }

  /** Status of query `i` of `q` (R_* codes). */
  check(q: Uint32Array, i: number): number {
    const m = u32();
    const c = this.scratch.ctx >>> 2;
    const o = i * QUERY_WORDS;
    m[c + C.OBJECT] = q[o] ?? 0;
    m[c + C.RELATION] = q[o + 1] ?? 0;
    m[c + C.SUBJECT] = q[o + 2] ?? 0;
    m[c + C.SUBJ_REL] = q[o + 3] ?? 0;
    m[c + C.WILD_NODE] = q[o + 4] ?? 0;
    return this.ex.check(this.scratch.ctx);
  }
}
