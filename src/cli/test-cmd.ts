// `latch test <files or globs>`: runs `.fga.yaml` store files against the embedded engine (or a
// server with --api-url) and prints, per test, every failing assertion as expected-versus-got,
// then one summary line. Exit code 0 when everything passed, 1 on any failure (including a file
// that cannot be loaded), 2 on a usage error. `--json` prints the full results instead.

import { type Args, UsageError } from './args.js';
import {
  type CliIo,
  type Command,
  MODEL_FLAG,
  SERVER_FLAGS,
  STORE_FLAG,
  clientFrom,
  describeError,
  printJson,
} from './common.js';
import { expandGlobs } from './glob.js';
import { type CheckResult, type FileResult, type ListResult, runStoreFile } from './runner.js';
import { loadModelFile, loadStoreFile } from './store-file.js';
import { candidateTarget } from './candidate-target.js';
import { type Target, embeddedTarget, remoteTarget } from './target.js';

export const testCommand: Command = {
  spec: {
    path: 'test',
    summary: 'Run the tests of OpenFGA store files (.fga.yaml): expected versus got',
    positionals: [
      {
        name: 'files',
        variadic: true,
        optional: true,
        help: 'Store files or globs (quote globs: "tests/**/*.fga.yaml")',
      },
    ],
    flags: [
      {
        name: 'tests',
        kind: 'list',
        value: '<file>',
        help: 'Store file or glob, as `fga model test --tests` takes it',
      },
      {
        name: 'candidate',
        kind: 'string',
        value: '<model>',
        help: "Run the tests under this model (.fga, .json, fga.mod), written after the file's model and tuples",
      },
      { name: 'json', kind: 'boolean', help: 'Print machine-readable results' },
      { name: 'verbose', short: 'v', kind: 'boolean', help: 'Also list passing assertions' },
      // Explicit only: an exported LATCH_API_URL / LATCH_STORE_ID must not silently move tests off the embedded engine.
      ...SERVER_FLAGS.map((f) =>
        f.name === 'api-url'
          ? { ...f, env: undefined, help: 'Run against this server instead of the embedded engine' }
          : f,
      ),
      {
        ...STORE_FLAG,
        env: undefined,
        help: "With --api-url: run on this store's model and data instead of scratch stores",
      },
      { ...MODEL_FLAG, env: undefined },
    ],
    details:
      'By default the tests run in-process on a fresh in-memory engine. With --api-url they run\n' +
      'against that server: each test creates a scratch store, writes the model and tuples, runs\n' +
      "its queries and deletes the store. With --api-url and --store-id they run on that store's\n" +
      "model (--model-id, else the latest) and data; the file's model is not used and its tuples\n" +
      'are sent as contextual tuples (at most 100 per test).',
    examples: [
      'latch test model.fga.yaml',
      'latch test "test/fixtures/*.fga.yaml" --json',
      'latch test store.fga.yaml --api-url http://127.0.0.1:8080',
      'latch test --candidate new.fga store.fga.yaml',
    ],
  },
  async run(args: Args, io: CliIo): Promise<number> {
    const patterns = [...args.args('files'), ...args.list('tests')];
    if (patterns.length === 0) throw new UsageError('missing argument <files>');
    const files = await expandGlobs(patterns);
    if (files.length === 0) {
      io.err('latch test: no store file matched\n');
      return 1;
    }
    if (args.has('store-id') && !args.has('api-url')) throw new UsageError('--store-id needs --api-url');
    const existing = args.has('store-id')
      ? { storeId: args.require('store-id'), modelId: args.string('model-id') }
      : undefined;
    const candidatePath = args.string('candidate');
    if (candidatePath !== undefined && existing)
      throw new UsageError('--candidate cannot run on an existing store (--store-id)');
    const candidate = candidatePath === undefined ? undefined : (await loadModelFile(candidatePath)).model;
    const inner: Target = args.has('api-url') ? remoteTarget(clientFrom(args), existing) : await embeddedTarget();
    const target = candidate ? candidateTarget(inner, candidate) : inner;
    if (candidatePath !== undefined && !args.bool('json')) io.out(`candidate model: ${candidatePath}\n`);
    const results: FileResult[] = [];
    try {
      for (const path of files) {
        let result: FileResult;
        try {
          result = await runStoreFile(await loadStoreFile(path), target);
        } catch (err) {
          result = { file: path, name: path, passed: false, error: describeError(err), tests: [] };
        }
        results.push(result);
        if (!args.bool('json')) io.out(renderFile(result, args.bool('verbose')));
      }
    } finally {
      await target.close();
    }
    const summary = summarize(results);
    if (args.bool('json')) printJson(io, { passed: summary.passed, summary, files: results });
    else io.out(summaryLine(summary) + '\n');
    return summary.passed ? 0 : 1;
  },
};

interface Summary {
  passed: boolean;
  files: { total: number; failed: number };
  tests: { total: number; failed: number };
  checks: { total: number; failed: number };
  listObjects: { total: number; failed: number };
  listUsers: { total: number; failed: number };
}

function summarize(results: readonly FileResult[]): Summary {
  const count = (items: readonly { passed: boolean }[]) => ({
    total: items.length,
    failed: items.filter((i) => !i.passed).length,
  });
  const tests = results.flatMap((f) => f.tests);
  return {
    passed: results.every((f) => f.passed),
    files: count(results),
    tests: count(tests),
    checks: count(tests.flatMap((t) => t.checks)),
    listObjects: count(tests.flatMap((t) => t.listObjects)),
    listUsers: count(tests.flatMap((t) => t.listUsers)),
  };
}

function summaryLine(s: Summary): string {
  const part = (label: string, c: { total: number; failed: number }) => `${label} ${c.total - c.failed}/${c.total}`;
  const verdict = s.passed ? 'PASS' : 'FAIL';
  return `${verdict}: ${part('files', s.files)}, ${part('tests', s.tests)} passed; ${part('checks', s.checks)}, ${part('list_objects', s.listObjects)}, ${part('list_users', s.listUsers)}`;
}

function renderFile(f: FileResult, verbose: boolean): string {
  const lines = [`${f.passed ? '✓' : '✗'} ${f.file}${f.name !== f.file ? ` (${f.name})` : ''}`];
  if (f.error) lines.push(`    error: ${f.error}`);
  for (const t of f.tests) {
    const counts = [
      t.checks.length ? `checks ${t.checks.filter((c) => c.passed).length}/${t.checks.length}` : '',
      t.listObjects.length
        ? `list_objects ${t.listObjects.filter((c) => c.passed).length}/${t.listObjects.length}`
        : '',
      t.listUsers.length ? `list_users ${t.listUsers.filter((c) => c.passed).length}/${t.listUsers.length}` : '',
    ].filter(Boolean);
    lines.push(`  ${t.passed ? '✓' : '✗'} ${t.name}${counts.length ? ` — ${counts.join(', ')}` : ''}`);
    if (t.error) lines.push(`      error: ${t.error}`);
    for (const c of t.checks) if (verbose || !c.passed) lines.push(renderCheck(c));
    for (const l of [...t.listObjects, ...t.listUsers]) if (verbose || !l.passed) lines.push(...renderList(l));
  }
  return lines.join('\n') + '\n';
}

function ctx(context: unknown): string {
  return context === undefined ? '' : `, context=${JSON.stringify(context)}`;
}

function renderCheck(c: CheckResult): string {
  const mark = c.passed ? '✓' : '✗';
  const got = c.error !== undefined ? `error: ${c.error}` : `got ${c.got}`;
  return `      ${mark} Check(user=${c.user}, relation=${c.relation}, object=${c.object}${ctx(c.context)}): expected ${c.expected}, ${got}`;
}

function renderList(l: ListResult): string[] {
  const mark = l.passed ? '✓' : '✗';
  const req =
    l.kind === 'list_objects'
      ? `ListObjects(user=${String(l.request.user)}, relation=${l.relation}, type=${String(l.request.type)}${ctx(l.context)})`
      : `ListUsers(object=${String(l.request.object)}, relation=${l.relation}, user_filter=${JSON.stringify(l.request.user_filter)}${ctx(l.context)})`;
  const show = (xs: readonly string[]) => `[${xs.join(', ')}]`;
  if (l.error !== undefined)
    return [`      ${mark} ${req}: expected ${show([...l.expected].sort())}, error: ${l.error}`];
  const lines = [`      ${mark} ${req}: expected ${show([...l.expected].sort())}, got ${show(l.got ?? [])}`];
  if (l.missing.length) lines.push(`          missing:    ${l.missing.join(', ')}`);
  if (l.unexpected.length) lines.push(`          unexpected: ${l.unexpected.join(', ')}`);
  return lines;
}
