// `latch tuple import` and `latch tuple export`: bulk loading through latch's import endpoint
// (`POST /stores/{id}/tuples/import`, one chunk per request, each chunk one atomic write) and the
// export stream (`GET /stores/{id}/tuples/export`), docs/cli.md and docs/operations.md.
//
// Resuming: after each acknowledged chunk the state file (beside the input, or `--state`) records
// how many chunks, counted from the start of the file, the server has acknowledged. A run that
// finds a state file for the same store and chunk size starts after them. A chunk whose answer
// was lost is sent again: the server skips tuples already stored identically, so that is
// harmless. The state file is removed when the import completes.

import { createReadStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { TupleKey } from '../domain/types.js';
import { type FlagSpec, UsageError } from './args.js';
import { type Command, MODEL_FLAG, ProgressBar, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';
import { cleanTuple, readTupleFile, toCsv } from './tuple-file.js';

/** The server's limit of tuples per import request. */
export const MAX_IMPORT_CHUNK = 50_000;
const DEFAULT_CHUNK = 10_000;

/** What the state file holds. */
interface ImportState {
  readonly store_id: string;
  readonly file: string;
  readonly chunk_size: number;
  /** Chunks acknowledged, counted from the start of the file (all of them, in order). */
  readonly chunks_done: number;
  readonly tuples_done: number;
  readonly written: number;
}

/** One chunk of the input: its number from 0 and its tuples. */
interface Chunk {
  readonly index: number;
  readonly tuples: TupleKey[];
  /** Bytes of the input read up to the end of this chunk (NDJSON), or tuples (other formats). */
  readonly progress: number;
}

const isNdjson = (path: string): boolean => ['.ndjson', '.jsonl'].includes(extname(path).toLowerCase());

/**
 * NDJSON lines in chunks of `size` tuples, read as a stream (a 10M-tuple file is never held
 * whole); lines of the first `skip` chunks are counted, not parsed.
 */
async function* ndjsonChunks(path: string, size: number, skip: number): AsyncGenerator<Chunk> {
  let tuples: TupleKey[] = [];
  let index = 0;
  let line = 0;
  let bytes = 0;
  let rest = '';
  const take = (text: string): void => {
    if (text.trim() === '') return;
    line++;
    if (index < skip) return;
    let t: unknown;
    try {
      t = JSON.parse(text);
    } catch {
      throw new UsageError(`${path}: line ${line} is not JSON`);
    }
    tuples.push(t as TupleKey);
  };
  for await (const raw of createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 })) {
    const text = rest + (raw as string);
    bytes += Buffer.byteLength(raw as string, 'utf8');
    let from = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', from)) {
      const before = line;
      take(text.slice(from, nl));
      from = nl + 1;
      if (line !== before && line % size === 0) {
        if (index >= skip) yield { index, tuples, progress: bytes };
        index++;
        tuples = [];
      }
    }
    rest = text.slice(from);
  }
  take(rest);
  // Tuples gather only in chunks at or past `skip`: what is left is the last, partial chunk.
  if (tuples.length > 0) yield { index, tuples, progress: bytes };
}

async function* listChunks(tuples: readonly TupleKey[], size: number, skip: number): AsyncGenerator<Chunk> {
  for (let i = skip * size, index = skip; i < tuples.length; i += size, index++)
    yield { index, tuples: tuples.slice(i, i + size), progress: Math.min(i + size, tuples.length) };
}

async function readState(path: string): Promise<ImportState | undefined> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch {
    return undefined;
  }
  try {
    return JSON.parse(text) as ImportState;
  } catch {
    throw new UsageError(`${path}: not an import state file; remove it to start over`);
  }
}

/** Written whole or not at all (a temporary file renamed over it). */
async function saveState(path: string, state: ImportState): Promise<void> {
  await writeFile(`${path}.tmp`, JSON.stringify(state) + '\n');
  await rename(`${path}.tmp`, path);
}

const importCmd: Command = {
  spec: {
    path: 'tuple import',
    summary: 'Bulk-load tuples from an NDJSON/CSV/YAML/JSON file, resumable, with progress',
    positionals: [{ name: 'file', optional: true, help: 'The tuple file (or --file)' }],
    flags: [
      STORE_FLAG,
      MODEL_FLAG,
      {
        name: 'file',
        kind: 'string',
        value: '<file>',
        help: 'Tuples from a .ndjson/.jsonl (streamed), .csv, .yaml, .yml or .json file',
      },
      {
        name: 'state',
        kind: 'string',
        value: '<path>',
        help: 'Where the import records its progress (default: <file>.import-state)',
      },
      {
        name: 'chunk-size',
        kind: 'integer',
        min: 1,
        value: '<n>',
        default: String(DEFAULT_CHUNK),
        help: `Tuples per request, each one atomic write (at most ${MAX_IMPORT_CHUNK})`,
      },
      { name: 'ignore-duplicates', kind: 'boolean', help: 'Accepted for compatibility: an import always skips them' },
      ...SERVER_FLAGS,
    ],
    details:
      'NDJSON: one {"user","relation","object"[,"condition"][,"expires_at"]} per line. CSV header: ' +
      'user_type,user_id,user_relation,relation,object_type,object_id,condition_name,condition_context. ' +
      'Tuples already stored identically are skipped. Interrupted? Run the same command again: it resumes ' +
      'after the last acknowledged chunk.',
    examples: [
      'latch tuple import --store-id 01J… tuples.ndjson',
      'latch tuple import --store-id 01J… --file tuples.csv --chunk-size 5000',
    ],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const positional = args.arg('file');
    const flag = args.string('file');
    if (positional !== undefined && flag !== undefined) throw new UsageError('give the file once (or --file)');
    const file = positional ?? flag;
    if (file === undefined) throw new UsageError('missing --file (or the file as an argument)');
    const size = args.int('chunk-size') ?? DEFAULT_CHUNK;
    if (size > MAX_IMPORT_CHUNK) throw new UsageError(`--chunk-size is at most ${MAX_IMPORT_CHUNK}`);
    const statePath = args.string('state') ?? `${file}.import-state`;
    const modelId = args.string('model-id');
    const client = clientFrom(args);
    const previous = await readState(statePath);
    if (previous && (previous.store_id !== storeId || previous.chunk_size !== size))
      throw new UsageError(
        `${statePath} records an import into store ${previous.store_id} in chunks of ${previous.chunk_size}; ` +
          'use the same store and --chunk-size to resume, or remove it to start over',
      );
    const skip = previous?.chunks_done ?? 0;
    let tuplesDone = previous?.tuples_done ?? 0;
    let written = previous?.written ?? 0;
    const started = Date.now();
    const bar = new ProgressBar(io, skip > 0 ? 'resuming' : 'importing');
    let chunks: AsyncGenerator<Chunk>;
    let total: number;
    if (isNdjson(file)) {
      total = (await stat(file)).size;
      chunks = ndjsonChunks(file, size, skip);
    } else {
      const all = await readTupleFile(file);
      total = all.length;
      chunks = listChunks(all, size, skip);
    }
    if (skip > 0) io.err(`resuming after ${skip} acknowledged chunk(s) (${tuplesDone} tuples) from ${statePath}\n`);
    let sent = 0;
    for await (const chunk of chunks) {
      const r = await client.importTuples(storeId, chunk.tuples, modelId);
      written += r.written;
      tuplesDone += chunk.tuples.length;
      sent += chunk.tuples.length;
      await saveState(statePath, {
        store_id: storeId,
        file,
        chunk_size: size,
        chunks_done: chunk.index + 1,
        tuples_done: tuplesDone,
        written,
      });
      bar.update(chunk.progress, total);
    }
    bar.update(total, total);
    await rm(statePath, { force: true });
    const report: Record<string, number> =
      written === tuplesDone ? { written } : { written, skipped: tuplesDone - written };
    printJson(io, {
      ...report,
      ...(skip > 0 ? { resumed_after: skip, sent } : {}),
      seconds: (Date.now() - started) / 1000,
    });
    return 0;
  },
};

const FORMAT: FlagSpec = {
  name: 'format',
  kind: 'string',
  value: '<fmt>',
  choices: ['ndjson', 'csv'],
  default: 'ndjson',
  help: 'ndjson streams one tuple per line; csv is the tuple file form (built in memory)',
};

/** `{"result": tuple}` → the tuple, its fields in the tuple files' order. */
function tupleOf(result: Record<string, unknown>): TupleKey {
  return cleanTuple(result as unknown as TupleKey);
}

const exportCmd: Command = {
  spec: {
    path: 'tuple export',
    summary: 'Write every tuple of a store, read at one revision, as NDJSON or CSV',
    positionals: [],
    flags: [STORE_FLAG, FORMAT, ...SERVER_FLAGS],
    examples: [
      'latch tuple export --store-id 01J… > tuples.ndjson',
      'latch tuple export --store-id 01J… --format csv > tuples.csv',
    ],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const format = args.string('format') ?? 'ndjson';
    const client = clientFrom(args);
    if (format === 'csv') {
      const all: TupleKey[] = [];
      for await (const r of client.exportTuples(storeId)) all.push(tupleOf(r));
      io.out(toCsv(all));
      return 0;
    }
    let buf = '';
    for await (const r of client.exportTuples(storeId)) {
      buf += JSON.stringify(tupleOf(r)) + '\n';
      if (buf.length >= 1 << 16) {
        io.out(buf);
        buf = '';
      }
    }
    if (buf !== '') io.out(buf);
    return 0;
  },
};

export const bulkCommands: readonly Command[] = [importCmd, exportCmd];
