// Shared fixtures of the HTTP tests: a real latch server on 127.0.0.1 (random port, in-memory
// store) and a small fetch wrapper that returns status, headers and the parsed body.

import { connect } from 'node:net';
import { expect, vi } from 'vitest';
import { startServer, type RunningServer, type ServerOptions } from '../../src/main.js';

export async function start(options: ServerOptions = {}): Promise<RunningServer & { base: string }> {
  const server = await startServer({ host: '127.0.0.1', port: 0, datastore: 'memory', ...options });
  return Object.assign(server, { base: `http://127.0.0.1:${server.port}` });
}

/** A new store named `name` on `base` with MODEL written; its id. */
export async function storeWithModel(base: string, name: string): Promise<string> {
  const created = await call(base, 'POST', '/stores', { name });
  if (created.status !== 201) throw new Error(`create store: ${created.status} ${created.text}`);
  const id = (created.json as { id: string }).id;
  const model = await call(base, 'POST', `/stores/${id}/authorization-models`, MODEL);
  if (model.status !== 201) throw new Error(`write model: ${model.status} ${model.text}`);
  return id;
}

export interface Response {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly json: unknown;
}

export type Body = undefined | string | Uint8Array | Record<string, unknown> | ReadableStream<Uint8Array>;

export async function call(
  base: string,
  method: string,
  path: string,
  body?: Body,
  headers: Record<string, string> = {},
): Promise<Response> {
  const init: RequestInit & { duplex?: 'half' } = { method, headers };
  if (body instanceof ReadableStream) Object.assign(init, { body, duplex: 'half' });
  else if (typeof body === 'string' || body instanceof Uint8Array) init.body = body;
  else if (body !== undefined) init.body = JSON.stringify(body);
  const r = await fetch(base + path, init);
  const text = await r.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: r.status, headers: r.headers, text, json };
}

/** A model in the OpenFGA JSON form: user, group#member, doc with owner/viewer (conditioned). */
export const MODEL = {
  schema_version: '1.1',
  type_definitions: [
    { type: 'user' },
    {
      type: 'group',
      relations: { member: { this: {} } },
      metadata: { relations: { member: { directly_related_user_types: [{ type: 'user' }] } } },
    },
    {
      type: 'doc',
      relations: {
        owner: { this: {} },
        viewer: { union: { child: [{ this: {} }, { computedUserset: { object: '', relation: 'owner' } }] } },
      },
      metadata: {
        relations: {
          owner: { directly_related_user_types: [{ type: 'user' }] },
          viewer: {
            directly_related_user_types: [
              { type: 'user' },
              { type: 'group', relation: 'member' },
              { type: 'user', condition: 'office' },
            ],
          },
        },
      },
    },
  ],
  conditions: {
    office: { name: 'office', expression: 'ip == "10.0.0.1"', parameters: { ip: { type_name: 'TYPE_NAME_STRING' } } },
  },
};

/**
 * Sends `request` (raw HTTP/1.1) to a streaming endpoint and reads nothing until the server has
 * ended the stream (its in-flight count back to 0: the stall cut-off), then reads the whole
 * response to the chunked terminator; its raw bytes.
 */
export async function stalledResponse(
  server: { readonly port: number; inFlight(): number },
  request: string,
): Promise<Buffer> {
  const socket = connect(server.port, '127.0.0.1');
  await new Promise<void>((r) => socket.once('connect', () => r()));
  socket.write(request);
  socket.pause(); // reads nothing
  await vi.waitFor(() => expect(server.inFlight()).toBe(1), { timeout: 60_000, interval: 5 });
  await vi.waitFor(() => expect(server.inFlight()).toBe(0), { timeout: 120_000, interval: 20 });
  const chunks: Buffer[] = [];
  // The response ends (the chunked terminator) once the consumer reads again.
  const ended = new Promise<void>((r) =>
    socket.on('data', (c: Buffer) => {
      chunks.push(c);
      if (Buffer.concat(chunks.slice(-2)).toString('latin1').endsWith('\r\n0\r\n\r\n')) r();
    }),
  );
  socket.resume();
  await ended;
  socket.destroy();
  return Buffer.concat(chunks);
}
