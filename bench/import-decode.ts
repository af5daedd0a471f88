// The main thread's CPU per tuple before the storage step of a bulk import: an NDJSON chunk's
// decode (`decodeBody`), the ImportTuples endpoint's parse (a TupleKey per line) and the engine's
// validation (`validateImport`: duplicates, the model's rules), over the NDJSON file bench/import.ts
// makes (`/tmp/latch-import-<N>.ndjson`; run that bench once at the size first), in chunks as the
// CLI sends them. CPU from process.cpuUsage per phase, the best of `--rounds` passes; the chunks'
// tuples are kept until the pass ends (the server's index keeps them), so GC is counted as it falls.
//
//   npx tsx bench/import-decode.ts --tuples 1000000 --chunk 50000 --rounds 3

import { readFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { IMPORT_EXPORT_ENDPOINTS } from '../src/api/import-export.js';
import type { TupleKey } from '../src/domain/types.js';
import { validateImport } from '../src/engine/commands/import-tuples.js';
import type { ImportTuplesInput } from '../src/engine/contract.js';
import { decodeBody } from '../src/http/body.js';
import { compileModel } from '../src/model/compile.js';
import { dslToModel } from '../src/model/dsl.js';
import { validateModel } from '../src/model/validate.js';
import { DSL } from './import-model.js';

const { values } = parseArgs({
  options: {
    tuples: { type: 'string', default: '1000000' },
    chunk: { type: 'string', default: '50000' },
    rounds: { type: 'string', default: '3' },
  },
});
const N = Number(values.tuples);
const CHUNK = Number(values.chunk);
const file = readFileSync(`/tmp/latch-import-${N}.ndjson`);
/** The file's tuples (its `.count`: the generator may make a few less than N). */
const LINES = Number(readFileSync(`/tmp/latch-import-${N}.ndjson.count`, 'utf8'));

/** The file's chunks of CHUNK lines, as the bytes of their bodies. */
const chunks: Uint8Array[] = [];
for (let from = 0, lines = 0, i = 0; i <= file.length; i++) {
  if (i < file.length && file[i] !== 0x0a) continue;
  if (++lines === CHUNK || i === file.length) {
    if (i > from) chunks.push(new Uint8Array(file.subarray(from, Math.min(i + 1, file.length))));
    from = i + 1;
    lines = 0;
  }
}

const model = compileModel({ id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', ...validateModel(dslToModel(DSL)) });
const endpoint = IMPORT_EXPORT_ENDPOINTS.find((e) => e.name === 'ImportTuples');
if (!endpoint) throw new Error('no ImportTuples endpoint');
const STORE = '01ARZ3NDEKTSV4RRFFQ69G5FAW';

const cpu = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Pass {
  decode: number;
  parse: number;
  validate: number;
  total: number;
}

async function pass(): Promise<Pass> {
  const kept: TupleKey[][] = [];
  const p: Pass = { decode: 0, parse: 0, validate: 0, total: 0 };
  const now = Date.now();
  const start = cpu();
  for (const bytes of chunks) {
    const t0 = cpu();
    const body = decodeBody(bytes, 'ndjson');
    const t1 = cpu();
    const input = endpoint!.parse({
      params: { store_id: STORE },
      query: () => undefined,
      body,
      headers: {},
    }) as ImportTuplesInput;
    const t2 = cpu();
    await validateImport(model, input.tuples, now);
    const t3 = cpu();
    p.decode += t1 - t0;
    p.parse += t2 - t1;
    p.validate += t3 - t2;
    kept.push(input.tuples as TupleKey[]);
  }
  p.total = cpu() - start;
  if (kept.reduce((n, k) => n + k.length, 0) !== LINES) throw new Error('tuple count differs from the file');
  return p;
}

const us = (ms: number): string => ((ms * 1000) / LINES).toFixed(3);
let best: Pass | undefined;
for (let r = 0; r < Number(values.rounds); r++) {
  const p = await pass();
  console.log(
    `round ${r + 1}: us/tuple decode ${us(p.decode)} parse ${us(p.parse)} validate ${us(p.validate)} ` +
      `total ${us(p.total)} (load ${loadavg()[0]!.toFixed(2)})`,
  );
  if (!best || p.total < best.total) best = p;
}
console.log(
  JSON.stringify({
    tuples: LINES,
    chunk: CHUNK,
    us_per_tuple: {
      decode: us(best!.decode),
      parse: us(best!.parse),
      validate: us(best!.validate),
      total: us(best!.total),
    },
    load: loadavg()[0],
  }),
);
