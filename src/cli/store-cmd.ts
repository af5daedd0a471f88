// `latch store create|list|get|delete|import|export` against a server. `import` reads a
// `.fga.yaml` store file (creates the store unless --store-id names one, writes the model, writes
// the tuples in chunks of ≤100); `export` writes one: the model as DSL (JSON when DSL would not
// reproduce it exactly, e.g. modular models) and every tuple, so export → import round-trips.

import { writeFile } from 'node:fs/promises';
import { isDeepStrictEqual } from 'node:util';
import type { AuthorizationModelInput } from '../domain/types.js';
import { dslToModel, modelToDsl } from '../model/dsl.js';
import {
  type Command,
  MODEL_FLAG,
  ProgressBar,
  SERVER_FLAGS,
  STORE_FLAG,
  clientFrom,
  printJson,
  writeInChunks,
} from './common.js';
import type { FgaHttpClient } from './http-client.js';
import { loadModelFile, loadStoreFile } from './store-file.js';
import { cleanTuple, toYaml } from './tuple-file.js';
import { assertionsToTests, testsToAssertions } from './assertions.js';

const server = SERVER_FLAGS;

const create: Command = {
  spec: {
    path: 'store create',
    summary: 'Create a store (optionally with a model)',
    positionals: [],
    flags: [
      { name: 'name', kind: 'string', value: '<name>', help: 'Store name (required)' },
      {
        name: 'model',
        kind: 'string',
        value: '<file>',
        help: 'Model file to write into the new store (.fga, .json or fga.mod)',
      },
      ...server,
    ],
    examples: ['latch store create --name acme --model model.fga --api-url http://127.0.0.1:8080'],
  },
  async run(args, io) {
    const name = args.require('name');
    const client = clientFrom(args);
    const model = args.has('model') ? (await loadModelFile(args.require('model'))).model : undefined;
    const store = await client.createStore(name);
    const modelId = model ? await client.writeModel(store.id, model) : undefined;
    printJson(io, { store, ...(modelId ? { model: { authorization_model_id: modelId } } : {}) });
    return 0;
  },
};

const list: Command = {
  spec: {
    path: 'store list',
    summary: 'List stores (every page)',
    positionals: [],
    flags: [
      { name: 'name', kind: 'string', value: '<name>', help: 'Only stores with exactly this name' },
      {
        name: 'max-pages',
        kind: 'integer',
        min: 0,
        value: '<n>',
        default: '0 (all)',
        help: 'Stop after this many pages',
      },
      ...server,
    ],
  },
  async run(args, io) {
    const client = clientFrom(args);
    const stores = [];
    let token = '';
    let pages = 0;
    const max = args.int('max-pages') ?? 0;
    do {
      const page = await client.listStores({
        pageSize: 100,
        continuationToken: token || undefined,
        name: args.string('name'),
      });
      stores.push(...page.stores);
      token = page.continuation_token;
    } while (token && (max === 0 || ++pages < max));
    printJson(io, { stores, continuation_token: token });
    return 0;
  },
};

const get: Command = {
  spec: { path: 'store get', summary: 'Show one store', positionals: [], flags: [STORE_FLAG, ...server] },
  async run(args, io) {
    printJson(io, await clientFrom(args).getStore(args.require('store-id', 'or set LATCH_STORE_ID')));
    return 0;
  },
};

const del: Command = {
  spec: { path: 'store delete', summary: 'Delete a store', positionals: [], flags: [STORE_FLAG, ...server] },
  async run(args, io) {
    const id = args.require('store-id', 'or set LATCH_STORE_ID');
    await clientFrom(args).deleteStore(id);
    printJson(io, { deleted: id });
    return 0;
  },
};

const importCmd: Command = {
  spec: {
    path: 'store import',
    summary: 'Create a store from a .fga.yaml store file (model and tuples)',
    positionals: [],
    flags: [
      { name: 'file', kind: 'string', value: '<store.fga.yaml>', help: 'Store file to import (required)' },
      { ...STORE_FLAG, help: 'Import into this existing store instead of creating one' },
      ...server,
    ],
    details:
      "Tuples are written in chunks of 100 with a progress bar on a terminal. The tests' check\n" +
      "expectations are stored as the model's assertions (at most 100); they are not run (use 'latch test').",
    examples: ['latch store import --file store.fga.yaml --api-url http://127.0.0.1:8080'],
  },
  async run(args, io) {
    const file = await loadStoreFile(args.require('file'));
    const client = clientFrom(args);
    if (!file.model) throw new Error(`${file.path}: no 'model' or 'model_file' to import`);
    const existing = args.string('store-id');
    const store = existing ? await client.getStore(existing) : await client.createStore(file.name);
    const modelId = await client.writeModel(store.id, file.model);
    const bar = new ProgressBar(io, 'tuples');
    await writeInChunks(client, store.id, file.tuples, { modelId, onProgress: (d, t) => bar.update(d, t) });
    const { assertions, skipped } = testsToAssertions(file.tests);
    if (assertions.length) await client.writeAssertions(store.id, modelId, assertions);
    for (const reason of skipped.reasons)
      io.err(`latch store import: ${skipped.count} test expectation(s) not stored as assertions: ${reason}\n`);
    printJson(io, {
      store,
      model: { authorization_model_id: modelId },
      tuples_written: file.tuples.length,
      assertions_written: assertions.length,
    });
    return 0;
  },
};

const exportCmd: Command = {
  spec: {
    path: 'store export',
    summary: 'Write a store as a .fga.yaml store file (model, tuples, assertions as tests)',
    positionals: [],
    flags: [
      STORE_FLAG,
      MODEL_FLAG,
      { name: 'output', short: 'o', kind: 'string', value: '<file>', help: 'Write to this file instead of stdout' },
      ...server,
    ],
    examples: ['latch store export --store-id 01J… -o backup.fga.yaml'],
  },
  async run(args, io) {
    const client = clientFrom(args);
    const text = await exportStore(client, args.require('store-id', 'or set LATCH_STORE_ID'), args.string('model-id'));
    const out = args.string('output');
    if (out) await writeFile(out, text);
    else io.out(text);
    return 0;
  },
};

/** The store file text of a store: name, model (DSL when exact, else JSON), all tuples, the model's assertions as tests. */
async function exportStore(client: FgaHttpClient, storeId: string, modelId?: string): Promise<string> {
  const store = await client.getStore(storeId);
  const model = modelId ? await client.getModel(storeId, modelId) : await client.latestModel(storeId);
  const tuples = (await client.readAll(storeId)).map((t) => cleanTuple(t.key));
  const doc: Record<string, unknown> = { name: store.name };
  if (model) doc.model = modelText(model);
  doc.tuples = tuples;
  const assertions = model ? await client.readAssertions(storeId, model.id) : [];
  if (assertions.length) doc.tests = assertionsToTests(assertions);
  return toYaml(doc);
}

/** DSL when converting back gives the same model; otherwise pretty JSON (which the importer also reads). */
function modelText(model: AuthorizationModelInput & { id?: string }): string {
  const { id: _id, ...input } = model;
  try {
    // The DSL library may reorder the object it is given; keep `input` untouched for the JSON fallback.
    const dsl = modelToDsl(structuredClone(input));
    if (isDeepStrictEqual(normalizeModel(dslToModel(dsl)), normalizeModel(input))) return dsl;
  } catch {
    // not expressible as DSL: fall through to JSON
  }
  return JSON.stringify(input, null, 2) + '\n';
}

/** The protobuf-JSON defaults a server adds (`metadata: null`, `condition: ""`, …) removed, for comparison. */
function normalizeModel(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(normalizeModel);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (v === null || v === '' || (k === 'id' && typeof v === 'string')) continue;
    const n = normalizeModel(v);
    if (
      typeof n === 'object' &&
      n !== null &&
      !Array.isArray(n) &&
      Object.keys(n).length === 0 &&
      k !== 'this' &&
      k !== 'wildcard'
    )
      continue;
    if (Array.isArray(n) && n.length === 0) continue;
    out[k] = n;
  }
  return out;
}

export const storeCommands: readonly Command[] = [create, list, get, del, importCmd, exportCmd];
