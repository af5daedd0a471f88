// `latch model impact` (the impact of a candidate model on a store's tuples, through the server)
// and `latch model diff` (the structural difference of two model files, offline). Both read DSL,
// JSON or fga.mod files, validated locally first so errors carry DSL line and column.

import { createWriteStream, type WriteStream } from 'node:fs';
import { UsageError } from './args.js';
import {
  type CliIo,
  type Command,
  MODEL_FLAG,
  ProgressBar,
  SERVER_FLAGS,
  STORE_FLAG,
  clientFrom,
  printJson,
} from './common.js';
import { loadModelFile } from './store-file.js';
import { compileModel } from '../model/compile.js';
import { diffModels, type ModelDiff } from '../model/diff.js';
import { validateModel } from '../model/validate.js';
import { impactReport } from './impact-report.js';

/** Where the pairs go: NDJSON lines as the server sends them, or CSV rows. */
class PairSink {
  private readonly out: WriteStream;
  count = 0;
  constructor(
    path: string,
    private readonly csv: boolean,
  ) {
    this.out = createWriteStream(path);
    if (csv) this.out.write('change,object,relation,user,detail\n');
  }

  async write(line: Record<string, unknown>): Promise<void> {
    this.count++;
    const text = this.csv ? csvRow(line) : `${JSON.stringify(line)}\n`;
    if (!this.out.write(text)) await new Promise<void>((resolve) => this.out.once('drain', () => resolve()));
  }

  close(): Promise<void> {
    return new Promise((resolve, reject) => this.out.end((err?: Error | null) => (err ? reject(err) : resolve())));
  }
}

const csvField = (v: unknown): string => {
  const s = typeof v === 'string' ? v : v === undefined ? '' : JSON.stringify(v);
  return /[",\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
};

function csvRow(l: Record<string, unknown>): string {
  const codes = (e: unknown): string => (e && typeof e === 'object' && 'code' in e ? String(e.code) : '-');
  const user = l.kind === 'undetermined' ? l.user_type : l.user;
  const detail = l.kind === 'undetermined' ? `base:${codes(l.base)} candidate:${codes(l.candidate)}` : '';
  return `${[l.kind, l.object, l.relation, user, detail].map(csvField).join(',')}\n`;
}

const PAIR_KINDS = new Set(['gained', 'lost', 'undetermined']);

const impact: Command = {
  spec: {
    path: 'model impact',
    summary: 'Who gains and who loses access if a candidate model ships (nothing is written)',
    positionals: [{ name: 'candidate', help: 'Candidate model file (.fga, .json, fga.mod)' }],
    flags: [
      STORE_FLAG,
      { name: 'store', kind: 'string', value: '<id>', help: 'Same as --store-id' },
      { ...MODEL_FLAG, help: 'Model to compare against (default: the latest)' },
      {
        name: 'output',
        short: 'o',
        kind: 'string',
        value: '<file>',
        help: 'Write the pairs there (.csv: CSV, else NDJSON)',
      },
      {
        name: 'format',
        kind: 'string',
        value: '<fmt>',
        choices: ['ndjson', 'csv'],
        help: 'Format of --output (default: from its extension)',
      },
      {
        name: 'sample-size',
        kind: 'integer',
        min: 0,
        value: '<n>',
        default: '10',
        help: 'Rejected tuples listed per reason',
      },
      { name: 'assertions', kind: 'boolean', help: "Also run the base model's assertions against the candidate" },
      {
        name: 'fail-on-change',
        kind: 'boolean',
        help: 'Exit 1 when any access changes, a tuple is rejected or an assertion changes',
      },
      ...SERVER_FLAGS,
    ],
    examples: [
      'latch model impact --store-id 01J… new.fga',
      'latch model impact --store-id 01J… --assertions -o pairs.csv new.fga',
    ],
  },
  async run(args, io) {
    const storeId = args.string('store') ?? args.require('store-id', 'or --store, or set LATCH_STORE_ID');
    const file = args.arg('candidate');
    if (file === undefined) throw new UsageError('give the candidate model file');
    const { model } = await loadModelFile(file);
    const output = args.string('output');
    const csv = (args.string('format') ?? (output?.endsWith('.csv') ? 'csv' : 'ndjson')) === 'csv';
    const sink = output === undefined ? undefined : new PairSink(output, csv);
    const report = impactReport(io, file);
    const bar = new ProgressBar(io, 'impact');
    const body = {
      ...model,
      authorization_model_id: args.string('model-id'),
      options: { sample_size: args.int('sample-size') ?? 10, assertions: args.bool('assertions') },
    };
    try {
      for await (const line of clientFrom(args).impact(storeId, body)) {
        if (line.kind === 'progress') bar.update(Number(line.evaluated), Number(line.total));
        else if (PAIR_KINDS.has(String(line.kind))) await sink?.write(line);
        else report.line(line);
      }
    } finally {
      await sink?.close();
    }
    const changed = report.finish(output, sink?.count);
    return args.bool('fail-on-change') && changed ? 1 : 0;
  },
};

/** A model file, validated and compiled. */
async function compiled(path: string): Promise<ReturnType<typeof compileModel>> {
  const { model } = await loadModelFile(path);
  return compileModel({ ...validateModel(model), id: path });
}

function printDiff(io: CliIo, d: ModelDiff): void {
  for (const t of d.typesAdded) io.out(`+ type ${t}\n`);
  for (const t of d.typesRemoved) io.out(`- type ${t}\n`);
  for (const r of d.relationsAdded) io.out(`+ ${r.type}#${r.relation}: ${r.after}\n`);
  for (const r of d.relationsRemoved) io.out(`- ${r.type}#${r.relation}: ${r.before}\n`);
  for (const r of d.relationsChanged) {
    const name = `${r.type}#${r.relation}`;
    io.out(`~ ${name}: ${r.before}\n  ${' '.repeat(name.length)}→ ${r.after}\n`);
  }
  for (const c of d.conditionsAdded) io.out(`+ condition ${c}\n`);
  for (const c of d.conditionsRemoved) io.out(`- condition ${c}\n`);
  for (const c of d.conditionsChanged) io.out(`~ condition ${c}\n`);
}

const diff: Command = {
  spec: {
    path: 'model diff',
    summary: 'Structural difference of two model files (offline)',
    positionals: [
      { name: 'from', help: 'Model file (.fga, .json, fga.mod)' },
      { name: 'to', help: 'Model file (.fga, .json, fga.mod)' },
    ],
    flags: [
      {
        name: 'format',
        kind: 'string',
        value: '<fmt>',
        choices: ['text', 'json'],
        default: 'text',
        help: 'Output format',
      },
    ],
    examples: ['latch model diff model.fga new.fga'],
  },
  async run(args, io) {
    const from = args.arg('from');
    const to = args.arg('to');
    if (from === undefined || to === undefined) throw new UsageError('give two model files');
    const d = diffModels(await compiled(from), await compiled(to));
    if (args.string('format') === 'json') printJson(io, d);
    else printDiff(io, d);
    return 0;
  },
};

export const modelImpactCommands: readonly Command[] = [impact, diff];
