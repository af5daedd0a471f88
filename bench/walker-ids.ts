// A bare walker on this thread for id-level benchmarks: requests are interned once up front, so a
// timed check is "write five words + one wasm call" — the cost the pool pays per item.

import { C, QUERY_WORDS } from '../src/abi.js';
import { memory, u32 } from '../src/index/memory.js';
import type { IndexSnapshot } from '../src/index/store-index.js';
import type { CompiledModel } from '../src/model/types.js';
import { programFor, type Program } from '../src/engine/evaluation/walker/program.js';
import { encodeQuery, Scratch } from '../src/engine/evaluation/walker/request.js';
import { instantiate, walkerModule, type WalkerExports } from '../src/engine/evaluation/walker/wasm.js';

export interface Query {
  readonly object: string;
  readonly relation: string;
  readonly user: string;
}

export class IdWalker {
  readonly ex: WalkerExports = instantiate(walkerModule(), memory);
  readonly scratch = new Scratch();
  readonly program: Program;
  constructor(
    readonly snapshot: IndexSnapshot,
    model: CompiledModel,
    depth = 25,
  ) {
    this.program = programFor(model, snapshot.dict);
    this.scratch.bind(snapshot, this.program, depth);
  }

  /** Interned query records (QUERY_WORDS u32 each). Objects must be known to the snapshot. */
  intern(qs: readonly Query[]): Uint32Array {
    const out = new Uint32Array(qs.length * QUERY_WORDS);
    qs.forEach((q, i) => {
      if (!encodeQuery(this.snapshot, this.program, q.object, q.relation, q.user, out, i * QUERY_WORDS))
        throw new Error(`unknown object ${q.object}`);
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
    m[c + C.SUBJ_KIND] = q[o + 5] ?? 0;
    return this.ex.check(this.scratch.ctx);
  }
}
