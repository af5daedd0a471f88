// The query panel: Check (contextual tuples and context) with its "why", ListObjects, ListUsers,
// and Expand as a collapsible tree. Inputs stay as typed whatever the answer.

import { ApiError, call, store } from './api.js';
import { area, field, h, live } from './dom.js';
import { failingPath, grantingChain, type Explanation, type TraceNode } from './explain.js';
import { clearError, showError, storeId } from './state.js';
import type { TupleKey } from './types.js';

/** Contextual tuples: one per line, `user relation object`, or a JSON list of tuple keys. */
export function parseContextual(text: string): TupleKey[] {
  const t = text.trim();
  if (!t) return [];
  if (t.startsWith('[')) {
    const v = JSON.parse(t) as unknown;
    if (!Array.isArray(v)) throw new Error('contextual tuples: expected a JSON list');
    return v as TupleKey[];
  }
  return t
    .split('\n')
    .filter((l) => l.trim())
    .map((l, i) => {
      const [user, relation, object, ...rest] = l.trim().split(/\s+/);
      if (!user || !relation || !object || rest.length)
        throw new Error(`contextual tuple on line ${i + 1}: expected 'user relation object'`);
      return { user, relation, object };
    });
}

export function parseJsonObject(text: string, what: string): Record<string, unknown> | undefined {
  if (!text.trim()) return undefined;
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    throw new Error(`${what} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${what} must be a JSON object`);
  return v as Record<string, unknown>;
}

const OUTCOME_TEXT: Record<TraceNode['outcome'], string> = {
  allowed: '✓ allowed',
  denied: '✗ denied',
  cycle: '↺ cycle',
  error: '⚠ error',
};

function describeNode(n: TraceNode): string {
  switch (n.kind) {
    case 'relation':
      return n.label;
    case 'tuple':
      return `tuple ${n.label}`;
    case 'direct':
      return `direct ${n.label}`;
    case 'computed':
      return `computed userset ${n.label}`;
    case 'ttu':
      return `tuple-to-userset ${n.label}`;
    case 'union':
      return 'union (or)';
    case 'intersection':
      return 'intersection (and)';
    case 'exclusion':
      return 'exclusion (but not)';
    case 'pruned':
      return `${n.label} (no path from the user's type: not evaluated)`;
    case 'cycle':
      return `${n.label} (cycle)`;
  }
}

/** A trace node as nested <details>; allowed branches open, `openAll` opens every branch. */
export function traceTree(n: TraceNode, openAll: boolean): HTMLElement {
  const label = h('span', { class: `outcome outcome-${n.outcome}` }, OUTCOME_TEXT[n.outcome]);
  const text = [
    label,
    ' ',
    h('span', { class: `trace-${n.kind}` }, describeNode(n)),
    n.error ? h('span', { class: 'error-inline' }, ` ${n.error}`) : '',
  ];
  if (!n.children?.length) return h('li', { class: 'leaf' }, ...text);
  return h(
    'li',
    null,
    h(
      'details',
      { open: openAll || n.outcome === 'allowed' },
      h('summary', null, ...text),
      h('ul', null, ...n.children.map((c) => traceTree(c, openAll))),
    ),
  );
}

interface ExpandNode {
  name: string;
  leaf?: {
    users?: { users: string[] };
    computed?: { userset: string };
    tupleToUserset?: { tupleset: string; computed: { userset: string }[] };
  };
  union?: { nodes: ExpandNode[] };
  intersection?: { nodes: ExpandNode[] };
  difference?: { base: ExpandNode; subtract: ExpandNode };
}

function expandTree(n: ExpandNode): HTMLElement {
  const kids: [string, ExpandNode[]] | undefined = n.union
    ? ['union', n.union.nodes]
    : n.intersection
      ? ['intersection', n.intersection.nodes]
      : n.difference
        ? ['difference', [n.difference.base, n.difference.subtract]]
        : undefined;
  if (kids)
    return h(
      'li',
      null,
      h(
        'details',
        { open: true },
        h('summary', null, h('code', null, n.name), ` ${kids[0]}`),
        h('ul', null, ...kids[1].map(expandTree)),
      ),
    );
  const l = n.leaf;
  const what = l?.users
    ? `users: ${l.users.users.join(', ') || '(none)'}`
    : l?.computed
      ? `computed: ${l.computed.userset}`
      : l?.tupleToUserset
        ? `tuple-to-userset ${l.tupleToUserset.tupleset} → ${l.tupleToUserset.computed.map((c) => c.userset).join(', ') || '(none)'}`
        : '';
  return h('li', { class: 'leaf' }, h('code', null, n.name), ` ${what}`);
}

function queryBox(
  title: string,
  id: string,
  fields: HTMLElement[],
  run: () => Promise<void>,
  out: HTMLElement,
  error: HTMLElement,
): HTMLElement {
  const submit = async (e: Event): Promise<void> => {
    e.preventDefault();
    clearError(error);
    if (!storeId()) return showError(error, new Error('choose or create a store first'));
    out.replaceChildren(h('span', { class: 'muted' }, 'Running…'));
    try {
      await run();
    } catch (err) {
      out.replaceChildren();
      showError(error, err);
    }
  };
  return h(
    'section',
    { class: 'box', 'aria-labelledby': `${id}-title` },
    h('h3', { id: `${id}-title` }, title),
    h(
      'form',
      { class: 'grid-form', id: `${id}-form`, onsubmit: (e: Event) => void submit(e) },
      ...fields,
      h('button', { type: 'submit', class: 'primary', id: `${id}-run` }, `Run ${title}`),
    ),
    error,
    out,
  );
}

function errorBox(id: string): HTMLElement {
  return h('div', { class: 'error', role: 'alert', hidden: true, id: `${id}-error` });
}

export function queriesPanel(): HTMLElement {
  // Check.
  const [cu, cUser] = field('User', { placeholder: 'user:anne', id: 'check-user' });
  const [cr, cRel] = field('Relation', { placeholder: 'viewer', id: 'check-relation' });
  const [co, cObj] = field('Object', { placeholder: 'document:readme', id: 'check-object' });
  const [cct, cCtxTuples] = area('Contextual tuples (one "user relation object" per line, or JSON)', {
    id: 'check-contextual',
  });
  const [ccx, cCtx] = area('Context (JSON object)', { id: 'check-context', rows: 2 });
  const checkOut = live('result');
  checkOut.id = 'check-result';
  const checkRun = async (): Promise<void> => {
    const id = storeId() as string;
    const contextual = parseContextual(cCtxTuples.value);
    const req: Record<string, unknown> = {
      tuple_key: { user: cUser.value.trim(), relation: cRel.value.trim(), object: cObj.value.trim() },
    };
    if (contextual.length) req.contextual_tuples = { tuple_keys: contextual };
    const context = parseJsonObject(cCtx.value, 'the context');
    if (context) req.context = context;
    // A Check the server refuses (say a condition parameter is missing) still has its "why":
    // the explanation tree, whose failing node says where it failed.
    let r: { allowed: boolean };
    try {
      r = await call<{ allowed: boolean }>('POST', store(id, '/check'), req);
    } catch (err) {
      if (!(err instanceof ApiError) || err.status >= 500) throw err;
      const why = await call<Explanation>('POST', store(id, '/check/explain'), req).catch(() => undefined);
      if (!why || why.tree.outcome !== 'error') throw err;
      const path = failingPath(why.tree);
      checkOut.replaceChildren(
        h('p', { class: 'verdict error', id: 'check-verdict' }, `Error: ${err.code}`),
        h('p', { class: 'error-inline' }, err.message),
        h(
          'div',
          { class: 'why', id: 'why-chain' },
          h('h4', null, 'Why: where the evaluation failed'),
          h('ol', { class: 'chain' }, ...path.map((n) => h('li', { class: `trace-${n.kind}` }, describeNode(n)))),
        ),
        h(
          'details',
          { class: 'trace', open: true },
          h('summary', null, 'Full evaluation trace'),
          h('ul', { class: 'tree', id: 'why-tree' }, traceTree(why.tree, true)),
        ),
      );
      return;
    }
    const why = await call<Explanation>('POST', store(id, '/check/explain'), req);
    const chain = grantingChain(why.tree);
    checkOut.replaceChildren(
      h(
        'p',
        { class: r.allowed ? 'verdict allowed' : 'verdict denied', id: 'check-verdict' },
        r.allowed ? 'Allowed' : 'Denied',
      ),
      r.allowed
        ? h(
            'div',
            { class: 'why', id: 'why-chain' },
            h('h4', null, 'Why: the chain that grants it'),
            h('ol', { class: 'chain' }, ...chain.map((n) => h('li', { class: `trace-${n.kind}` }, describeNode(n)))),
          )
        : h('div', { class: 'why', id: 'why-chain' }, h('h4', null, 'Why not: every branch tried')),
      h(
        'details',
        { class: 'trace', open: !r.allowed },
        h('summary', null, 'Full evaluation trace'),
        h('ul', { class: 'tree', id: 'why-tree' }, traceTree(why.tree, !r.allowed)),
      ),
    );
  };

  // ListObjects.
  const [lu, lUser] = field('User', { placeholder: 'user:anne', id: 'lo-user' });
  const [lr, lRel] = field('Relation', { placeholder: 'viewer', id: 'lo-relation' });
  const [lt, lType] = field('Object type', { placeholder: 'document', id: 'lo-type' });
  const loOut = live('result');
  loOut.id = 'lo-result';
  const loRun = async (): Promise<void> => {
    const r = await call<{ objects: string[] }>('POST', store(storeId() as string, '/list-objects'), {
      user: lUser.value.trim(),
      relation: lRel.value.trim(),
      type: lType.value.trim(),
    });
    loOut.replaceChildren(
      h('p', null, `${r.objects.length} object${r.objects.length === 1 ? '' : 's'}`),
      h('ul', { class: 'plain' }, ...r.objects.map((o) => h('li', null, h('code', null, o)))),
    );
  };

  // ListUsers.
  const [uo, uObj] = field('Object', { placeholder: 'document:readme', id: 'lu-object' });
  const [ur, uRel] = field('Relation', { placeholder: 'viewer', id: 'lu-relation' });
  const [uf, uFilter] = field('User type (type or type#relation)', { placeholder: 'user', id: 'lu-filter' });
  const luOut = live('result');
  luOut.id = 'lu-result';
  const luRun = async (): Promise<void> => {
    const [type = '', relation] = uFilter.value.trim().split('#');
    const colon = uObj.value.indexOf(':');
    const object = { type: uObj.value.slice(0, colon).trim(), id: uObj.value.slice(colon + 1).trim() };
    const r = await call<{
      users: {
        object?: { type: string; id: string };
        userset?: { type: string; id: string; relation: string };
        wildcard?: { type: string };
      }[];
    }>('POST', store(storeId() as string, '/list-users'), {
      object,
      relation: uRel.value.trim(),
      user_filters: [relation ? { type, relation } : { type }],
    });
    const text = r.users.map((u) =>
      u.object
        ? `${u.object.type}:${u.object.id}`
        : u.userset
          ? `${u.userset.type}:${u.userset.id}#${u.userset.relation}`
          : `${u.wildcard?.type}:*`,
    );
    luOut.replaceChildren(
      h('p', null, `${text.length} user${text.length === 1 ? '' : 's'}`),
      h('ul', { class: 'plain' }, ...text.map((u) => h('li', null, h('code', null, u)))),
    );
  };

  // Expand.
  const [eo, eObj] = field('Object', { placeholder: 'document:readme', id: 'ex-object' });
  const [er, eRel] = field('Relation', { placeholder: 'viewer', id: 'ex-relation' });
  const exOut = live('result');
  exOut.id = 'ex-result';
  const exRun = async (): Promise<void> => {
    const r = await call<{ tree: { root: ExpandNode } }>('POST', store(storeId() as string, '/expand'), {
      tuple_key: { object: eObj.value.trim(), relation: eRel.value.trim() },
    });
    exOut.replaceChildren(h('ul', { class: 'tree', id: 'expand-tree' }, expandTree(r.tree.root)));
  };

  return h(
    'section',
    { class: 'panel' },
    h('div', { class: 'toolbar' }, h('h2', null, 'Queries')),
    queryBox('Check', 'check', [cu, cr, co, cct, ccx], checkRun, checkOut, errorBox('check')),
    queryBox('ListObjects', 'lo', [lu, lr, lt], loRun, loOut, errorBox('lo')),
    queryBox('ListUsers', 'lu', [uo, ur, uf], luRun, luOut, errorBox('lu')),
    queryBox('Expand', 'ex', [eo, er], exRun, exOut, errorBox('ex')),
  );
}
