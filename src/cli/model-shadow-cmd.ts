// `latch model shadow set|clear|report`: a store's shadow model (docs/changing-models.md, shadow
// evaluation) through the server — attach a written model with a sampling rate, remove it, and
// read the server's counts and newest disagreements (text, or the endpoint's JSON).

import { UsageError } from './args.js';
import { type CliIo, type Command, MODEL_FLAG, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';

const storeOf = (args: Parameters<Command['run']>[0]): string =>
  args.string('store') ?? args.require('store-id', 'or --store, or set LATCH_STORE_ID');
const STORE_ALIAS = { name: 'store', kind: 'string', value: '<id>', help: 'Same as --store-id' } as const;

/** `--sampling` as a number in [0, 1]. */
function sampling(text: string | undefined): number {
  const n = text === undefined ? NaN : Number(text);
  if (text === undefined || text.trim() === '' || !Number.isFinite(n) || n < 0 || n > 1)
    throw new UsageError('--sampling takes a number from 0 to 1 (e.g. 0.1)');
  return n;
}

const set: Command = {
  spec: {
    path: 'model shadow set',
    summary: "Evaluate a share of the store's requests under a written model as well",
    positionals: [],
    flags: [
      STORE_FLAG,
      STORE_ALIAS,
      { ...MODEL_FLAG, help: 'The shadow model (written, not the latest)' },
      { name: 'sampling', kind: 'string', value: '<0..1>', help: 'Share of requests evaluated under it (0 to 1)' },
      ...SERVER_FLAGS,
    ],
    examples: ['latch model shadow set --store-id 01J… --model-id 01K… --sampling 0.1'],
  },
  async run(args, io) {
    const storeId = storeOf(args);
    const modelId = args.require('model-id', 'the shadow model id');
    const body = { authorization_model_id: modelId, sampling: sampling(args.string('sampling')) };
    printJson(io, await clientFrom(args).setShadow(storeId, body));
    return 0;
  },
};

const clear: Command = {
  spec: {
    path: 'model shadow clear',
    summary: "Stop evaluating the store's requests under its shadow model",
    positionals: [],
    flags: [STORE_FLAG, STORE_ALIAS, ...SERVER_FLAGS],
  },
  async run(args, io) {
    await clientFrom(args).clearShadow(storeOf(args));
    io.out('shadow cleared\n');
    return 0;
  },
};

type Json = Record<string, unknown>;

function answerText(a: unknown): string {
  const o = (a ?? {}) as Json;
  if ('allowed' in o) return String(o.allowed);
  if ('objects_count' in o) return `${String(o.objects_count)} objects`;
  const e = (o.error ?? {}) as Json;
  return `error ${String(e.code)}`;
}

function requestText(r: Json): string {
  const k = r.tuple_key as Json | undefined;
  if (k) return `${String(k.object)}#${String(k.relation)}@${String(k.user)}`;
  return `${String(r.type)}#${String(r.relation)}@${String(r.user)}`;
}

function printReport(io: CliIo, r: Json): void {
  const s = r.shadow as Json | null;
  io.out(
    s
      ? `shadow: model ${String(s.authorization_model_id)}, sampling ${String(s.sampling)}\n`
      : `shadow: none (figures of model ${String(r.shadow_model_id ?? '-')})\n`,
  );
  io.out(`evaluated ${String(r.evaluated)}, disagreements ${String(r.disagreements)}, dropped ${String(r.dropped)}\n`);
  for (const d of (r.records ?? []) as Json[]) {
    const diff = d.lost || d.gained ? `; lost ${JSON.stringify(d.lost)}, gained ${JSON.stringify(d.gained)}` : '';
    io.out(
      `${String(d.time)} ${String(d.operation)} ${requestText(d.request as Json)} rev ${String(d.revision)}: ` +
        `${answerText(d.answer)} → shadow ${answerText(d.shadow_answer)}${diff}\n`,
    );
  }
}

const report: Command = {
  spec: {
    path: 'model shadow report',
    summary: "The server's shadow evaluation figures and newest disagreements for the store",
    positionals: [],
    flags: [
      STORE_FLAG,
      STORE_ALIAS,
      {
        name: 'format',
        kind: 'string',
        value: '<fmt>',
        choices: ['text', 'json'],
        default: 'text',
        help: 'Output format',
      },
      ...SERVER_FLAGS,
    ],
    examples: ['latch model shadow report --store-id 01J…'],
  },
  async run(args, io) {
    const r = await clientFrom(args).shadowReport(storeOf(args));
    if (args.string('format') === 'json') printJson(io, r);
    else printReport(io, r);
    return 0;
  },
};

export const modelShadowCommands: readonly Command[] = [set, clear, report];
