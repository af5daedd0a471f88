// `latch model migrate`: a relation rename (or split) shipped with its data, through the server's
// MigrateRelations steps (docs/changing-models.md, "Migrating data"). The progress (the server's
// cursor, which names store revisions) is kept in a state file after every step, written to a
// temporary file and renamed, so an interrupted run resumes where it stopped; losing the file only
// costs a second copy (every step ignores what is already there).

import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { UsageError } from './args.js';
import { type Command, MODEL_FLAG, ProgressBar, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';
import type { MigrateReply } from './http-client.js';
import { loadModelFile } from './store-file.js';

interface State {
  readonly store: string;
  readonly maps: readonly string[];
  readonly cursor: string;
  readonly phase: string;
  readonly updated_at: string;
}

function readState(path: string, store: string, maps: readonly string[]): State | undefined {
  if (!existsSync(path)) return undefined;
  const state = JSON.parse(readFileSync(path, 'utf8')) as State;
  if (state.store !== store || state.maps.join(',') !== maps.join(','))
    throw new UsageError(`${path} belongs to another migration (${state.maps.join(', ')}): remove it or give --state`);
  return state;
}

function saveState(path: string, state: State): void {
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`);
  renameSync(`${path}.tmp`, path);
}

export const migrateModelCommand: Command = {
  spec: {
    path: 'model migrate',
    summary: "Copy a relation's tuples to its new name (resumable), and delete the old ones once shipped",
    positionals: [],
    flags: [
      STORE_FLAG,
      { name: 'store', kind: 'string', value: '<id>', help: 'Same as --store-id' },
      {
        name: 'map',
        kind: 'list',
        value: '<type#old=type#new>',
        help: 'Relation to copy, and its new name (repeatable)',
      },
      { name: 'model', kind: 'string', value: '<file>', help: 'The new model (not written yet) the copies must fit' },
      { ...MODEL_FLAG, help: 'Or a written model the copies must fit (default: the latest)' },
      { name: 'dry-run', kind: 'boolean', help: 'Count the tuples to copy and those the new model refuses' },
      {
        name: 'finish',
        kind: 'boolean',
        help: 'Once the new model is the latest: complete the copy, delete the old tuples',
      },
      { name: 'state', kind: 'string', value: '<file>', help: 'Progress file (default latch-migrate-<store>.json)' },
      { name: 'batch', kind: 'integer', min: 1, value: '<n>', default: '1000', help: 'Tuples per step (≤ 1000)' },
      ...SERVER_FLAGS,
    ],
    examples: [
      "latch model migrate --store-id 01J… --map 'document#reader=document#viewer' --model new.fga --dry-run",
      "latch model migrate --store-id 01J… --map 'document#reader=document#viewer' --model new.fga",
      "latch model migrate --store-id 01J… --map 'document#reader=document#viewer' --finish",
    ],
  },
  async run(args, io) {
    const storeId = args.string('store') ?? args.require('store-id', 'or --store, or set LATCH_STORE_ID');
    const maps = args.list('map');
    if (maps.length === 0) throw new UsageError("give at least one --map 'type#old=type#new'");
    const dryRun = args.bool('dry-run');
    const finish = args.bool('finish');
    if (dryRun && finish) throw new UsageError('--dry-run and --finish exclude each other');
    const file = args.string('model');
    const candidate = file === undefined || finish ? undefined : (await loadModelFile(file)).model;
    const statePath = args.string('state') ?? `latch-migrate-${storeId}.json`;
    const state = dryRun ? undefined : readState(statePath, storeId, maps);
    const client = clientFrom(args);
    const bar = new ProgressBar(io, dryRun ? 'counting' : finish ? 'finishing' : 'copying');
    const totals = { matching: 0, copied: 0, carried: 0, deleted: 0, rejected: 0, steps: 0 };
    const sample: MigrateReply['rejected_sample'] = [];
    let cursor = state?.cursor;
    let last: MigrateReply | undefined;
    do {
      last = await client.migrateRelations(storeId, {
        maps,
        mode: dryRun ? 'dry_run' : finish ? 'finish' : 'copy',
        ...(candidate ? { candidate } : {}),
        ...(args.string('model-id') ? { authorization_model_id: args.string('model-id') } : {}),
        ...(cursor ? { cursor } : {}),
        limit: Math.min(args.int('batch') ?? 1000, 1000),
      });
      cursor = last.cursor;
      for (const k of ['matching', 'copied', 'carried', 'deleted', 'rejected'] as const) totals[k] += last[k];
      totals.steps++;
      sample.push(...last.rejected_sample.slice(0, 10 - sample.length));
      if (!dryRun)
        saveState(statePath, { store: storeId, maps, cursor, phase: last.phase, updated_at: new Date().toISOString() });
      bar.update(
        totals.matching + totals.carried + totals.deleted,
        totals.matching + totals.carried + totals.deleted + 1,
      );
    } while (!last.done);
    bar.update(1, 1);
    const report = dryRun
      ? { matching: totals.matching, rejected: totals.rejected, rejected_sample: sample, revision: last.revision }
      : { ...totals, phase: last.phase, revision: last.revision, state: statePath };
    printJson(io, report);
    return 0;
  },
};
