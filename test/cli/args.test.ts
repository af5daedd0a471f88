// Every command has --help (exit 0); a wrong flag or a missing argument says what is wrong and exits 2.

import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError, type CommandSpec } from '../../src/cli/args.js';
import { latch } from './helpers.js';
import { LATCH_ENTRY } from '../support/latch-process.js';

const COMMANDS = [
  'test',
  'bench',
  'migrate',
  'changes',
  'store create',
  'store list',
  'store get',
  'store delete',
  'store import',
  'store export',
  'model write',
  'model get',
  'model list',
  'model validate',
  'model transform',
  'tuple write',
  'tuple delete',
  'tuple read',
  'tuple import',
  'query check',
  'query batch-check',
  'query list-objects',
  'query list-users',
  'query expand',
  'query list-relations',
  'client create',
  'client list',
  'client rotate',
  'client revoke',
];

describe('--help', () => {
  it.each(COMMANDS)('latch %s --help exits 0 and shows usage and options', async (cmd) => {
    const r = await latch([...cmd.split(' '), '--help']);
    expect(r.code).toBe(0);
    expect(r.out).toContain(`Usage: latch ${cmd}`);
    expect(r.out).toContain('--help');
    expect(r.err).toBe('');
  });

  it.each(['store', 'model', 'tuple', 'query', 'client'])('latch %s --help lists its subcommands', async (group) => {
    const r = await latch([group, '--help']);
    expect(r.code).toBe(0);
    for (const c of COMMANDS.filter((c) => c.startsWith(group + ' '))) expect(r.out).toContain(c.split(' ')[1]);
  });
});

describe('usage errors exit 2 with a message', () => {
  it.each(COMMANDS)('latch %s --no-such-flag', async (cmd) => {
    const r = await latch([...cmd.split(' '), '--no-such-flag']);
    expect(r.code).toBe(2);
    expect(r.err).toContain(`latch ${cmd}: unknown option '--no-such-flag'`);
    expect(r.err).toContain(`latch ${cmd} --help`);
  });

  const missing: [string[], string][] = [
    [['test'], 'missing argument <files>'],
    [['bench'], 'missing argument <file>'],
    [['store', 'create', '--api-url', 'http://127.0.0.1:1'], 'missing --name'],
    [['store', 'get', '--api-url', 'http://127.0.0.1:1'], 'missing --store-id'],
    [['store', 'import', '--api-url', 'http://127.0.0.1:1'], 'missing --file'],
    [['store', 'list'], 'missing --api-url'],
    [
      ['model', 'write', '--store-id', 'X', '--api-url', 'http://127.0.0.1:1'],
      'give exactly one of <file> or --inline',
    ],
    [
      ['tuple', 'write', '--store-id', 'X', '--api-url', 'http://127.0.0.1:1', 'user:anne', 'viewer'],
      'missing argument <object>',
    ],
    [['tuple', 'import', '--store-id', 'X', '--api-url', 'http://127.0.0.1:1'], 'missing --file'],
    [['query', 'check', '--store-id', 'X', 'user:anne', 'viewer'], 'missing argument <object>'],
    [['query', 'list-users', '--store-id', 'X', '--api-url', 'http://127.0.0.1:1'], 'missing --object'],
    [['query', 'expand', '--store-id', 'X'], 'missing argument <relation>'],
    [['query', 'check', 'a', 'b', 'c', 'd'], "unexpected argument 'd'"],
    [['store', 'list', '--api-url'], 'option --api-url needs a value'],
    [['store', 'list', '--api-url', 'ftp://x'], '--api-url must start with http:// or https://'],
    [['bench', 'x.fga', '--checks', 'many'], '--checks must be an integer'],
    [['model', 'get', '--format', 'xml'], '--format must be one of fga, json'],
    [
      [
        'query',
        'check',
        '--api-url',
        'http://127.0.0.1:1',
        '--store-id',
        'X',
        '--context',
        '[1]',
        'user:a',
        'r',
        'o:1',
      ],
      '--context must be a JSON object',
    ],
  ];
  it.each(missing)('latch %j', async (argv, message) => {
    const r = await latch(argv);
    expect(r.code).toBe(2);
    expect(r.err).toContain(message);
  });

  it('an unknown subcommand exits 2 and lists the group', async () => {
    const r = await latch(['store', 'frobnicate']);
    expect(r.code).toBe(2);
    expect(r.err).toContain("unknown command 'frobnicate'");
    expect(r.err).toContain('export');
  });

  it('environment variables fill absent flags', async () => {
    const r = await latch(['store', 'get'], { LATCH_API_URL: 'http://127.0.0.1:1' });
    expect(r.code).toBe(2);
    expect(r.err).toContain('missing --store-id');
  });
});

describe('parseArgs', () => {
  const spec: CommandSpec = {
    path: 'x',
    summary: 's',
    positionals: [
      { name: 'a', help: '' },
      { name: 'rest', help: '', variadic: true, optional: true },
    ],
    flags: [
      { name: 'name', kind: 'string', help: '', env: 'X_NAME' },
      { name: 'n', kind: 'integer', help: '', min: 1 },
      { name: 'tag', kind: 'list', help: '' },
      { name: 'json', kind: 'boolean', short: 'j', help: '' },
    ],
  };

  it('reads --flag value, --flag=value, short booleans, repeated lists and -- positionals', () => {
    const a = parseArgs(spec, ['one', '--name=x', '--n', '3', '--tag', 'a', '--tag=b', '-j', 'two', '--', '--three']);
    expect(a.arg('a')).toBe('one');
    expect(a.args('rest')).toEqual(['two', '--three']);
    expect(a.string('name')).toBe('x');
    expect(a.int('n')).toBe(3);
    expect(a.list('tag')).toEqual(['a', 'b']);
    expect(a.bool('json')).toBe(true);
  });

  it('takes `--flag false` as well as `--flag=false` for a boolean, and leaves other words positional', () => {
    expect(parseArgs(spec, ['a', '--json', 'false']).bool('json')).toBe(false);
    expect(parseArgs(spec, ['a', '--json=false']).bool('json')).toBe(false);
    expect(parseArgs(spec, ['a', '--json', 'true']).bool('json')).toBe(true);
    const last = parseArgs(spec, ['--json', 'a', 'b']);
    expect([last.bool('json'), last.arg('a'), last.args('rest')]).toEqual([true, 'a', ['b']]);
  });

  it('prefers the flag over the environment, and uses the environment otherwise', () => {
    expect(parseArgs(spec, ['a', '--name', 'flag'], { X_NAME: 'env' }).string('name')).toBe('flag');
    expect(parseArgs(spec, ['a'], { X_NAME: 'env' }).string('name')).toBe('env');
  });

  it('rejects bad integers, values for booleans and missing positionals', () => {
    expect(() => parseArgs(spec, ['a', '--n', '0'])).toThrow(UsageError);
    expect(() => parseArgs(spec, ['a', '--json=yes'])).toThrow(/takes no value/);
    expect(() => parseArgs(spec, [])).toThrow(/missing argument <a>/);
  });
});

describe('the latch process', () => {
  it('routes every tool command through the shared parser (client included)', () => {
    const run = (...argv: string[]) => spawnSync(process.execPath, [...LATCH_ENTRY, ...argv], { encoding: 'utf8' });
    const bogus = run('client', 'list', '--bogus');
    expect(bogus.stderr).toContain("latch client list: unknown option '--bogus'");
    expect(bogus.status).toBe(2);
    const help = run('--help');
    expect(help.status).toBe(0);
    for (const c of ['serve', 'test', 'bench', 'store', 'model', 'tuple', 'query', 'client'])
      expect(help.stdout).toMatch(new RegExp(`^  ${c} `, 'm'));
    expect(help.stdout.match(/^ {2}client /gm)).toHaveLength(1);
  });
});

describe('every command without its required input', () => {
  const missing: [string, string][] = [
    ['test', 'missing argument <files>'],
    ['bench', 'missing argument <file>'],
    ['store create', 'missing --name'],
    ['store list', 'missing --api-url'],
    ['store get', 'missing --api-url'],
    ['store delete', 'missing --store-id'],
    ['store import', 'missing --file'],
    ['store export', 'missing --api-url'],
    ['model write', 'missing --store-id'],
    ['model get', 'missing --store-id'],
    ['model list', 'missing --store-id'],
    ['model validate', 'give the model file (or --file), once'],
    ['model transform', 'give the model file (or --file), once'],
    ['changes', 'missing --store-id'],
    ['migrate', 'missing --postgres-url'],
    ['tuple write', 'missing --store-id'],
    ['tuple delete', 'missing --store-id'],
    ['tuple read', 'missing --store-id'],
    ['tuple import', 'missing --store-id'],
    ['query check', 'missing argument <user>'],
    ['query batch-check', 'give --file or at least one --check'],
    ['query list-objects', 'missing argument <user>'],
    ['query list-users', 'missing --object'],
    ['query expand', 'missing argument <relation>'],
    ['query list-relations', 'missing argument <user>'],
    ['client create', 'missing --store'],
    ['client list', 'say where the clients are'],
    ['client rotate', 'missing argument <client_id>'],
    ['client revoke', 'missing argument <client_id>'],
  ];
  it('covers every command', () => {
    expect(new Set(missing.map(([c]) => c))).toEqual(new Set(COMMANDS));
  });
  it.each(missing)('latch %s → exit 2: %s', async (cmd, message) => {
    const r = await latch(cmd.split(' '));
    expect(r.code).toBe(2);
    expect(r.err).toContain(`latch ${cmd}: ${message}`);
  });
});

describe('latch serve and the top level, as processes', () => {
  const run = (...argv: string[]) => spawnSync(process.execPath, [...LATCH_ENTRY, ...argv], { encoding: 'utf8' });
  const cases: [string[], number, string, 'stdout' | 'stderr'][] = [
    [['serve', '--help'], 0, 'env LATCH_SHUTDOWN_TIMEOUT; default 8000', 'stdout'],
    [['serve', '--bogus'], 2, "latch serve: unknown option '--bogus'", 'stderr'],
    [['serve', '--port'], 2, 'latch serve: option --port needs a value', 'stderr'],
    [['serve', '--log-format', 'xml'], 2, 'latch serve: --log-format must be one of json, text', 'stderr'],
    [[], 2, 'Usage: latch <command>', 'stdout'],
    [['frobnicate'], 2, "latch: unknown command 'frobnicate'", 'stderr'],
  ];
  it.each(cases)('latch %j → exit %i', (argv, status, text, stream) => {
    const r = run(...argv);
    expect(r.status).toBe(status);
    expect(r[stream]).toContain(text);
  });
});
