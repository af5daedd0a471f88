// DSL ↔ JSON through the language library: round trips, modules, fga.mod, and error wrapping.
import { describe, expect, it } from 'vitest';
import {
  DslError,
  dslDiagnostics,
  dslToModel,
  modelToDsl,
  modulesToModel,
  parseFgaMod,
  stripComments,
} from '../../src/model/dsl.js';
import { appErrorOf, dsl } from './helpers.js';

describe('dsl', () => {
  it('round-trips DSL → JSON → DSL', () => {
    const text = dsl(
      '\ntype user\n\ntype doc\n  relations\n    define viewer: [user, user:*] or owner\n    define owner: [user]\n',
    );
    expect(modelToDsl(dslToModel(text))).toBe(text);
  });

  it.each([
    [
      'missing operand',
      'type user\ntype doc\n  relations\n    define viewer: [user] or\n',
      /^syntax error at line 6, column 29 \(type 'doc', relation 'viewer'\)/,
    ],
    [
      'mixed operators',
      'type user\ntype doc\n  relations\n    define a: [user]\n    define viewer: a or a and a\n',
      /^syntax error at line 7, .*\(type 'doc', relation 'viewer'\)/,
    ],
    [
      'duplicate relation',
      'type user\ntype doc\n  relations\n    define a: [user]\n    define a: [user]\n',
      /\(type 'doc', relation 'a'\)/,
    ],
  ])('a DSL syntax error (%s) is a DslError with 1-based positions', (_name, body, pattern) => {
    const err = appErrorOf(() => dslToModel(dsl(body)));
    expect(err).toBeInstanceOf(DslError);
    expect(err.code).toBe('validation_error');
    expect(err.message).toMatch(pattern);
    expect((err as DslError).diagnostics.length).toBeGreaterThan(0);
  });

  it('JSON the DSL cannot express is a validation_error naming type and relation', () => {
    const err = appErrorOf(() =>
      modelToDsl({
        schema_version: '1.1',
        type_definitions: [
          {
            type: 'user',
            relations: { r: { difference: { base: { computedUserset: { relation: 'x' } }, subtract: { this: {} } } } },
          },
        ],
      }),
    );
    expect(err.code).toBe('validation_error');
    expect(err.message).toContain("the 'r' relation definition under the 'user' type is not supported");
  });

  it('dslDiagnostics reports tooling errors with 0-based positions', () => {
    expect(
      dslDiagnostics(dsl('type user\ntype doc\n  relations\n    define viewer: [user] or foo # note\n')),
    ).toMatchObject([
      { msg: 'the relation `foo` does not exist.', line: { start: 5, end: 5 }, column: { start: 29, end: 32 } },
    ]);
    expect(dslDiagnostics(dsl('type user\n'))).toEqual([]);
  });

  it('stripComments drops comment lines and trailing comments only', () => {
    expect(stripComments('# c\ntype a # x\n  define r: [a#b]')).toBe('\ntype a\n  define r: [a#b]');
  });

  it('combines module files into a 1.2 model with source info', () => {
    const model = modulesToModel([
      { name: 'core.fga', contents: 'module core\n\ntype user\n\ntype org\n  relations\n    define member: [user]\n' },
      { name: 'wiki.fga', contents: 'module wiki\n\nextend type org\n  relations\n    define wiki_admin: [user]\n' },
    ]);
    expect(model.schema_version).toBe('1.2');
    const org = model.type_definitions.find((t) => t.type === 'org');
    expect(org?.metadata?.source_info).toEqual({ file: 'core.fga' });
    expect(org?.metadata?.relations?.wiki_admin?.source_info).toEqual({ file: 'wiki.fga' });
  });

  it('rendering a modular model to DSL leaves the model unchanged', () => {
    const model = modulesToModel([
      { name: 'core.fga', contents: 'module core\n\ntype user\n\ntype org\n  relations\n    define member: [user]\n' },
      { name: 'wiki.fga', contents: 'module wiki\n\nextend type org\n  relations\n    define wiki_admin: [user]\n' },
    ]);
    const before = structuredClone(model);
    expect(modelToDsl(model)).toContain('define wiki_admin: [user]');
    expect(model).toEqual(before);
  });

  it('module errors name the file and position', () => {
    const err = appErrorOf(() =>
      modulesToModel([
        { name: 'core.fga', contents: 'module core\n\ntype user\n' },
        { name: 'wiki.fga', contents: 'module wiki\n\nextend type page\n  relations\n    define r: [user]\n' },
      ]),
    );
    expect(err.message).toContain('at wiki.fga line 3, column 13');
    expect(err.message).toContain('extended type page does not exist');
  });

  it('parses fga.mod and rejects bad ones', () => {
    expect(parseFgaMod("schema: '1.2'\ncontents:\n  - core.fga\n").contents.value.map((c) => c.value)).toEqual([
      'core.fga',
    ]);
    const err = appErrorOf(() => parseFgaMod("schema: '1.1'\ncontents:\n  - core.fga\n"));
    expect(err.code).toBe('validation_error');
    expect(err.message).toMatch(/line 1, column \d+/);
  });
});
