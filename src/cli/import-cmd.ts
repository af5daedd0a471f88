// `latch tuple import` and `latch tuple export`: bulk loading through latch's import endpoint
// (`POST /stores/{id}/tuples/import`, one chunk per request, each chunk one atomic write) and the
// export stream (`GET /stores/{id}/tuples/export`), docs/cli.md and docs/operations.md.
//
// Sending: NDJSON is read as bytes and each chunk's lines go to the server unparsed (the server
// parses them once); `--in-flight` chunks (default 2) are sent before the first is answered, over
// kept-alive connections, so the server parses one chunk while it commits another. Two chunks in
// flight may commit in either order (each is atomic; `--in-flight 1` keeps file order).
//
// Resuming: after each acknowledged chunk the state file (beside the input, or `--state`) records
// how many chunks, counted from the start of the file, the server has acknowledged with no
// unacknowledged chunk before them. A run that finds a state file for the same store and chunk
// size starts after them. A chunk whose answer was lost is sent again: the server skips tuples
// already stored identically, so that is harmless. The state file is removed when the import
// completes.

import { createReadStream } from 'node:fs';
import { readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { extname } from 'node:path';
import type { TupleKey } from '../domain/types.js';
import { ApiError } from '../client/json.js';
import { type FlagSpec, UsageError } from './args.js';
import { type Command, MODEL_FLAG, ProgressBar, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';
import { cleanTuple, readTupleFile, toCsv } from './tuple-file.js';

/** The server's limit of tuples per import request. */
export const MAX_IMPORT_CHUNK = 50_000;
const DEFAULT_CHUNK = 10_000;
/** Chunks sent before the first is answered: the server parses one while it commits another. */
const DEFAULT_IN_FLIGHT = 2;

/**
 * A rejected chunk's error with the chunk's place in the file (the server's message names the
 * tuple's position within the chunk).
 */
function chunkError(err: unknown, chunk: Chunk, size: number): unknown {
  if (!(err instanceof ApiError)) return err;
  const first = chunk.index * size + 1;
  const where = `chunk ${chunk.index + 1} (tuples ${first}–${first + chunk.count - 1} of the file)`;
  return new ApiError(err.status, err.code, `${where}: ${err.reason}`);
}

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

/** One chunk of the input: its number from 0 and its tuples (NDJSON: their lines, unparsed). */
interface Chunk {
  readonly index: number;
  /** Tuples in the chunk. */
  readonly count: number;
  /** NDJSON: the chunk's lines as read (sent as they are); other formats: the parsed tuples. */
  readonly body: Uint8Array | TupleKey[];
  /** Bytes of the input read up to the end of this chunk (NDJSON), or tuples (other formats). */
  readonly progress: number;
}

const isNdjson = (path: string): boolean => ['.ndjson', '.jsonl'].includes(extname(path).toLowerCase());

/** True when bytes [from, to) hold only ASCII white space (a blank line: no tuple). */
function blank(b: Uint8Array, from: number, to: number): boolean {
  for (let i = from; i < to; i++) {
    const c = b[i] as number;
    if (c !== 0x20 && (c < 0x09 || c > 0x0d)) return false;
  }
  return true;
}

/**
 * NDJSON lines in chunks of `size` tuples (blank lines not counted), read as a stream of bytes (a
 * 10M-tuple file is never held whole) and passed on unparsed: the server parses them, and a line
 * that is not JSON rejects its chunk with its position (`tuple_index`). Lines of the first `skip`
 * chunks are counted, not kept.
 */
async function* ndjsonChunks(path: string, size: number, skip: number): AsyncGenerator<Chunk> {
  let parts: Buffer[] = [];
  let count = 0;
  let index = 0;
  let bytes = 0;
  let carry: Buffer | undefined;
  for await (const raw of createReadStream(path, { highWaterMark: 1 << 20 })) {
    const read = raw as Buffer;
    bytes += read.length;
    const buf = carry ? Buffer.concat([carry, read]) : read;
    let from = 0;
    let start = 0;
    for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, from)) {
      if (!blank(buf, from, nl)) count++;
      from = nl + 1;
      if (count === size) {
        if (index >= skip) {
          parts.push(buf.subarray(start, from));
          yield { index, count, body: Buffer.concat(parts), progress: bytes - (buf.length - from) };
        }
        parts = [];
        count = 0;
        index++;
        start = from;
      }
    }
    if (index >= skip && from > start) parts.push(buf.subarray(start, from));
    carry = from < buf.length ? buf.subarray(from) : undefined;
  }
  if (carry && !blank(carry, 0, carry.length)) {
    count++;
    parts.push(carry, Buffer.from('\n'));
  }
  // Lines gather only in chunks at or past `skip`: what is left is the last, partial chunk.
  if (count > 0 && index >= skip) yield { index, count, body: Buffer.concat(parts), progress: bytes };
}

async function* listChunks(tuples: readonly TupleKey[], size: number, skip: number): AsyncGenerator<Chunk> {
  for (let i = skip * size, index = skip; i < tuples.length; i += size, index++) {
    const body = tuples.slice(i, i + size);
    yield { index, count: body.length, body, progress: Math.min(i + size, tuples.length) };
  }
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
      {
        name: 'in-flight',
        kind: 'integer',
        min: 1,
        value: '<n>',
        default: String(DEFAULT_IN_FLIGHT),
        help: 'Chunks sent before the first is answered (1: chunks commit in file order)',
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
    const depth = args.int('in-flight') ?? DEFAULT_IN_FLIGHT;
    // Answers of chunks past the first unanswered one wait here: the state file records only the
    // acknowledged prefix of the file, so a resumed run never skips an unacknowledged chunk.
    const answered = new Map<number, { count: number; written: number; progress: number }>();
    let done = skip;
    let saving = Promise.resolve();
    const acknowledge = (chunk: Chunk, r: { written: number }): void => {
      answered.set(chunk.index, { count: chunk.count, written: r.written, progress: chunk.progress });
      sent += chunk.count;
      for (let a = answered.get(done); a !== undefined; a = answered.get(done)) {
        answered.delete(done);
        done++;
        written += a.written;
        tuplesDone += a.count;
        const state = {
          store_id: storeId,
          file,
          chunk_size: size,
          chunks_done: done,
          tuples_done: tuplesDone,
          written,
        };
        saving = saving.then(() => saveState(statePath, state));
        bar.update(a.progress, total);
      }
    };
    const inFlight = new Set<Promise<void>>();
    try {
      for await (const chunk of chunks) {
        const request =
          chunk.body instanceof Uint8Array
            ? client.importNdjson(storeId, chunk.body, modelId)
            : client.importTuples(storeId, chunk.body, modelId);
        const p: Promise<void> = request
          .then((r) => acknowledge(chunk, r))
          .catch((err: unknown) => {
            throw chunkError(err, chunk, size);
          })
          .finally(() => inFlight.delete(p));
        p.catch(() => undefined); // rejections are taken by the race or the final wait below
        inFlight.add(p);
        if (inFlight.size >= depth) await Promise.race(inFlight);
      }
      await Promise.all(inFlight);
    } finally {
      // On a failure too: the answers still coming are recorded before the command ends.
      await Promise.allSettled([...inFlight]);
      await saving;
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
