// Complete listings over HTTP on a real server (memory store): every one of N objects through
// paged ListObjects (`page_size`, latch's complete-listing pages), through paged StreamedListObjects
// (the same pages as NDJSON streams) and through one unpaged StreamedListObjects; and every one of
// N users of one object through paged ListUsers. Each way runs in the same process, interleaved
// over `--rounds` rounds (the median is reported), and every listing is checked complete, in order
// and without duplicates before it counts, outside the timing (an unpaged stream promises no order:
// a sorted copy is checked). ListUsers runs with `--users` or `--split` (N users of one object).
//
//   npx tsx bench/http/listings.ts                           # 1M objects and users, pages of 100,000
//   npx tsx bench/http/listings.ts --n 100000 --page 10000   # a quick run
//   npx tsx bench/http/listings.ts --split --rounds 3         # server in its own process, 1M
//
// `--split` runs the server in its own process (bench/http/listing-serve.ts, from `--tree <checkout>`
// when given: a baseline) and reports its CPU apart from the client's, read from /proc;
// `--server-profile <file>` writes that server's V8 CPU profile of the timed rounds. The clients are
// what a user would write (see "The clients" below; `--stream-client http` reads streams through
// node:http instead of fetch), and the OpenFGA JS SDK's own stream reader is a way of its own.
// The ways named `latch client` read the same replies with latch/client's listing readers
// (src/client/listings.ts, listing-stream.ts: a scan of latch's own bytes, JSON.parse otherwise).
// `--only <text>` runs the ways whose name contains it; `--cpu-profile <file>` writes a V8 CPU
// profile of the timed rounds alone in this process (the client, and the server unless --split), e.g.
//   npx tsx bench/http/listings.ts --n 200000 --only unpaged --cpu-profile /tmp/unpaged.cpuprofile

import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { Agent, request as httpRequest } from 'node:http';
import { loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CredentialsMethod, OpenFgaClient } from '@openfga/sdk';
import { ObjectStreamReader, decodeObjectsPage, decodeUsersPage } from '../../src/client/index.js';
import { startServer } from '../../src/main.js';
import type { TupleKey } from '../../src/domain/types.js';

const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '1000000' },
    page: { type: 'string', default: '100000' },
    rounds: { type: 'string', default: '3' },
    users: { type: 'boolean', default: false },
    split: { type: 'boolean', default: false },
    tree: { type: 'string' },
    only: { type: 'string' },
    'cpu-profile': { type: 'string' },
    'server-profile': { type: 'string' },
    'stream-client': { type: 'string', default: 'fetch' },
  },
});
const N = Number(values.n);
const PAGE = Number(values.page);
const ROUNDS = Number(values.rounds);

const MODEL = {
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
};

/**
 * The server under test: in this process, or (`--split`) in its own (bench/http/listing-serve.ts,
 * the same store with the users always filled), where its CPU time is read from /proc.
 */
interface Target {
  readonly base: string;
  readonly store: string;
  /** The server process's CPU time in µs; undefined in this process (counted with the client). */
  cpu(): number | undefined;
  /** `--server-profile`: the server in its own process starts its CPU profile (written when it closes). */
  profile?(): void;
  close(): Promise<void>;
}

async function inProcess(): Promise<Target> {
  const server = await startServer({
    host: '127.0.0.1',
    port: 0,
    datastore: 'memory',
    engine: { maxTuplesPerWrite: 10_000, listObjectsDeadlineMs: 600_000, listPageDeadlineMs: 600_000 },
  });
  const base = `http://127.0.0.1:${server.port}`;
  const store = (await post(base, '/stores', { name: 'bench-listings' })).id as string;
  await post(base, `/stores/${store}/authorization-models`, MODEL);
  const write = (writes: TupleKey[]): Promise<unknown> =>
    server.latch.write({ storeId: store, writes, deletes: [], onDuplicate: 'error', onMissing: 'error' });
  async function fill(make: (i: number) => TupleKey): Promise<void> {
    for (let i = 0; i < N; i += 10_000) {
      const writes: TupleKey[] = [];
      for (let j = i; j < Math.min(N, i + 10_000); j++) writes.push(make(j));
      await write(writes);
    }
  }
  await write([{ object: 'group:all', relation: 'member', user: 'user:anne' }]);
  await fill((i) => ({ object: `doc:${i}`, relation: 'viewer', user: 'group:all#member' }));
  if (values.users) await fill((i) => ({ object: 'doc:big', relation: 'viewer', user: `user:${i}` }));
  return { base, store, cpu: () => undefined, close: () => server.close() };
}

async function ownProcess(): Promise<Target> {
  const serve = fileURLToPath(new URL('./listing-serve.ts', import.meta.url));
  const tree = values.tree ?? fileURLToPath(new URL('../..', import.meta.url));
  const args = ['--import', 'tsx', serve, tree, String(N)];
  const child = spawn(process.execPath, values['server-profile'] ? [...args, values['server-profile']] : args, {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const line = await new Promise<string>((resolve, reject) => {
    let text = '';
    child.stdout.on('data', (b: Buffer) => {
      text += b.toString();
      if (text.includes('\n')) resolve(text.slice(0, text.indexOf('\n')));
    });
    child.once('exit', (code) => reject(new Error(`listing-serve exited with ${code}`)));
  });
  const { port, store } = JSON.parse(line) as { port: number; store: string };
  // A failed run exits without `close()`: the server goes with it.
  process.once('exit', () => child.kill('SIGKILL'));
  // utime + stime (fields 14 and 15 of /proc/<pid>/stat), in clock ticks of 10 ms.
  const cpu = (): number => {
    const stat = readFileSync(`/proc/${child.pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) * 10_000;
  };
  return {
    base: `http://127.0.0.1:${port}`,
    store,
    cpu,
    profile: () => void child.kill('SIGUSR2'),
    close: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

async function post(base: string, path: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`${path}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

const target = values.split ? await ownProcess() : await inProcess();
const { base, store } = target;

const objectsQuery = { type: 'doc', relation: 'viewer', user: 'user:anne' };
const usersQuery = { object: { type: 'doc', id: 'big' }, relation: 'viewer', user_filters: [{ type: 'user' }] };

/**
 * Throws unless `items` are N distinct keys in ascending order (the complete listing). An unpaged
 * stream promises no order, so its items are checked as a sorted copy: the sort is part of the
 * check, which runs outside the timing for every way, not part of the listing a client receives.
 */
function complete(received: readonly string[], what: string): void {
  const items = what.includes('unpaged') ? [...received].sort() : received;
  if (items.length !== N) throw new Error(`${what}: ${items.length} of ${N}`);
  for (let i = 1; i < items.length; i++)
    if ((items[i - 1] as string) >= (items[i] as string)) throw new Error(`${what}: out of order at ${i}`);
}

// The clients, as a user would write them: a page through fetch (undici; `r.json()` parses the
// whole body in one step); a stream through fetch too, its body read chunk by chunk and the
// complete lines of each chunk parsed with ONE JSON.parse (joined into an array), or with
// `--stream-client http` through node:http on one keep-alive connection (Buffer 'data' events,
// the same parse). The OpenFGA JS SDK's own `streamedListObjects` (axios, a JSON.parse and an
// async-generator step per line) runs as its own way, unpaged: the SDK sends no page fields.
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** POSTs `body` to `path` through node:http; `onChunk` sees the response body as it arrives. */
function httpChunks(path: string, body: unknown, onChunk: (chunk: Buffer) => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = httpRequest(
      `${base}${path}`,
      { method: 'POST', agent, headers: { 'content-length': Buffer.byteLength(payload) } },
      (res) => {
        if (res.statusCode !== 200) reject(new Error(`${path}: ${res.statusCode}`));
        res.on('data', onChunk);
        res.on('end', resolve);
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** POSTs `body` to `path` through fetch; `onChunk` sees the response body as it arrives. */
async function fetchChunks(path: string, body: unknown, onChunk: (chunk: Uint8Array) => void): Promise<void> {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 200 || r.body === null) throw new Error(`${path}: ${r.status}`);
  for await (const chunk of r.body) onChunk(chunk);
}

const request = values['stream-client'] === 'http' ? httpChunks : fetchChunks;

/** The JSON body of a POST. */
async function postJson(path: string, body: unknown): Promise<Record<string, unknown>> {
  return post(base, path, body);
}

/** The text of a POST's answer through fetch (a 200, else thrown). */
async function postText(path: string, body: unknown): Promise<string> {
  const r = await fetch(base + path, { method: 'POST', body: JSON.stringify(body) });
  const text = await r.text();
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${text.slice(0, 200)}`);
  return text;
}

/** Paged ListObjects through latch/client's `decodeObjectsPage`. */
async function pagedObjectsLatch(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const text = await postText(`/stores/${store}/list-objects`, {
      ...objectsQuery,
      page_size: PAGE,
      continuation_token: token,
    });
    const page = decodeObjectsPage(text);
    for (const o of page.objects) out.push(o);
    token = page.continuation_token;
  } while (token !== '');
  return out;
}

/** Paged ListUsers through latch/client's `decodeUsersPage`, keeping ids as `pagedUsers(true)` does. */
async function pagedUsersLatch(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const text = await postText(`/stores/${store}/list-users`, {
      ...usersQuery,
      page_size: PAGE,
      continuation_token: token,
    });
    const page = decodeUsersPage(text);
    for (const u of page.users) {
      if (!('object' in u) || u.object.type !== 'user') throw new Error(`ListUsers: not a user: ${JSON.stringify(u)}`);
      out.push(u.object.id);
    }
    token = page.continuation_token;
  } while (token !== '');
  return out;
}

async function pagedObjects(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const r = await postJson(`/stores/${store}/list-objects`, {
      ...objectsQuery,
      page_size: PAGE,
      continuation_token: token,
    });
    for (const o of r.objects as string[]) out.push(o);
    token = r.continuation_token as string;
  } while (token !== '');
  return out;
}

/**
 * Paged ListUsers. `ids`: the client keeps each user's id (checking its type is `user`, the
 * filter) instead of building a `type:id` key per user; the order checked is the same.
 */
async function pagedUsers(ids = false): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const r = await postJson(`/stores/${store}/list-users`, {
      ...usersQuery,
      page_size: PAGE,
      continuation_token: token,
    });
    const users = r.users as { object: { type: string; id: string } }[];
    if (ids)
      for (const u of users) {
        if (u.object.type !== 'user') throw new Error(`ListUsers: a user of type ${u.object.type}`);
        out.push(u.object.id);
      }
    else for (const u of users) out.push(`${u.object.type}:${u.object.id}`);
    token = r.continuation_token as string;
  } while (token !== '');
  return out;
}

interface StreamLine {
  result?: { object: string; continuation_token?: string };
  error?: unknown;
}

/** The line `{"result":{"object":"` + id + `"}}` (the plain result line) starts with this. */
const LINE_HEAD = '{"result":{"object":"';

/**
 * The `result` lines of one NDJSON stream; `last` is the last token a line carried. `scan`: the
 * line scan client (below) instead of one JSON.parse per read.
 */
async function stream(body: unknown, scan = false): Promise<{ objects: string[]; last: string }> {
  const objects: string[] = [];
  let last = '';
  let rest = '';
  const decoder = new TextDecoder();
  /** A line that is not a plain result line, through JSON.parse. */
  const parseLine = (line: StreamLine): void => {
    if (!line.result) throw new Error(`stream error: ${JSON.stringify(line)}`);
    objects.push(line.result.object);
    // A resumable stream's token lines: every 1,000th of a page and its last.
    if (line.result.continuation_token !== undefined) last = line.result.continuation_token;
  };
  await request(`/stores/${store}/streamed-list-objects`, body, (bytes) => {
    const text = rest + decoder.decode(bytes, { stream: true });
    const end = text.lastIndexOf('\n');
    rest = text.slice(end + 1);
    if (end === -1) return;
    if (!scan) {
      // The lines received so far parsed as one JSON array: one parse per read, not per line.
      for (const line of JSON.parse(`[${text.slice(0, end).replaceAll('\n', ',')}]`) as StreamLine[]) parseLine(line);
      return;
    }
    // The line scan client: a line that is exactly LINE_HEAD + s + `"}}` with no `"` or `\` in s
    // is the result {object: s} (JSON.parse would give the same s: nothing in it is escaped), read
    // with two indexOf and one slice; every other line (a token line, an escaped id, an error)
    // goes through JSON.parse. It accepts every body JSON.parse accepts, with the same objects.
    let backslash = text.indexOf('\\');
    if (backslash === -1) backslash = end;
    for (let from = 0; from < end;) {
      const nl = text.indexOf('\n', from);
      if (backslash < from) {
        backslash = text.indexOf('\\', from);
        if (backslash === -1) backslash = end;
      }
      const quote = text.indexOf('"', from + LINE_HEAD.length);
      if (
        quote === nl - 3 &&
        backslash > nl &&
        text.startsWith(LINE_HEAD, from) &&
        text.charCodeAt(nl - 2) === 0x7d &&
        text.charCodeAt(nl - 1) === 0x7d
      )
        objects.push(text.slice(from + LINE_HEAD.length, quote));
      else parseLine(JSON.parse(text.slice(from, nl)) as StreamLine);
      from = nl + 1;
    }
  });
  return { objects, last };
}

/** One stream through latch/client's `ObjectStreamReader`, its objects appended to `out`; the last token. */
async function streamLatch(body: unknown, out: string[]): Promise<string> {
  const reader = new ObjectStreamReader();
  await request(`/stores/${store}/streamed-list-objects`, body, (bytes) => reader.read(bytes, out));
  reader.end(out);
  return reader.token ?? '';
}

async function streamedPagesLatch(): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do token = await streamLatch({ ...objectsQuery, page_size: PAGE, continuation_token: token }, out);
  while (token !== '');
  return out;
}

async function streamedWholeLatch(): Promise<string[]> {
  const out: string[] = [];
  await streamLatch(objectsQuery, out);
  return out;
}

async function streamedPages(scan = false): Promise<string[]> {
  const out: string[] = [];
  let token = '';
  do {
    const r = await stream({ ...objectsQuery, page_size: PAGE, continuation_token: token }, scan);
    for (const o of r.objects) out.push(o);
    token = r.last;
  } while (token !== '');
  return out;
}

async function streamedWhole(scan = false): Promise<string[]> {
  return (await stream(objectsQuery, scan)).objects;
}

const sdk = new OpenFgaClient({ apiUrl: base, storeId: store, credentials: { method: CredentialsMethod.None } });

/** The unpaged stream through the OpenFGA JS SDK's `streamedListObjects`, an object at a time. */
async function sdkWhole(): Promise<string[]> {
  const out: string[] = [];
  for await (const r of sdk.streamedListObjects(objectsQuery)) out.push(r.object);
  return out;
}

const ways: [string, () => Promise<string[]>][] = (
  [
    ['ListObjects paged', pagedObjects],
    ['StreamedListObjects paged', () => streamedPages()],
    ['StreamedListObjects unpaged', () => streamedWhole()],
    ['StreamedListObjects paged, line scan', () => streamedPages(true)],
    ['StreamedListObjects unpaged, line scan', () => streamedWhole(true)],
    ['StreamedListObjects unpaged, OpenFGA SDK', sdkWhole],
    ['ListObjects paged, latch client', pagedObjectsLatch],
    ['StreamedListObjects paged, latch client', streamedPagesLatch],
    ['StreamedListObjects unpaged, latch client', streamedWholeLatch],
    ...(values.users || values.split
      ? ([
          ['ListUsers paged', () => pagedUsers()],
          ['ListUsers paged, ids', () => pagedUsers(true)],
          ['ListUsers paged, latch client', pagedUsersLatch],
        ] as [string, () => Promise<string[]>][])
      : []),
  ] as [string, () => Promise<string[]>][]
).filter(([name]) => values.only === undefined || name.includes(values.only));
// Warm the listing cache (the first page computes the complete answer once per store state).
for (const [name, run] of ways) {
  complete(await run(), name);
}
const times = new Map<string, number[]>(ways.map(([name]) => [name, []]));
// CPU time of this process (the client, and the server unless --split), which moves less with
// other processes' load than the wall clock; with --split the server's own, from /proc.
const cpu = new Map<string, number[]>(ways.map(([name]) => [name, []]));
const serverCpu = new Map<string, number[]>(ways.map(([name]) => [name, []]));
const session = values['cpu-profile'] === undefined ? undefined : new Session();
target.profile?.();
if (session) {
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
}
for (let r = 0; r < ROUNDS; r++) {
  for (const [name, run] of ways) {
    const c0 = process.cpuUsage();
    const s0 = target.cpu();
    const t0 = performance.now();
    const items = await run();
    times.get(name)?.push(performance.now() - t0);
    const c = process.cpuUsage(c0);
    cpu.get(name)?.push(c.user + c.system);
    const s1 = target.cpu();
    if (s0 !== undefined && s1 !== undefined) serverCpu.get(name)?.push(s1 - s0);
    complete(items, name);
  }
}
if (session && values['cpu-profile']) {
  const { profile } = await session.post('Profiler.stop');
  writeFileSync(values['cpu-profile'], JSON.stringify(profile));
  session.disconnect();
}
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
for (const [name, xs] of times) {
  const ms = median(xs);
  const client = median(cpu.get(name) ?? []) / N;
  const server = values.split ? median(serverCpu.get(name) ?? []) / N : undefined;
  const split =
    server === undefined
      ? `${client.toFixed(2)} µs CPU per result, client and server`
      : `${(client + server).toFixed(2)} µs CPU per result (client ${client.toFixed(2)}, server ${server.toFixed(2)})`;
  const each = xs.map((x) => Math.round((N / x) * 1000)).join(', ');
  console.log(
    `${name}: ${N} results in ${ms.toFixed(0)} ms = ${Math.round((N / ms) * 1000)} results/s, ${split} ` +
      `(median of ${ROUNDS}: ${each} results/s; pages of ${PAGE})`,
  );
}
// The stream against paging with the same client, round by round (the ways interleave in a round).
const PAGED = 'ListObjects paged, latch client';
for (const stream of ['StreamedListObjects unpaged, latch client', 'StreamedListObjects paged, latch client']) {
  const paged = times.get(PAGED);
  const streamed = times.get(stream);
  if (paged === undefined || streamed === undefined) continue;
  const ratios = streamed.map((t, r) => ((paged[r] as number) / t).toFixed(2));
  console.log(`${stream} / ${PAGED}, results/s per round: ${ratios.join(', ')}`);
}
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
agent.destroy();
await target.close();
