// The assertions panel: the latest model's assertions as editable rows, saved with
// WriteAssertions, and run all: one Check per assertion against that model, pass or fail each.

import { call, describe, store } from './api.js';
import { h, live } from './dom.js';
import { parseContextual, parseJsonObject } from './queries.js';
import { clearError, latestModel, onModelShown, onStoreShown, showError, storeId } from './state.js';
import type { Assertion, TupleKey } from './types.js';

interface Row {
  el: HTMLTableRowElement;
  read(): Assertion;
  result: HTMLElement;
}

function ctxText(t: readonly TupleKey[] | undefined): string {
  return (t ?? []).map((k) => `${k.user} ${k.relation} ${k.object}`).join('\n');
}

export function assertionsPanel(): HTMLElement {
  const body = h('tbody', { id: 'assertions-body' });
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'assertions-error' });
  const summary = live('status');
  summary.id = 'assertions-summary';
  let rows: Row[] = [];
  let modelId: string | undefined;

  const addRow = (a?: Assertion): void => {
    const n = rows.length + 1;
    const input = (label: string, value: string, placeholder: string): HTMLInputElement =>
      h('input', { type: 'text', value, placeholder, 'aria-label': `${label} of assertion ${n}`, spellcheck: 'false' });
    const user = input('User', a?.tuple_key.user ?? '', 'user:anne');
    const relation = input('Relation', a?.tuple_key.relation ?? '', 'viewer');
    const object = input('Object', a?.tuple_key.object ?? '', 'document:readme');
    const expect = h(
      'select',
      { 'aria-label': `Expectation of assertion ${n}` },
      h('option', { value: 'true' }, 'allowed'),
      h('option', { value: 'false' }, 'denied'),
    );
    expect.value = String(a?.expectation ?? true);
    const contextual = h('textarea', {
      rows: 1,
      'aria-label': `Contextual tuples of assertion ${n}`,
      placeholder: 'user relation object',
      spellcheck: 'false',
    });
    contextual.value = ctxText(a?.contextual_tuples);
    const context = h('input', {
      type: 'text',
      value: a?.context ? JSON.stringify(a.context) : '',
      placeholder: '{}',
      'aria-label': `Context of assertion ${n}`,
      spellcheck: 'false',
    });
    const result = h('td', { class: 'assert-result' });
    const row: Row = {
      el: h('tr', null),
      result,
      read: () => {
        const out: Assertion = {
          tuple_key: { user: user.value.trim(), relation: relation.value.trim(), object: object.value.trim() },
          expectation: expect.value === 'true',
        };
        const ct = parseContextual(contextual.value);
        if (ct.length) out.contextual_tuples = ct;
        const cx = parseJsonObject(context.value, `the context of assertion ${n}`);
        if (cx) out.context = cx;
        return out;
      },
    };
    const remove = h(
      'button',
      {
        type: 'button',
        class: 'link danger',
        'aria-label': `Remove assertion ${n}`,
        onclick: () => {
          rows = rows.filter((r) => r !== row);
          row.el.remove();
        },
      },
      'Remove',
    );
    row.el.append(
      ...[user, relation, object, expect, contextual, context].map((c) => h('td', null, c)),
      result,
      h('td', null, remove),
    );
    rows.push(row);
    body.append(row.el);
  };

  const load = async (): Promise<void> => {
    rows = [];
    body.replaceChildren();
    summary.textContent = '';
    clearError(error);
    const id = storeId();
    if (!id) return;
    try {
      const m = await latestModel();
      modelId = m?.id;
      if (!modelId) return void (summary.textContent = 'This store has no model yet: assertions belong to a model.');
      const r = await call<{ assertions: Assertion[] }>('GET', store(id, `/assertions/${modelId}`));
      for (const a of r.assertions ?? []) addRow(a);
      summary.textContent = `${rows.length} assertion${rows.length === 1 ? '' : 's'} of model ${modelId}`;
    } catch (err) {
      showError(error, err);
    }
  };

  const save = async (): Promise<void> => {
    const id = storeId();
    if (!id || !modelId) return showError(error, new Error('this store has no model yet'));
    try {
      await call('PUT', store(id, `/assertions/${modelId}`), { assertions: rows.map((r) => r.read()) });
      clearError(error);
      summary.textContent = `Saved ${rows.length} assertion${rows.length === 1 ? '' : 's'} to model ${modelId}`;
    } catch (err) {
      showError(error, err);
    }
  };

  const runAll = async (): Promise<void> => {
    const id = storeId();
    if (!id || !modelId) return showError(error, new Error('this store has no model yet'));
    clearError(error);
    let pass = 0;
    let fail = 0;
    for (const r of rows) {
      r.result.className = 'assert-result';
      r.result.textContent = '…';
      try {
        const a = r.read();
        const req: Record<string, unknown> = { tuple_key: a.tuple_key, authorization_model_id: modelId };
        if (a.contextual_tuples) req.contextual_tuples = { tuple_keys: a.contextual_tuples };
        if (a.context) req.context = a.context;
        const got = (await call<{ allowed: boolean }>('POST', store(id, '/check'), req)).allowed;
        const ok = got === a.expectation;
        if (ok) pass++;
        else fail++;
        r.result.classList.add(ok ? 'pass' : 'fail');
        r.result.textContent = ok ? '✓ pass' : `✗ fail (got ${got ? 'allowed' : 'denied'})`;
      } catch (err) {
        fail++;
        r.result.classList.add('fail');
        r.result.textContent = `✗ ${describe(err)}`;
      }
    }
    summary.textContent = `${pass} passed, ${fail} failed`;
  };

  onStoreShown('assertions', () => void load());
  onModelShown('assertions', () => void load());
  return h(
    'section',
    { class: 'panel' },
    h(
      'div',
      { class: 'toolbar' },
      h('h2', null, 'Assertions'),
      h('button', { type: 'button', id: 'assertion-add', onclick: () => addRow() }, 'Add assertion'),
      h('button', { type: 'button', id: 'assertions-save', onclick: () => void save() }, 'Save'),
      h('button', { type: 'button', id: 'assertions-run', class: 'primary', onclick: () => void runAll() }, 'Run all'),
    ),
    summary,
    error,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        { class: 'assertions' },
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ...['User', 'Relation', 'Object', 'Expect', 'Contextual tuples', 'Context', 'Result', ''].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        body,
      ),
    ),
  );
}
