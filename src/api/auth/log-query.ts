// The `query` filter of SearchStoreLogs (§4.26): the Lucene subset the log search box uses.
//   expr := or ; or := and ('OR' and)* ; and := unary (['AND'] unary)* ;
//   unary := ('NOT' | '-') unary | '(' or ')' | field ':' value ;
//   value := "quoted" | bare   (a trailing `*` on a bare value matches a prefix)
// Fields are dotted paths into the log entry, e.g. `request.operation:"Write"`,
// `response.status:403`, `client_id:abc`. Values compare as strings, case-sensitively.

import { AppError } from '../../errors.js';

type LogPredicate = (entry: Readonly<Record<string, unknown>>) => boolean;

const bad = (why: string): AppError => new AppError('validation_error', `invalid query: ${why}`);

type Tok = { kind: 'word' | 'quoted' | '(' | ')' | ':' | '-'; text: string };

function tokenize(q: string): Tok[] {
  const out: Tok[] = [];
  let i = 0;
  while (i < q.length) {
    const c = q[i] as string;
    if (/\s/.test(c)) i++;
    else if (c === '(' || c === ')' || c === ':' || (c === '-' && out[out.length - 1]?.kind !== ':')) {
      out.push({ kind: c, text: c });
      i++;
    } else if (c === '"') {
      let j = i + 1;
      let text = '';
      while (j < q.length && q[j] !== '"') {
        if (q[j] === '\\' && j + 1 < q.length) j++;
        text += q[j];
        j++;
      }
      if (j >= q.length) throw bad('unterminated quote');
      out.push({ kind: 'quoted', text });
      i = j + 1;
    } else {
      let j = i;
      while (j < q.length && !/[\s():"]/.test(q[j] as string)) j++;
      out.push({ kind: 'word', text: q.slice(i, j) });
      i = j;
    }
  }
  return out;
}

function lookup(entry: Readonly<Record<string, unknown>>, path: string): unknown {
  let v: unknown = entry;
  for (const part of path.split('.')) {
    if (typeof v !== 'object' || v === null) return undefined;
    v = (v as Record<string, unknown>)[part];
  }
  return v;
}

function term(field: string, value: string, prefix: boolean): LogPredicate {
  return (entry) => {
    const v = lookup(entry, field);
    if (v === undefined || v === null || typeof v === 'object') return false;
    const s = String(v);
    return prefix ? s.startsWith(value) : s === value;
  };
}

class Parser {
  #i = 0;
  constructor(private readonly toks: Tok[]) {}

  parse(): LogPredicate {
    const p = this.#or();
    if (this.#i < this.toks.length) throw bad(`unexpected '${this.toks[this.#i]?.text}'`);
    return p;
  }

  #peek(): Tok | undefined {
    return this.toks[this.#i];
  }

  #or(): LogPredicate {
    const parts = [this.#and()];
    while (this.#peek()?.kind === 'word' && this.#peek()?.text === 'OR') {
      this.#i++;
      parts.push(this.#and());
    }
    return parts.length === 1 ? (parts[0] as LogPredicate) : (e) => parts.some((p) => p(e));
  }

  #and(): LogPredicate {
    const parts = [this.#unary()];
    for (let t = this.#peek(); t && t.kind !== ')' && !(t.kind === 'word' && t.text === 'OR'); t = this.#peek()) {
      if (t.kind === 'word' && t.text === 'AND') this.#i++;
      parts.push(this.#unary());
    }
    return parts.length === 1 ? (parts[0] as LogPredicate) : (e) => parts.every((p) => p(e));
  }

  #unary(): LogPredicate {
    const t = this.#peek();
    if (!t) throw bad('expression expected');
    this.#i++;
    if (t.kind === '-' || (t.kind === 'word' && t.text === 'NOT')) {
      const inner = this.#unary();
      return (e) => !inner(e);
    }
    if (t.kind === '(') {
      const inner = this.#or();
      if (this.#peek()?.kind !== ')') throw bad("missing ')'");
      this.#i++;
      return inner;
    }
    if (t.kind !== 'word' || this.#peek()?.kind !== ':') throw bad(`expected field:value near '${t.text}'`);
    this.#i++;
    const v = this.#peek();
    if (!v || (v.kind !== 'word' && v.kind !== 'quoted')) throw bad(`value expected after '${t.text}:'`);
    this.#i++;
    const prefix = v.kind === 'word' && v.text.endsWith('*');
    return term(t.text, prefix ? v.text.slice(0, -1) : v.text, prefix);
  }
}

/** The predicate of a query string; the empty query matches everything. */
export function parseLogQuery(q: string): LogPredicate {
  if (q.length > 2048) throw bad('longer than 2048 characters');
  const toks = tokenize(q);
  return toks.length === 0 ? () => true : new Parser(toks).parse();
}
