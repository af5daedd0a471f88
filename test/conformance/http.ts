// The conformance target over the wire: the OpenFGA query suites run through a real latch server
// on 127.0.0.1, either as JSON HTTP requests (`http-json`) or as msgpack channel requests
// (`http-msgpack`; its plain checks go through the client's check(), i.e. as ids). Same driver
// contract as the in-process target (./engine.ts); wire errors are turned back into AppError so
// the suites' numeric error codes can be compared.

import type { JsonObject, TupleKey } from '../../src/domain/types.js';
import { AppError, isErrorCode } from '../../src/errors.js';
import type { ListedUser } from '../../src/engine/contract.js';
import { ChannelError, LatchChannelClient } from '../../src/client/index.js';
import { startServer } from '../../src/main.js';
import { dslToModel } from '../../src/model/dsl.js';
import { send as httpSend } from '../support/http-client.js';
import { cachedModel, engineTarget, type ConformanceDriver, type QueryOf, type StoreDriver } from './engine.js';
import type { FileResult, RunOptions, Target } from './types.js';

/** One DSL conversion per model for every wire run of this process. */
const toModel = cachedModel(dslToModel);

/** One request/answer exchange: op name (the channel op), store, JSON-shaped body. */
export type Send = (op: string, storeId: string | undefined, body: Record<string, unknown>) => Promise<unknown>;

export function wireError(status: number, code: string | undefined, message: string | undefined): AppError {
  if (code && isErrorCode(code)) return new AppError(code, message ?? '');
  return new AppError(
    status >= 500 ? 'internal_error' : 'validation_error',
    `HTTP ${status}: ${code ?? ''} ${message ?? ''}`,
  );
}

/** JSON over HTTP: op → method and path of the endpoint table. */
function jsonSender(base: string): Send {
  const route: Record<string, string> = {
    'create-store': '/stores',
    'write-authorization-model': '/authorization-models',
    write: '/write',
    check: '/check',
    'list-objects': '/list-objects',
    'streamed-list-objects': '/streamed-list-objects',
    'list-users': '/list-users',
  };
  return async (op, storeId, body) => {
    const path = op === 'create-store' ? '/stores' : `/stores/${storeId}${route[op]}`;
    const r = await httpSend(base + path, {
      method: 'POST',
      body: JSON.stringify(body),
      headers: { 'content-type': 'application/json' },
    });
    const text = r.text;
    if (op === 'streamed-list-objects' && r.status === 200) {
      const lines = text
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as { result?: unknown; error?: { message: string } });
      const failed = lines.find((l) => l.error);
      if (failed?.error) throw new AppError('validation_error', failed.error.message);
      return { results: lines.map((l) => l.result) };
    }
    const json = (text ? JSON.parse(text) : {}) as { code?: string; message?: string; error?: { message: string } };
    if (r.status >= 300) {
      // Streamed errors before the first result carry a gRPC-style body; recover the code by re-asking ListObjects.
      if (json.error) throw wireError(r.status, undefined, json.error.message);
      throw wireError(r.status, json.code, json.message);
    }
    return json;
  };
}

/** msgpack over the /stream channel. */
function channelSender(client: LatchChannelClient): Send {
  return async (op, storeId, body) => {
    const a = await client.request(op, storeId, body);
    if (a.error) throw wireError(a.status, a.error.code, a.error.message);
    return a.body;
  };
}

function queryBody<K extends object>(
  modelId: string,
  q: QueryOf<K>,
  contextualKey: 'wrapped' | 'bare',
): Record<string, unknown> {
  const tuples = q.contextualTuples as TupleKey[];
  return {
    authorization_model_id: modelId,
    contextual_tuples: contextualKey === 'wrapped' ? { tuple_keys: tuples } : tuples,
    ...(q.context ? { context: q.context as JsonObject } : {}),
  };
}

function storeDriver(send: Send, storeId: string, client?: LatchChannelClient): StoreDriver {
  return {
    async writeModel(dsl) {
      const r = (await send(
        'write-authorization-model',
        storeId,
        toModel(dsl) as unknown as Record<string, unknown>,
      )) as { authorization_model_id: string };
      return r.authorization_model_id;
    },
    async write(modelId, tuples) {
      await send('write', storeId, { authorization_model_id: modelId, writes: { tuple_keys: tuples } });
    },
    async check(modelId, q) {
      // Through the client's check(): plain checks go as ids (define-strings / check-ids).
      if (client && q.contextualTuples.length === 0 && !q.context) {
        return client.check(storeId, q.key, { authorization_model_id: modelId }).catch((err: unknown) => {
          throw err instanceof ChannelError ? wireError(err.status, err.code, err.message) : err;
        });
      }
      const r = (await send('check', storeId, { ...queryBody(modelId, q, 'wrapped'), tuple_key: q.key })) as {
        allowed: boolean;
      };
      return r.allowed;
    },
    async listObjects(modelId, q) {
      const r = (await send('list-objects', storeId, { ...queryBody(modelId, q, 'wrapped'), ...q.key })) as {
        objects: string[];
      };
      return r.objects;
    },
    async streamedListObjects(modelId, q) {
      const body = { ...queryBody(modelId, q, 'wrapped'), ...q.key };
      try {
        const r = (await send('streamed-list-objects', storeId, body)) as { results: { object: string }[] };
        return r.results.map((x) => x.object);
      } catch (err) {
        // A stream error line has no string code: the unary call names the same failure with its code.
        await send('list-objects', storeId, body);
        throw err;
      }
    },
    async listUsers(modelId, q) {
      const body = {
        ...queryBody(modelId, q, 'bare'),
        object: q.key.object,
        relation: q.key.relation,
        user_filters: q.key.filters,
      };
      const r = (await send('list-users', storeId, body)) as { users: ListedUser[] };
      return r.users;
    },
  };
}

export function driver(send: Send, client?: LatchChannelClient): ConformanceDriver {
  return {
    async createStore(name) {
      const safe = name
        .replace(/[^a-zA-Z0-9_\-. ]/g, '_')
        .slice(0, 60)
        .padEnd(3, '_');
      const r = (await send('create-store', undefined, { name: safe })) as { id: string };
      return storeDriver(send, r.id, client);
    },
  };
}

/** One wire mode: starts its own in-memory server for the run and closes it afterwards. */
export async function runHttp(mode: 'json' | 'msgpack', dir: string, options: RunOptions): Promise<FileResult[]> {
  // LATCH_CONFORMANCE_HTTP_THREADS=1: every connection served by an HTTP worker thread (--http-threads).
  const threads = process.env.LATCH_CONFORMANCE_HTTP_THREADS === '1';
  // LATCH_CONFORMANCE_DIST=1: the compiled server (`npm run build:ts` first), whose HTTP threads run
  // the one-file thread bundle.
  const start: typeof startServer =
    process.env.LATCH_CONFORMANCE_DIST === '1'
      ? ((await import(new URL('../../dist/src/main.js', import.meta.url).href)) as { startServer: typeof startServer })
          .startServer
      : startServer;
  const server = await start({
    host: '127.0.0.1',
    port: 0,
    datastore: 'memory',
    ...(threads ? { httpThreads: 1, mainThreadServes: false } : {}),
  });
  const client =
    mode === 'msgpack' ? await LatchChannelClient.connect(`ws://127.0.0.1:${server.port}/stream`) : undefined;
  try {
    const send = client ? channelSender(client) : jsonSender(`http://127.0.0.1:${server.port}`);
    const results = await engineTarget(driver(send, client), `http-${mode}`).run(dir, options);
    return results.map((r) => ({ ...r, file: `${mode}:${r.file}` }));
  } finally {
    await client?.close();
    await server.close();
  }
}

/** The `http` target: every query suite as JSON over HTTP, then as msgpack over the channel. */
export function httpTarget(modes: readonly ('json' | 'msgpack')[] = ['json', 'msgpack']): Target {
  return {
    name: 'http',
    async run(dir, options) {
      const out: FileResult[] = [];
      for (const mode of modes) out.push(...(await runHttp(mode, dir, options)));
      return out;
    },
  };
}
