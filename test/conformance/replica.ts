// The conformance suites across two nodes over one datastore: stores, models and tuples are
// written through node A, every query is sent to node B with `Latch-Min-Revision` set to the
// revision A's last write of that store answered (read-your-writes across nodes, no database round
// trip on B). Same driver as the HTTP target (./http.ts).

import { AppError } from '../../src/errors.js';
import { driver, wireError, type Send } from './http.js';
import { engineTarget } from './engine.js';
import { failedBeforeReply, send as httpSend } from '../support/http-client.js';
import type { FileResult, RunOptions } from './types.js';

const ROUTES: Record<string, string> = {
  'write-authorization-model': '/authorization-models',
  write: '/write',
  check: '/check',
  'list-objects': '/list-objects',
  'streamed-list-objects': '/streamed-list-objects',
  'list-users': '/list-users',
};

/** JSON over HTTP: writes to `writer`, queries to `reader` with the store's last written revision. */
export function replicaSender(writer: string, reader: string): Send {
  const revisions = new Map<string, string>();
  return async (op, storeId, body) => {
    const write = op === 'create-store' || op === 'write-authorization-model' || op === 'write';
    const base = write ? writer : reader;
    const path = op === 'create-store' ? '/stores' : `/stores/${storeId}${ROUTES[op]}`;
    const headers: Record<string, string> = { 'content-type': 'application/json' };
    const min = storeId === undefined ? undefined : revisions.get(storeId);
    if (!write && min !== undefined) headers['latch-min-revision'] = min;
    const init = { method: 'POST', body: JSON.stringify(body), headers };
    // A kept-alive connection the node closed as idle while this process was stalled (a
    // synchronous suite parse at load 20+ outlasts the server's 10 s idle limit) fails before
    // any reply byte. Safe operations are sent again once, as HTTP clients do for idempotent
    // requests; a Write is never resent (its first attempt may have been applied).
    const r = await httpSend(base + path, init).catch((e: unknown) => {
      if (op === 'write' || !failedBeforeReply(e)) throw e;
      return httpSend(base + path, init);
    });
    const text = r.text;
    if (op === 'write' && r.status === 200 && storeId !== undefined) {
      const revision = r.headers.get('latch-revision');
      if (revision === null) throw new Error('a Write answer without Latch-Revision');
      revisions.set(storeId, revision);
    }
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
      if (json.error) throw wireError(r.status, undefined, json.error.message);
      throw wireError(r.status, json.code, json.message);
    }
    return json;
  };
}

/** The query suites, written through `writer`, asked of `reader`. */
export async function runReplicated(
  writer: string,
  reader: string,
  dir: string,
  options: RunOptions,
): Promise<FileResult[]> {
  // Eight tests at once: each one mostly waits on the two nodes and the database.
  const results = await engineTarget(driver(replicaSender(writer, reader)), 'replica', 8).run(dir, options);
  return results.map((r) => ({ ...r, file: `replica:${r.file}` }));
}
