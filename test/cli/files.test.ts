// The store-file, tuple-file (YAML, JSON, CSV) and glob readers.

import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertionsToTests, testsToAssertions } from '../../src/cli/assertions.js';
import { expandGlobs, globToRegExp } from '../../src/cli/glob.js';
import { loadStoreFile, parseModelText } from '../../src/cli/store-file.js';
import { FileFormatError, parseCsv, parseCsvTuples, parseTuples, toCsv } from '../../src/cli/tuple-file.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'latch-files-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const write = (name: string, text: string) => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};

describe('CSV tuples', () => {
  it('reads the OpenFGA header in any order, usersets and conditions with a JSON context', () => {
    const csv =
      'object_type,object_id,relation,user_type,user_id,user_relation,condition_name,condition_context\r\n' +
      'doc,1,viewer,user,anne,,,\r\n' +
      'doc,1,viewer,group,eng,member,,\r\n' +
      'doc,2,viewer,user,bob,,in_network,"{""cidr"":""10.0.0.0/8"",""tags"":[""a,b""]}"\r\n';
    expect(parseCsvTuples(csv)).toEqual([
      { user: 'user:anne', relation: 'viewer', object: 'doc:1' },
      { user: 'group:eng#member', relation: 'viewer', object: 'doc:1' },
      {
        user: 'user:bob',
        relation: 'viewer',
        object: 'doc:2',
        condition: { name: 'in_network', context: { cidr: '10.0.0.0/8', tags: ['a,b'] } },
      },
    ]);
  });

  it('names the problem: unknown header, missing column, bad context, empty field', () => {
    expect(() => parseCsvTuples('user,relation,object\n')).toThrow(/invalid CSV header 'user'/);
    expect(() => parseCsvTuples('user_type,user_id,relation,object_type\n')).toThrow(
      /missing required CSV header 'object_id'/,
    );
    expect(() => parseCsvTuples('user_type,user_id,relation,object_type,object_id,condition_context\n')).toThrow(
      /'condition_name' is required/,
    );
    expect(() =>
      parseCsvTuples(
        'user_type,user_id,relation,object_type,object_id,condition_name,condition_context\nuser,a,r,doc,1,c,{x\n',
      ),
    ).toThrow(/line 2: condition_context is not valid JSON/);
    expect(() => parseCsvTuples('user_type,user_id,relation,object_type,object_id\nuser,,r,doc,1\n')).toThrow(
      /line 2: empty 'user_id'/,
    );
  });

  it('handles quotes, embedded newlines, a BOM and a missing final newline', () => {
    expect(parseCsv('\uFEFFa,"b ""q""","c\nd"\ne,f,g')).toEqual([
      ['a', 'b "q"', 'c\nd'],
      ['e', 'f', 'g'],
    ]);
    expect(() => parseCsv('a,"open')).toThrow(FileFormatError);
  });

  it('toCsv writes what parseCsvTuples reads', () => {
    const tuples = [
      { user: 'group:eng#member', relation: 'viewer', object: 'doc:1' },
      { user: 'user:bob', relation: 'viewer', object: 'doc:2', condition: { name: 'c', context: { s: 'x,"y"' } } },
    ];
    expect(parseCsvTuples(toCsv(tuples))).toEqual(tuples);
  });
});

describe('YAML and JSON tuples', () => {
  it('reads a list of tuples with conditions', () => {
    const yaml =
      '- user: user:anne\n  relation: viewer\n  object: doc:1\n  condition:\n    name: c\n    context: {x: 1}\n';
    expect(parseTuples(yaml, 'yaml')).toEqual([
      { user: 'user:anne', relation: 'viewer', object: 'doc:1', condition: { name: 'c', context: { x: 1 } } },
    ]);
    expect(parseTuples('[{"user":"user:a","relation":"r","object":"o:1"}]', 'json')).toEqual([
      { user: 'user:a', relation: 'r', object: 'o:1' },
    ]);
  });

  it('rejects what is not a tuple list', () => {
    expect(() => parseTuples('{"user":"u:a"}', 'json')).toThrow(/expected a list of tuples/);
    expect(() => parseTuples('- user: user:a\n  relation: r\n', 'yaml')).toThrow(
      /tuples\[0\]: 'object' must be a non-empty string/,
    );
    expect(() => parseTuples('[', 'json')).toThrow(/not valid JSON/);
  });
});

describe('store files', () => {
  const model = 'model\n  schema 1.1\ntype user\ntype doc\n  relations\n    define viewer: [user]\n';
  const indent = (text: string) => text.trimEnd().replace(/^/gm, '  ') + '\n';

  it('merges tuples, tuple_file and tuple_files (first occurrence wins) and expands users/objects', async () => {
    write('t1.yaml', '- {user: "user:a", relation: viewer, object: "doc:1"}\n');
    write('t2.csv', 'user_type,user_id,relation,object_type,object_id\nuser,b,viewer,doc,1\nuser,a,viewer,doc,1\n');
    write('extra.json', '[{"user":"user:c","relation":"viewer","object":"doc:2"}]');
    const path = write(
      's.fga.yaml',
      `name: s\nmodel: |\n${indent(model)}tuples:\n  - {user: "user:z", relation: viewer, object: "doc:9"}\ntuple_file: t1.yaml\ntuple_files: [t2.csv]\ntests:\n  - name: t\n    tuple_file: extra.json\n    check:\n      - users: [user:a, user:b]\n        objects: [doc:1, doc:2]\n        context: {k: v}\n        assertions: {viewer: true}\n    list_users:\n      - object: doc:1\n        user_filter: [{type: user}]\n        assertions: {viewer: {users: [user:a]}}\n`,
    );
    const f = await loadStoreFile(path);
    expect(f.tuples.map((t) => t.user)).toEqual(['user:z', 'user:a', 'user:b']);
    expect(f.tests[0]?.tuples).toEqual([{ user: 'user:c', relation: 'viewer', object: 'doc:2' }]);
    expect(f.tests[0]?.check[0]).toEqual({
      users: ['user:a', 'user:b'],
      objects: ['doc:1', 'doc:2'],
      context: { k: 'v' },
      assertions: { viewer: true },
    });
    expect(f.tests[0]?.listUsers[0]?.assertions).toEqual({ viewer: ['user:a'] });
    expect(f.model?.type_definitions.map((t) => t.type)).toEqual(['user', 'doc']);
  });

  it('reads JSON models inline, bare or wrapped as `fga model get --format json` prints them', () => {
    const json = { schema_version: '1.1', type_definitions: [{ type: 'user' }] };
    expect(parseModelText(JSON.stringify(json))).toEqual(json);
    expect(
      parseModelText(JSON.stringify({ authorization_model: { id: '01ARZ3NDEKTSV4RRFFQ69G5FAV', ...json } })),
    ).toEqual(json);
  });

  it('loads a modular model from fga.mod', async () => {
    const f = await loadStoreFile('test/fixtures/modular.fga.yaml');
    expect(f.model?.schema_version).toBe('1.2');
    expect(f.model?.type_definitions.map((t) => t.type).sort()).toEqual([
      'organization',
      'page',
      'project',
      'space',
      'team',
      'ticket',
      'user',
    ]);
  });

  it('names the field at fault', async () => {
    const bad = async (body: string) =>
      loadStoreFile(write('bad.fga.yaml', `name: x\nmodel: |\n${indent(model)}${body}`));
    await expect(
      bad(
        'tests:\n  - name: t\n    check:\n      - {user: "user:a", users: ["user:b"], object: "doc:1", assertions: {viewer: true}}\n',
      ),
    ).rejects.toThrow(/tests\[0\]\.check\[0\]: 'user' and 'users' are exclusive/);
    await expect(
      bad(
        'tests:\n  - name: t\n    check:\n      - {user: "user:a", object: "doc:1", assertions: {viewer: yes please}}\n',
      ),
    ).rejects.toThrow(/tests\[0\]\.check\[0\]\.assertions\.viewer: expected true or false/);
    await expect(bad('tests:\n  - name: 7\n')).rejects.toThrow(/tests\[0\]: 'name' must be a string/);
    await expect(
      bad('tests:\n  - name: t\n    list_objects:\n      - {user: "user:a", assertions: {viewer: []}}\n'),
    ).rejects.toThrow(/list_objects\[0\]: 'type' is required/);
    await expect(bad('tuple_file: nowhere.yaml\n')).rejects.toThrow(/no such file|ENOENT/);
    await expect(
      loadStoreFile(
        write(
          'dsl.fga.yaml',
          'name: x\nmodel: |\n  model\n    schema 1.1\n  type user\n    relations\n      define viewer [user]\n',
        ),
      ),
    ).rejects.toThrow(/syntax error at line/);
  });
});

describe('globs', () => {
  it('matches *, ** and {a,b}', async () => {
    mkdirSync(join(dir, 'g/sub/deep'), { recursive: true });
    for (const f of ['g/a.fga.yaml', 'g/b.yaml', 'g/sub/c.fga.yaml', 'g/sub/deep/d.fga.yaml']) write(f, '');
    expect(await expandGlobs(['g/*.fga.yaml'], dir)).toEqual(['g/a.fga.yaml']);
    expect(await expandGlobs(['g/**/*.fga.yaml'], dir)).toEqual([
      'g/a.fga.yaml',
      'g/sub/c.fga.yaml',
      'g/sub/deep/d.fga.yaml',
    ]);
    expect(await expandGlobs(['g/{a,b}.*'], dir)).toEqual(['g/a.fga.yaml', 'g/b.yaml']);
    expect(await expandGlobs(['plain/path.yaml'], dir)).toEqual(['plain/path.yaml']);
    expect(await expandGlobs([join(dir, 'g/sub/*.fga.yaml')], '/')).toEqual([join(dir, 'g/sub/c.fga.yaml')]);
    expect(globToRegExp('a/?.yaml').test('a/x.yaml')).toBe(true);
  });
});

describe('tests ↔ assertions', () => {
  it('expands checks into assertions and groups them back into the same shape', async () => {
    const f = await loadStoreFile('test/fixtures/multi-tenant-rbac.fga.yaml');
    const { assertions, skipped } = testsToAssertions(f.tests);
    expect(skipped.count).toBe(0);
    expect(assertions).toHaveLength(39);
    expect(assertions.filter((a) => a.contextual_tuples?.length === 2)).toHaveLength(3);
    const tests = assertionsToTests(assertions);
    expect(tests.map((t) => t.name)).toEqual(['assertions', 'assertions-2']);
    // Grouping is idempotent: assertions → tests → assertions → tests gives the same tests.
    const path = write('again.fga.yaml', JSON.stringify({ name: 'again', tests })); // JSON is YAML
    const again = testsToAssertions((await loadStoreFile(path)).tests).assertions;
    expect(assertionsToTests(again)).toEqual(tests);
  });

  it('keeps within the API limits and says what it left out', () => {
    const many = {
      name: 'many',
      tuples: [],
      check: [
        {
          users: Array.from({ length: 60 }, (_, i) => `user:u${i}`),
          objects: ['doc:1', 'doc:2'],
          assertions: { viewer: true },
        },
      ],
      listObjects: [],
      listUsers: [],
    };
    const crowded = {
      ...many,
      name: 'crowded',
      tuples: Array.from({ length: 21 }, (_, i) => ({ user: `user:u${i}`, relation: 'viewer', object: 'doc:1' })),
    };
    const r = testsToAssertions([crowded, many]);
    expect(r.assertions).toHaveLength(100);
    expect(r.skipped.count).toBe(120 + 20);
    expect(r.skipped.reasons.join('\n')).toMatch(/test 'crowded' has 21 tuples[\s\S]*at most 100 assertions/);
  });
});
