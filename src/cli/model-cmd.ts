// `latch model write|get|list` against a server, and `model validate|transform` offline (as
// `fga model validate|transform` do). Input models are DSL (`.fga`), JSON (`.json`, or any text
// starting with `{`) or a modular `fga.mod`; `get` prints DSL by default, JSON with
// `--format json`.

import { readFile } from 'node:fs/promises';
import { AppError } from '../errors.js';
import { dslToModel, modelToDsl } from '../model/dsl.js';
import { validateModel } from '../model/index.js';
import { type Args, UsageError } from './args.js';
import { type Command, MODEL_FLAG, SERVER_FLAGS, STORE_FLAG, clientFrom, printJson } from './common.js';
import { loadModelFile, parseModelText } from './store-file.js';
import { FileFormatError } from './tuple-file.js';
import { modelImpactCommands } from './model-impact-cmd.js';
import { migrateModelCommand } from './model-migrate-cmd.js';
import { modelShadowCommands } from './model-shadow-cmd.js';

const write: Command = {
  spec: {
    path: 'model write',
    summary: 'Write a new authorization model (DSL, JSON or fga.mod)',
    positionals: [{ name: 'file', optional: true, help: 'Model file (.fga, .json, fga.mod); or use --inline' }],
    flags: [
      STORE_FLAG,
      { name: 'inline', kind: 'string', value: '<model>', help: 'Model text (DSL or JSON) instead of a file' },
      ...SERVER_FLAGS,
    ],
    examples: ['latch model write --store-id 01J… model.fga', 'latch model write --store-id 01J… modules/fga.mod'],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const file = args.arg('file');
    const inline = args.string('inline');
    if ((file === undefined) === (inline === undefined)) {
      throw new UsageError('give exactly one of <file> or --inline');
    }
    const client = clientFrom(args);
    const model = file !== undefined ? (await loadModelFile(file)).model : parseModelText(inline as string);
    printJson(io, { authorization_model_id: await client.writeModel(storeId, model) });
    return 0;
  },
};

const get: Command = {
  spec: {
    path: 'model get',
    summary: 'Show a model (the latest unless --model-id)',
    positionals: [],
    flags: [
      STORE_FLAG,
      MODEL_FLAG,
      {
        name: 'format',
        kind: 'string',
        value: '<fmt>',
        choices: ['fga', 'json'],
        default: 'fga',
        help: 'Output format: DSL or JSON',
      },
      ...SERVER_FLAGS,
    ],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const client = clientFrom(args);
    const modelId = args.string('model-id');
    const model = modelId ? await client.getModel(storeId, modelId) : await client.latestModel(storeId);
    if (!model) {
      io.err(`latch model get: store ${storeId} has no model\n`);
      return 1;
    }
    if (args.string('format') === 'json') printJson(io, { authorization_model: model });
    else {
      const { id, ...input } = model;
      io.out(`# model ${id}\n${modelToDsl(input)}`);
    }
    return 0;
  },
};

const list: Command = {
  spec: {
    path: 'model list',
    summary: 'List the models of a store, newest first',
    positionals: [],
    flags: [
      STORE_FLAG,
      {
        name: 'max-pages',
        kind: 'integer',
        min: 0,
        value: '<n>',
        default: '0 (all)',
        help: 'Stop after this many pages',
      },
      ...SERVER_FLAGS,
    ],
  },
  async run(args, io) {
    const storeId = args.require('store-id', 'or set LATCH_STORE_ID');
    const client = clientFrom(args);
    const models = [];
    let token = '';
    let pages = 0;
    const max = args.int('max-pages') ?? 0;
    do {
      const page = await client.listModels(storeId, { pageSize: 100, continuationToken: token || undefined });
      models.push(...page.authorization_models);
      token = page.continuation_token;
    } while (token && (max === 0 || ++pages < max));
    printJson(io, { authorization_models: models, continuation_token: token });
    return 0;
  },
};

/** The model file of `validate`/`transform`: the positional, or `--file` (the `fga` spelling). */
function modelPath(args: Args): string {
  const file = args.arg('file');
  const flag = args.string('file');
  if ((file === undefined) === (flag === undefined)) throw new UsageError('give the model file (or --file), once');
  return (file ?? flag) as string;
}

const FILE_ARGS = {
  positionals: [{ name: 'file', optional: true, help: 'Model file (.fga, .json, fga.mod)' }],
};

const validate: Command = {
  spec: {
    path: 'model validate',
    summary: 'Check a model file as the server would (offline); exit 1 when it is not valid',
    ...FILE_ARGS,
    flags: [{ name: 'file', kind: 'string', value: '<file>', help: 'The model file (instead of the argument)' }],
    examples: ['latch model validate model.fga', 'latch model validate --file modules/fga.mod'],
  },
  async run(args, io) {
    try {
      validateModel((await loadModelFile(modelPath(args))).model);
    } catch (err) {
      if (!(err instanceof AppError) && !(err instanceof FileFormatError)) throw err;
      const code = err instanceof AppError ? err.code : 'invalid_file';
      printJson(io, { is_valid: false, error: { code, message: err.message } });
      return 1;
    }
    printJson(io, { is_valid: true });
    return 0;
  },
};

const transform: Command = {
  spec: {
    path: 'model transform',
    summary: 'Turn a model file from DSL into JSON or from JSON into DSL (offline)',
    ...FILE_ARGS,
    flags: [
      { name: 'file', kind: 'string', value: '<file>', help: 'The model file (instead of the argument)' },
      {
        name: 'input-format',
        kind: 'string',
        value: '<fmt>',
        choices: ['fga', 'json'],
        help: 'What the file holds (default: JSON when it starts with {, else DSL)',
      },
    ],
    examples: ['latch model transform model.fga > model.json', 'latch model transform model.json > model.fga'],
  },
  async run(args, io) {
    const path = modelPath(args);
    const text = await readFile(path, 'utf8').catch(() => {
      throw new FileFormatError(`cannot read model file ${path}`);
    });
    const json = (args.string('input-format') ?? (text.trimStart().startsWith('{') ? 'json' : 'fga')) === 'json';
    if (json) io.out(modelToDsl(parseModelText(text)));
    else printJson(io, dslToModel(text));
    return 0;
  },
};

export const modelCommands: readonly Command[] = [
  write,
  get,
  list,
  validate,
  transform,
  ...modelImpactCommands,
  migrateModelCommand,
  ...modelShadowCommands,
];
