// User-space instructions per listed result of the server, counted by valgrind's callgrind, for
// each way of a complete listing over HTTP: paged ListObjects, paged and unpaged
// StreamedListObjects, paged ListUsers (N objects / N users on a memory store,
// bench/http/listing-serve.ts). Unlike results/s, the count does not move with the load of other
// processes on a shared machine. Each way runs once uncounted (the listing cache and the JIT
// warm), then once counted; the client runs in this process, uncounted. LATCH_BENCH_BASE names
// another tree of latch (e.g. a checkout of main, node_modules linked) counted the same way.
// Needs `valgrind` on the PATH; records nothing.
//
//   [LATCH_BENCH_BASE=/tmp/list-base] npx tsx bench/http/listing-instructions.ts [--n 20000] [--page 1000] [--only Streamed]

import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const here = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    n: { type: 'string', default: '20000' },
    page: { type: 'string', default: '1000' },
    // Ways whose name holds this text only (e.g. `Streamed`).
    only: { type: 'string', default: '' },
  },
});
const N = Number(values.n);
const PAGE = Number(values.page);

async function underCallgrind(tree: string, out: string): Promise<{ proc: ChildProcess; port: number; store: string }> {
  const args = [
    '--tool=callgrind',
    '--smc-check=all-non-file',
    '--instr-atstart=no',
    `--callgrind-out-file=${out}/cg.%p`,
  ];
  const node = [process.execPath, '--single-threaded', '--import', 'tsx', path.join(here, 'listing-serve.ts'), tree];
  const proc = spawn('valgrind', [...args, ...node, String(N)], { cwd: tree, stdio: ['ignore', 'pipe', 'inherit'] });
  for await (const line of createInterface({ input: proc.stdout as NodeJS.ReadableStream })) {
    const msg = line.startsWith('{') ? (JSON.parse(line) as { port?: number; store?: string }) : {};
    if (msg.port && msg.store) return { proc, port: msg.port, store: msg.store };
  }
  throw new Error(`${tree}: exited before listening under valgrind`);
}

/** Instructions counted so far over callgrind's output files. */
function instructions(out: string): number {
  let total = 0;
  for (const f of readdirSync(out)) {
    const text = readFileSync(path.join(out, f), 'utf8');
    const names = /^events: (.+)$/m.exec(text)?.[1]?.split(' ') ?? [];
    const values = /^totals: (.+)$/m.exec(text)?.[1]?.split(' ').map(Number) ?? [];
    total += values[names.indexOf('Ir')] ?? 0;
  }
  return total;
}

type Way = (base: string, store: string) => Promise<number>;

async function post(url: string, body: unknown): Promise<Record<string, unknown>> {
  const r = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  const json = (await r.json()) as Record<string, unknown>;
  if (r.status >= 300) throw new Error(`${url}: ${r.status} ${JSON.stringify(json)}`);
  return json;
}

const objectsQuery = { type: 'doc', relation: 'viewer', user: 'user:anne' };
const usersQuery = { object: { type: 'doc', id: 'big' }, relation: 'viewer', user_filters: [{ type: 'user' }] };

/** The result lines of one stream and its last line's token; throws on an error line. */
async function stream(url: string, body: unknown): Promise<{ count: number; last: string }> {
  const r = await fetch(url, { method: 'POST', body: JSON.stringify(body) });
  if (r.status !== 200) throw new Error(`stream: ${r.status}`);
  const lines = (await r.text()).split('\n').filter(Boolean);
  let last = '';
  for (const l of lines) {
    const parsed = JSON.parse(l) as { result?: { continuation_token?: string } };
    if (!parsed.result) throw new Error(`stream error: ${l}`);
    last = parsed.result.continuation_token ?? '';
  }
  return { count: lines.length, last };
}

const ways: [string, Way][] = [
  [
    'ListObjects paged',
    async (base, store) => {
      let n = 0;
      let token = '';
      do {
        const r = await post(`${base}/stores/${store}/list-objects`, {
          ...objectsQuery,
          page_size: PAGE,
          continuation_token: token,
        });
        n += (r.objects as unknown[]).length;
        token = r.continuation_token as string;
      } while (token !== '');
      return n;
    },
  ],
  [
    'StreamedListObjects paged',
    async (base, store) => {
      let n = 0;
      let token = '';
      do {
        const r = await stream(`${base}/stores/${store}/streamed-list-objects`, {
          ...objectsQuery,
          page_size: PAGE,
          continuation_token: token,
        });
        n += r.count;
        token = r.last;
      } while (token !== '');
      return n;
    },
  ],
  [
    'StreamedListObjects unpaged',
    async (base, store) => (await stream(`${base}/stores/${store}/streamed-list-objects`, objectsQuery)).count,
  ],
  [
    'ListUsers paged',
    async (base, store) => {
      let n = 0;
      let token = '';
      do {
        const r = await post(`${base}/stores/${store}/list-users`, {
          ...usersQuery,
          page_size: PAGE,
          continuation_token: token,
        });
        n += (r.users as unknown[]).length;
        token = r.continuation_token as string;
      } while (token !== '');
      return n;
    },
  ],
];

async function count(tree: string): Promise<Record<string, number>> {
  const out = mkdtempSync(path.join(tmpdir(), 'latch-callgrind-'));
  const { proc, port, store } = await underCallgrind(tree, out);
  const base = `http://127.0.0.1:${port}`;
  const pid = String(proc.pid);
  const perResult: Record<string, number> = {};
  try {
    for (const [name, run] of ways) {
      if (!name.includes(values.only)) continue;
      for (let i = 0; i < 2; i++) await run(base, store); // the listing cache fills, the JIT warms
      const before = instructions(out);
      execFileSync('callgrind_control', ['-i', 'on', pid], { stdio: 'ignore' });
      const results = await run(base, store);
      execFileSync('callgrind_control', ['-i', 'off', pid], { stdio: 'ignore' });
      execFileSync('callgrind_control', ['-d', pid], { stdio: 'ignore' });
      if (results !== N) throw new Error(`${name}: ${results} of ${N} results`);
      perResult[name] = Math.round((instructions(out) - before) / results);
    }
    return perResult;
  } finally {
    proc.kill('SIGTERM');
    rmSync(out, { recursive: true, force: true });
  }
}

const report: Record<string, unknown> = {
  n: N,
  page: PAGE,
  instructionsPerResult: await count(path.resolve(here, '../..')),
};
if (process.env.LATCH_BENCH_BASE) report.base = await count(path.resolve(process.env.LATCH_BENCH_BASE));
report.loadavg = loadavg().map((x) => Number(x.toFixed(2)));
process.stdout.write(JSON.stringify(report, null, 2) + '\n');
