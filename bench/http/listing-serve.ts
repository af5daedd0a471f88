// A server for bench/http/listing-instructions.ts, in its own process: latch from the tree named
// by the first argument (this tree or a baseline checkout), a memory store holding N objects that
// `user:anne` views through one group and N users of `doc:big`. Prints {"port", "store"} on stdout
// when ready; SIGTERM closes it.
//
//   node --import tsx bench/http/listing-serve.ts <tree> <N>

import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

interface Tuple {
  object: string;
  relation: string;
  user: string;
}
interface Server {
  port: number;
  close(): Promise<void>;
  latch: {
    createStore(input: { name: string }): Promise<{ id: string }>;
    writeModel(storeId: string, model: unknown): Promise<unknown>;
    write(input: unknown): Promise<unknown>;
  };
}

const [tree = '.', count = '20000', profile] = process.argv.slice(2);
const N = Number(count);
const main = (await import(pathToFileURL(path.resolve(tree, 'src/main.ts')).href)) as {
  startServer(options: unknown): Promise<Server>;
};
const server = await main.startServer({
  host: '127.0.0.1',
  port: 0,
  datastore: 'memory',
  engine: { maxTuplesPerWrite: 10_000, listObjectsDeadlineMs: 600_000, listPageDeadlineMs: 600_000 },
});
const base = `http://127.0.0.1:${server.port}`;
async function post(p: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + p, { method: 'POST', body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`${p}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}
const store = (await post('/stores', { name: 'bench-listings' })).id as string;
await post(`/stores/${store}/authorization-models`, {
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
      relations: { viewer: { this: {} } },
      metadata: {
        relations: {
          viewer: { directly_related_user_types: [{ type: 'user' }, { type: 'group', relation: 'member' }] },
        },
      },
    },
  ],
});
const write = (writes: Tuple[]): Promise<unknown> =>
  server.latch.write({ storeId: store, writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
await write([{ object: 'group:all', relation: 'member', user: 'user:anne' }]);
for (const make of [
  (i: number): Tuple => ({ object: `doc:${i}`, relation: 'viewer', user: 'group:all#member' }),
  (i: number): Tuple => ({ object: 'doc:big', relation: 'viewer', user: `user:${i}` }),
])
  for (let i = 0; i < N; i += 10_000) {
    const writes: Tuple[] = [];
    for (let j = i; j < Math.min(N, i + 10_000); j++) writes.push(make(j));
    await write(writes);
  }
// With a third argument (a file): SIGUSR2 starts a V8 CPU profile, written there on SIGTERM.
const session = profile === undefined ? undefined : new Session();
process.once('SIGUSR2', () => {
  if (!session) return;
  session.connect();
  void session.post('Profiler.enable').then(() => session.post('Profiler.start'));
});
process.stdout.write(JSON.stringify({ port: server.port, store }) + '\n');
process.once('SIGTERM', () => {
  void (async () => {
    if (session && profile) {
      const { profile: p } = await session.post('Profiler.stop');
      writeFileSync(profile, JSON.stringify(p));
    }
    await server.close();
    process.exit(0);
  })();
});
