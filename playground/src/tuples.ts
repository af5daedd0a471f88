// The tuples panel: a paged table over Read (filters: object, relation, user), add a tuple (with a
// condition and its context), delete a row, and import a CSV / YAML / JSON file in writes of 100.
// Each page render is marked (`performance.mark('tuples-page')`) so its time can be measured.

import { call, describe, store } from './api.js';
import { field, h, live } from './dom.js';
import { clearError, onStoreShown, showError, storeId } from './state.js';
import type { Tuple, TupleKey } from './types.js';

const PAGE_SIZE = 50;
/** Tuples per Write request while importing (the API's and the default server limit). */
const IMPORT_BATCH = 100;

function parseContext(text: string, what: string): Record<string, unknown> | undefined {
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

function keyOnly(k: TupleKey): TupleKey {
  return { user: k.user, relation: k.relation, object: k.object };
}

export function tuplesPanel(): HTMLElement {
  const [objWrap, fObject] = field('Object', { placeholder: 'document:  or  document:readme', id: 'filter-object' });
  const [relWrap, fRelation] = field('Relation', { placeholder: 'viewer', id: 'filter-relation' });
  const [userWrap, fUser] = field('User', { placeholder: 'user:anne', id: 'filter-user' });
  const body = h('tbody', { id: 'tuples-body' });
  const pageInfo = live('muted');
  pageInfo.id = 'tuples-page-info';
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'tuples-error' });
  const prev = h('button', { type: 'button', id: 'tuples-prev', disabled: true }, '← Previous');
  const next = h('button', { type: 'button', id: 'tuples-next', disabled: true }, 'Next →');
  // tokens[i] is the continuation token that reads page i (tokens[0] = '' for the first page).
  let tokens: string[] = [''];
  let page = 0;
  let nextToken = '';

  const filter = (): Record<string, string> | undefined => {
    const k: Record<string, string> = {};
    if (fObject.value.trim()) k.object = fObject.value.trim();
    if (fRelation.value.trim()) k.relation = fRelation.value.trim();
    if (fUser.value.trim()) k.user = fUser.value.trim();
    return Object.keys(k).length ? k : undefined;
  };

  const load = async (): Promise<void> => {
    const id = storeId();
    if (!id) {
      body.replaceChildren();
      pageInfo.textContent = '';
      return;
    }
    const req: Record<string, unknown> = { page_size: PAGE_SIZE };
    const key = filter();
    if (key) req.tuple_key = key;
    if (tokens[page]) req.continuation_token = tokens[page];
    try {
      const r = await call<{ tuples: Tuple[]; continuation_token: string }>('POST', store(id, '/read'), req);
      clearError(error);
      nextToken = r.continuation_token || '';
      body.replaceChildren(...r.tuples.map(row));
      prev.disabled = page === 0;
      next.disabled = nextToken === '';
      const first = page * PAGE_SIZE + 1;
      pageInfo.textContent = r.tuples.length
        ? `Page ${page + 1} · tuples ${first}–${first + r.tuples.length - 1}`
        : page === 0
          ? 'No tuples match.'
          : 'No more tuples.';
      performance.mark('tuples-page', { detail: { page } });
    } catch (err) {
      showError(error, err);
    }
  };

  const row = (t: Tuple): HTMLTableRowElement => {
    const k = t.key;
    const cond = k.condition
      ? `${k.condition.name}${k.condition.context ? ' ' + JSON.stringify(k.condition.context) : ''}`
      : '';
    return h(
      'tr',
      null,
      h('td', null, k.user),
      h('td', null, k.relation),
      h('td', null, k.object),
      h('td', null, cond),
      h('td', null, t.timestamp.replace('T', ' ').slice(0, 19)),
      h(
        'td',
        null,
        h(
          'button',
          {
            type: 'button',
            class: 'link danger',
            'aria-label': `Delete ${k.user} ${k.relation} ${k.object}`,
            onclick: () => void remove(k),
          },
          'Delete',
        ),
      ),
    );
  };

  const remove = async (k: TupleKey): Promise<void> => {
    const id = storeId();
    if (!id) return;
    try {
      await call('POST', store(id, '/write'), { deletes: { tuple_keys: [keyOnly(k)] } });
      await load();
    } catch (err) {
      showError(error, err);
    }
  };

  const search = (e?: Event): void => {
    e?.preventDefault();
    tokens = [''];
    page = 0;
    void load();
  };
  prev.addEventListener('click', () => {
    if (page === 0) return;
    page--;
    void load();
  });
  next.addEventListener('click', () => {
    if (!nextToken) return;
    tokens[page + 1] = nextToken;
    page++;
    void load();
  });
  onStoreShown('tuples', () => search());

  // Add a tuple.
  const [aUserWrap, aUser] = field('User', { placeholder: 'user:anne', id: 'add-user' });
  const [aRelWrap, aRel] = field('Relation', { placeholder: 'viewer', id: 'add-relation' });
  const [aObjWrap, aObj] = field('Object', { placeholder: 'document:readme', id: 'add-object' });
  const [aCondWrap, aCond] = field('Condition (optional)', { placeholder: 'in_office_hours', id: 'add-condition' });
  const [aCtxWrap, aCtx] = field('Condition context (JSON)', { placeholder: '{"start": 9}', id: 'add-context' });
  const addError = h('div', { class: 'error', role: 'alert', hidden: true, id: 'add-error' });
  const add = async (e: Event): Promise<void> => {
    e.preventDefault();
    const id = storeId();
    if (!id) return showError(addError, new Error('choose or create a store first'));
    try {
      const key: TupleKey = { user: aUser.value.trim(), relation: aRel.value.trim(), object: aObj.value.trim() };
      if (aCond.value.trim())
        key.condition = { name: aCond.value.trim(), context: parseContext(aCtx.value, 'the condition context') };
      await call('POST', store(id, '/write'), { writes: { tuple_keys: [key] } });
      clearError(addError);
      // Only a written tuple clears the form: a refused one stays as typed.
      aUser.value = '';
      aObj.value = '';
      await load();
    } catch (err) {
      showError(addError, err);
    }
  };

  // Import.
  const file = h('input', { type: 'file', id: 'import-file', accept: '.csv,.yaml,.yml,.json' });
  const importStatus = live('status');
  importStatus.id = 'import-status';
  const importError = h('div', { class: 'error', role: 'alert', hidden: true, id: 'import-error' });
  const doImport = async (): Promise<void> => {
    const id = storeId();
    const f = file.files?.[0];
    if (!id || !f) return;
    clearError(importError);
    let keys: TupleKey[];
    try {
      const { formatOf, parseTuples } = await import('../../src/cli/tuple-file.js');
      keys = parseTuples(await f.text(), formatOf(f.name)) as TupleKey[];
    } catch (err) {
      return showError(importError, new Error(`${f.name}: ${(err as Error).message}`));
    }
    let done = 0;
    for (let i = 0; i < keys.length; i += IMPORT_BATCH) {
      try {
        await call('POST', store(id, '/write'), { writes: { tuple_keys: keys.slice(i, i + IMPORT_BATCH) } });
      } catch (err) {
        importStatus.textContent = `Imported ${done} of ${keys.length} tuples.`;
        return showError(
          importError,
          new Error(
            `tuples ${i + 1}–${Math.min(keys.length, i + IMPORT_BATCH)} of ${f.name} were not written: ${describe(err)}`,
          ),
        );
      }
      done = Math.min(keys.length, i + IMPORT_BATCH);
      importStatus.textContent = `Imported ${done} of ${keys.length} tuples…`;
    }
    importStatus.textContent = `Imported ${done} tuples from ${f.name}.`;
    search();
  };

  return h(
    'section',
    { class: 'panel' },
    h('div', { class: 'toolbar' }, h('h2', null, 'Tuples')),
    h(
      'form',
      { class: 'filters', onsubmit: search, 'aria-label': 'Filter tuples' },
      objWrap,
      relWrap,
      userWrap,
      h('button', { type: 'submit', id: 'tuples-search' }, 'Filter'),
    ),
    error,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'tuples', 'aria-describedby': 'tuples-page-info' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ...['User', 'Relation', 'Object', 'Condition', 'Written (UTC)', ''].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        body,
      ),
    ),
    h('div', { class: 'pager' }, prev, pageInfo, next),
    h(
      'details',
      { class: 'box', open: true },
      h('summary', null, 'Add a tuple'),
      h(
        'form',
        { class: 'grid-form', onsubmit: (e: Event) => void add(e), id: 'add-tuple' },
        aUserWrap,
        aRelWrap,
        aObjWrap,
        aCondWrap,
        aCtxWrap,
        h('button', { type: 'submit', class: 'primary' }, 'Add tuple'),
      ),
      addError,
    ),
    h(
      'details',
      { class: 'box' },
      h('summary', null, 'Import tuples from a file'),
      h(
        'p',
        { class: 'muted' },
        'CSV with the header user_type,user_id,user_relation,relation,object_type,object_id,condition_name,condition_context, or YAML / JSON: a list of {user, relation, object, condition?}. Written 100 per request; each request is all or nothing.',
      ),
      h(
        'div',
        { class: 'row' },
        h('label', { for: 'import-file' }, 'File '),
        file,
        h('button', { type: 'button', id: 'import-run', onclick: () => void doImport() }, 'Import'),
      ),
      importStatus,
      importError,
    ),
  );
}
