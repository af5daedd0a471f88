// `latch bench`: synthetic data that respects the model and the spec, and a report with
// throughput, percentiles, memory per tuple and the slowest relation paths.

import { describe, expect, it } from 'vitest';
import { DEFAULT_SPEC, generateTuples, parsePairs } from '../../src/cli/bench-data.js';
import type { BenchReport } from '../../src/cli/bench-cmd.js';
import { percentile } from '../../src/cli/bench-stats.js';
import { ProgressBar } from '../../src/cli/common.js';
import { loadModelFile, loadStoreFile } from '../../src/cli/store-file.js';
import { latch } from './helpers.js';

const SMALL = ['--checks', '200', '--batch-checks', '10', '--list-objects', '20', '--list-users', '20'];

describe('synthetic data', () => {
  it('follows the type restrictions, the counts, the fan-out and the depth, deterministically', async () => {
    const { model } = await loadModelFile('test/fixtures/models/nested-groups.json');
    const spec = {
      ...DEFAULT_SPEC,
      objects: { user: 50, group: 40, resource: 10 },
      fanout: { member: 3, 'resource#reader': 2 },
      depth: 3,
    };
    const tuples = generateTuples(model, spec);
    expect(generateTuples(model, spec)).toEqual(tuples);
    expect(generateTuples(model, { ...spec, seed: 2 })).not.toEqual(tuples);
    const ids = (type: string, n: number) => new Set(Array.from({ length: n }, (_, i) => `${type}:${type}_${i}`));
    const groups = ids('group', 40);
    const users = ids('user', 50);
    for (const t of tuples) {
      const [objType] = t.object.split(':');
      if (t.relation === 'member') {
        expect(groups.has(t.object)).toBe(true);
        const bare = t.user.replace(/#member$/, '');
        expect(users.has(t.user) || (t.user.endsWith('#member') && groups.has(bare))).toBe(true);
      }
      if (t.relation === 'parent') expect(groups.has(t.user)).toBe(true);
      if (objType === 'resource') expect(['org', 'reader', 'admin']).toContain(t.relation);
    }
    // Same-type links always go one level deeper, so nesting never exceeds the depth.
    const level = (id: string) => Number(id.split('_')[1]?.split('#')[0]) % (spec.depth + 1);
    for (const t of tuples.filter((t) => t.user.startsWith('group:'))) {
      if (t.object.startsWith('group:')) expect(level(t.user)).toBe(level(t.object) + 1);
    }
    const perGroup = tuples.filter((t) => t.relation === 'member' && t.object === 'group:group_0').length;
    expect(perGroup).toBeLessThanOrEqual(3);
    expect(perGroup).toBeGreaterThan(0);
  });

  it('parses name=N pairs and rejects anything else', () => {
    expect(parsePairs(['user=10', 'doc#viewer=3'], '--x')).toEqual({ user: 10, 'doc#viewer': 3 });
    expect(() => parsePairs(['user'], '--objects')).toThrow(/--objects takes name=N/);
  });

  it('draws a progress bar only on a terminal, ending with a newline', () => {
    let drawn = '';
    const io = (tty: boolean) => ({ out: () => {}, err: (t: string) => void (drawn += t), env: {}, errIsTTY: tty });
    new ProgressBar(io(false), 'x').update(5, 5);
    expect(drawn).toBe('');
    const bar = new ProgressBar(io(true), 'load');
    bar.update(1, 4);
    bar.update(4, 4);
    expect(drawn).toBe(
      `\rload [########----------------------] 25% 1/4\rload [##############################] 100% 4/4\n`,
    );
  });

  it('nearest-rank percentiles', () => {
    const v = Array.from({ length: 100 }, (_, i) => i + 1);
    expect([percentile(v, 50), percentile(v, 95), percentile(v, 99), percentile([], 50)]).toEqual([50, 95, 99, 0]);
  });
});

describe('latch bench', () => {
  it('measures a store file with its own tuples (JSON report)', async () => {
    const r = await latch(['bench', 'test/fixtures/github.fga.yaml', '--json', '--workers', '0', ...SMALL]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.out) as BenchReport;
    const file = await loadStoreFile('test/fixtures/github.fga.yaml');
    expect(report.tuples).toBe(file.tuples.length);
    expect(report.operations.map((o) => [o.op, o.count])).toEqual([
      ['check', 200],
      ['batch-check', 10],
      ['list-objects', 20],
      ['list-users', 20],
    ]);
    for (const o of report.operations) {
      expect(o.errors).toBe(0);
      expect(o.throughput).toBeGreaterThan(0);
      expect(o.p50).toBeLessThanOrEqual(o.p95);
      expect(o.p95).toBeLessThanOrEqual(o.p99);
      expect(o.p99).toBeLessThanOrEqual(o.max);
    }
    const relations = new Set(
      file.model?.type_definitions.flatMap((t) => Object.keys(t.relations ?? {}).map((r) => `${t.type}#${r}`)),
    );
    expect(report.slowest.length).toBeGreaterThan(0);
    for (const s of report.slowest) expect(relations.has(s.path)).toBe(true);
    expect(report.slowest.map((s) => s.p99)).toEqual([...report.slowest.map((s) => s.p99)].sort((a, b) => b - a));
  });

  it('generates synthetic data from flags and prints a text report naming the slowest paths', async () => {
    const r = await latch([
      'bench',
      'test/fixtures/models/documents.fga',
      '--objects',
      'user=300',
      '--objects',
      'folder=60',
      '--objects',
      'document=300',
      '--fanout',
      'viewer=3',
      '--depth',
      '4',
      '--workers',
      '0',
      ...SMALL,
    ]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^latch bench — \d+ synthetic tuples \(depth 4, seed 1\)/);
    expect(r.out).toMatch(/memory .* ≈ [\d,]+ bytes\/tuple/);
    for (const op of ['check', 'batch-check', 'list-objects', 'list-users'])
      expect(r.out).toMatch(new RegExp(`^${op}\\s+\\d+\\s+0\\s+`, 'm'));
    expect(r.out).toContain('Slowest relation paths (by p99):');
    expect(r.out).toMatch(/^ {2}(check|batch-check|list-objects|list-users)\s+(folder|document)#\w+\s+p99/m);
    expect(r.err).toBe(''); // no progress bar when stderr is not a terminal
  });

  it('a bad spec is a usage error', async () => {
    const r = await latch(['bench', 'test/fixtures/models/documents.fga', '--objects', 'lots']);
    expect(r.code).toBe(2);
    expect(r.err).toContain('--objects takes name=N');
  });
});
