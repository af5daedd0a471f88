// The change log (ReadChanges, newest pages loaded on demand) and, below it, the store log
// (store-log.ts; absent in auth mode none, where nothing is recorded).

import { call, store } from './api.js';
import { h } from './dom.js';
import { clearError, isShown, onStore, showError, storeId } from './state.js';
import { storeLogSection } from './store-log.js';
import type { TupleKey } from './types.js';

interface Change {
  tuple_key: TupleKey;
  operation: string;
  timestamp: string;
}

export function changesPanel(): HTMLElement {
  const body = h('tbody', { id: 'changes-body' });
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'changes-error' });
  const more = h('button', { type: 'button', id: 'changes-more' }, 'Load more');
  const log = storeLogSection();
  let token = '';
  /** Bumped by every reset: an answer to an older request is dropped. */
  let generation = 0;

  const page = async (reset: boolean): Promise<void> => {
    const id = storeId();
    if (reset) {
      body.replaceChildren();
      token = '';
      generation++;
    }
    const gen = generation;
    if (!id) return;
    try {
      const r = await call<{ changes: Change[]; continuation_token: string }>('GET', store(id, '/changes'), undefined, {
        page_size: 50,
        continuation_token: token || undefined,
      });
      if (gen !== generation) return;
      clearError(error);
      for (const c of r.changes) {
        const k = c.tuple_key;
        body.append(
          h(
            'tr',
            null,
            h('td', null, c.timestamp.replace('T', ' ').slice(0, 19)),
            h('td', null, c.operation.replace('TUPLE_OPERATION_', '').toLowerCase()),
            h('td', null, k.user),
            h('td', null, k.relation),
            h('td', null, k.object),
          ),
        );
      }
      // ReadChanges returns the same token when nothing newer exists.
      more.disabled = r.changes.length === 0 || !r.continuation_token;
      token = r.continuation_token || token;
    } catch (err) {
      showError(error, err);
    }
  };

  more.addEventListener('click', () => void page(false));
  // Shown again: the log may have grown meanwhile.
  window.addEventListener('panel-shown', (e) => {
    if ((e as CustomEvent<string>).detail !== 'changes') return;
    void page(true);
    void log.reload();
  });
  // Hidden, it reloads when shown (above).
  onStore(() => {
    if (!isShown('changes')) return;
    void page(true);
    void log.reload();
  });
  return h(
    'section',
    { class: 'panel' },
    h(
      'div',
      { class: 'toolbar' },
      h('h2', null, 'Change log'),
      h('button', { type: 'button', id: 'changes-reload', onclick: () => void page(true) }, 'Reload'),
    ),
    error,
    h(
      'div',
      { class: 'table-wrap' },
      h(
        'table',
        null,
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            ...['Time (UTC)', 'Operation', 'User', 'Relation', 'Object'].map((c) => h('th', { scope: 'col' }, c)),
          ),
        ),
        body,
      ),
    ),
    h('div', { class: 'pager' }, more),
    log.element,
  );
}
