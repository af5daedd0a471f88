// Tuple files as the OpenFGA command line reads them: YAML or JSON (a list of
// `{user, relation, object, condition?}`) and CSV with the header
// `user_type,user_id,user_relation,relation,object_type,object_id,condition_name,condition_context`
// (columns in any order; `user_relation`, `condition_name` and `condition_context` optional;
// `condition_context` is a JSON object). The format is chosen by the file extension. latch adds
// `expires_at` (RFC 3339) to both: a field of the tuple, an optional CSV column written only when
// some tuple expires, so files without expiring tuples stay OpenFGA's.

import { readFile } from 'node:fs/promises';
import { extname } from 'node:path';
import YAML from 'yaml';
import type { JsonObject, TupleKey } from '../domain/types.js';

/** A store file or tuple file that does not have the expected shape. */
export class FileFormatError extends Error {}

const CSV_COLUMNS = [
  'user_type',
  'user_id',
  'user_relation',
  'relation',
  'object_type',
  'object_id',
  'condition_name',
  'condition_context',
  'expires_at',
] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];
const REQUIRED: readonly CsvColumn[] = ['user_type', 'user_id', 'relation', 'object_type', 'object_id'];

export async function readTupleFile(path: string): Promise<TupleKey[]> {
  const text = await readFile(path, 'utf8');
  try {
    return parseTuples(text, formatOf(path));
  } catch (err) {
    if (err instanceof FileFormatError) throw new FileFormatError(`${path}: ${err.message}`);
    throw err;
  }
}

export type TupleFormat = 'yaml' | 'json' | 'csv';

export function formatOf(path: string): TupleFormat {
  const ext = extname(path).toLowerCase();
  if (ext === '.csv') return 'csv';
  if (ext === '.json') return 'json';
  if (ext === '.yaml' || ext === '.yml') return 'yaml';
  throw new FileFormatError(`unsupported tuple file extension '${ext}' (use .yaml, .yml, .json or .csv)`);
}

export function parseTuples(text: string, format: TupleFormat): TupleKey[] {
  if (format === 'csv') return parseCsvTuples(text);
  let data: unknown;
  try {
    data = format === 'json' ? JSON.parse(text) : YAML.parse(text);
  } catch (err) {
    throw new FileFormatError(`not valid ${format.toUpperCase()}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (data === null || data === undefined) return [];
  return toTupleList(data, 'tuples');
}

/** A list of tuple objects (from YAML/JSON) → validated TupleKeys; `where` prefixes messages. */
export function toTupleList(data: unknown, where: string): TupleKey[] {
  if (!Array.isArray(data)) throw new FileFormatError(`${where}: expected a list of tuples`);
  return data.map((t, i) => toTupleKey(t, `${where}[${i}]`));
}

export function toTupleKey(t: unknown, where: string): TupleKey {
  if (!isObject(t)) throw new FileFormatError(`${where}: expected a tuple {user, relation, object}`);
  for (const k of ['user', 'relation', 'object'] as const) {
    if (typeof t[k] !== 'string' || t[k] === '')
      throw new FileFormatError(`${where}: '${k}' must be a non-empty string`);
  }
  const key: { user: string; relation: string; object: string; condition?: TupleKey['condition'] } = {
    user: t.user as string,
    relation: t.relation as string,
    object: t.object as string,
  };
  const c = t.condition;
  if (c !== undefined && c !== null) {
    if (!isObject(c) || typeof c.name !== 'string' || c.name === '')
      throw new FileFormatError(`${where}.condition: expected {name, context?}`);
    if (c.context !== undefined && c.context !== null && !isObject(c.context))
      throw new FileFormatError(`${where}.condition.context: expected a map`);
    key.condition = isObject(c.context) ? { name: c.name, context: c.context as JsonObject } : { name: c.name };
  }
  const e = t.expires_at;
  if (e === undefined || e === null) return key;
  // YAML 1.1 readers turn an unquoted timestamp into a date: take it back as the instant it names.
  const text = e instanceof Date ? e.toISOString() : e;
  if (typeof text !== 'string' || text === '')
    throw new FileFormatError(`${where}.expires_at: expected an RFC 3339 timestamp`);
  return { ...key, expires_at: text };
}

export function parseCsvTuples(text: string): TupleKey[] {
  const rows = parseCsv(text).filter((r) => !(r.length === 1 && r[0] === ''));
  const header = rows.shift();
  if (header === undefined) return [];
  const col = new Map<CsvColumn, number>();
  header.forEach((h, i) => {
    const name = h.trim() as CsvColumn;
    if (!CSV_COLUMNS.includes(name))
      throw new FileFormatError(`invalid CSV header '${h}', valid headers are ${CSV_COLUMNS.join(',')}`);
    col.set(name, i);
  });
  for (const r of REQUIRED) if (!col.has(r)) throw new FileFormatError(`missing required CSV header '${r}'`);
  if (col.has('condition_context') && !col.has('condition_name')) {
    throw new FileFormatError(`CSV header 'condition_name' is required when 'condition_context' is present`);
  }
  return rows.map((row, n) => {
    const line = n + 2;
    const get = (c: CsvColumn): string => {
      const i = col.get(c);
      return i === undefined ? '' : (row[i] ?? '').trim();
    };
    for (const r of REQUIRED) if (get(r) === '') throw new FileFormatError(`line ${line}: empty '${r}'`);
    const userRelation = get('user_relation');
    const key: { user: string; relation: string; object: string; condition?: TupleKey['condition'] } = {
      user: `${get('user_type')}:${get('user_id')}${userRelation ? `#${userRelation}` : ''}`,
      relation: get('relation'),
      object: `${get('object_type')}:${get('object_id')}`,
    };
    const conditionName = get('condition_name');
    if (conditionName !== '') {
      const raw = get('condition_context');
      let context: unknown = {};
      if (raw !== '') {
        try {
          context = JSON.parse(raw);
        } catch {
          throw new FileFormatError(`line ${line}: condition_context is not valid JSON`);
        }
        if (!isObject(context)) throw new FileFormatError(`line ${line}: condition_context must be a JSON object`);
      }
      key.condition = { name: conditionName, context: context as JsonObject };
    }
    const expiresAt = get('expires_at');
    return expiresAt === '' ? key : { ...key, expires_at: expiresAt };
  });
}

/** RFC 4180 CSV: quoted fields with `""` escapes and embedded commas/newlines; CRLF or LF. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const src = text.startsWith('\uFEFF') ? text.slice(1) : text;
  for (let i = 0; i < src.length; i++) {
    const ch = src[i] as string;
    if (quoted) {
      if (ch === '"' && src[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === '') quoted = true;
    else if (ch === ',') {
      row.push(field);
      field = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && src[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else field += ch;
  }
  if (quoted) throw new FileFormatError('unterminated quoted CSV field');
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

/** CSV text for tuples (the same header as the reader), quoting fields that need it. */
export function toCsv(tuples: readonly TupleKey[]): string {
  const expiring = tuples.some((t) => t.expires_at !== undefined);
  const lines = [(expiring ? CSV_COLUMNS : CSV_COLUMNS.slice(0, -1)).join(',')];
  for (const t of tuples) {
    const [userType = '', rest = ''] = splitOnce(t.user, ':');
    const [userId = '', userRelation = ''] = splitOnce(rest, '#');
    const [objectType = '', objectId = ''] = splitOnce(t.object, ':');
    const ctx = t.condition ? JSON.stringify(t.condition.context ?? {}) : '';
    const fields = [userType, userId, userRelation, t.relation, objectType, objectId, t.condition?.name ?? '', ctx];
    if (expiring) fields.push(t.expires_at ?? '');
    lines.push(fields.map(csvField).join(','));
  }
  return lines.join('\n') + '\n';
}

function splitOnce(s: string, sep: string): [string, string] {
  const i = s.indexOf(sep);
  return i === -1 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)];
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/**
 * YAML as latch writes it: block style, no line folding, and strings that a YAML 1.1 reader
 * (the OpenFGA command line's, for one) would take for timestamps, booleans or numbers quoted,
 * so a context value like "2024-01-01T00:00:00Z" stays a string everywhere.
 */
export function toYaml(value: unknown): string {
  return YAML.stringify(value, { lineWidth: 0, version: '1.1' });
}

/** A tuple as store files write it: no null condition, no empty condition context, `expires_at` when it expires. */
export function cleanTuple(t: TupleKey): TupleKey {
  const base = { user: t.user, relation: t.relation, object: t.object };
  const exp = t.expires_at ? { expires_at: t.expires_at } : {};
  if (!t.condition || !t.condition.name) return { ...base, ...exp };
  const context = t.condition.context;
  return {
    ...base,
    condition:
      context && Object.keys(context).length ? { name: t.condition.name, context } : { name: t.condition.name },
    ...exp,
  };
}

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
