// The change log (ReadChanges, newest pages loaded on demand) and, where the server records it,
// the store log (SearchStoreLogs; absent in auth mode none, where nothing is recorded).

import { ApiError, call, store } from './api.js';
import { h, live } from './dom.js';
import { clearError, isShown, onStore, showError, storeId } from './state.js';
import type { TupleKey } from './types.js';

interface Change { tuple_key: TupleKey; operation: string; timestamp: string }

export function changesPanel(): HTMLElement {
  const body = h('tbody', { id: 'changes-body' });
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'changes-error' });
  const more = h('button', { type: 'button', id: 'changes-more' }, 'Load more');
  const logs = h('pre', { class: 'logs', id: 'store-logs', tabindex: 0 });
  const logStatus = live('muted');
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
      const r = await call<{ changes: Change[]; continuation_token: string }>('GET', store(id, '/changes'), undefined, { page_size: 50, continuation_token: token || undefined });
      if (gen !== generation) return;
      clearError(error);
      for (const c of r.changes) {
        const k = c.tuple_key;
        body.append(h('tr', null, h('td', null, c.timestamp.replace('T', ' ').slice(0, 19)), h('td', null, c.operation.replace('TUPLE_OPERATION_', '').toLowerCase()), h('td', null, k.user), h('td', null, k.relation), h('td', null, k.object)));
      }
      // ReadChanges returns the same token when nothing newer exists.
      more.disabled = r.changes.length === 0 || !r.continuation_token;
      token = r.continuation_token || token;
    } catch (err) {
      showError(error, err);
    }
  };

  const storeLog = async (): Promise<void> => {
    const id = storeId();
    logs.textContent = '';
    if (!id) return;
    try {
      const r = await call<{ logs: unknown[] }>('GET', store(id, '/logs'), undefined, { sort: 'timestamp:-1', page_size: 100 });
      logStatus.textContent = `${r.logs.length} most recent entries`;
      logs.textContent = r.logs.map((l) => JSON.stringify(l)).join('\n');
    } catch (err) {
      logStatus.textContent = err instanceof ApiError && err.status === 404 && err.code !== 'store_id_not_found'
        ? 'The store log is not enabled on this server (it is recorded in authenticated modes with --log-retention-days above 0).'
        : `Store log unavailable: ${err instanceof ApiError ? `${err.code}: ${err.message}` : String(err)}`;
    }
  };

  more.addEventListener('click', () => void page(false));
  // Shown again: the log may have grown meanwhile.
  window.addEventListener('panel-shown', (e) => {
    if ((e as CustomEvent<string>).detail !== 'changes') return;
    void page(true);
    void storeLog();
  });
  // Hidden, it reloads when shown (above).
  onStore(() => {
    if (!isShown('changes')) return;
    void page(true);
    void storeLog();
  });
  return h('section', { class: 'panel' },
    h('div', { class: 'toolbar' }, h('h2', null, 'Change log'), h('button', { type: 'button', id: 'changes-reload', onclick: () => void page(true) }, 'Reload')),
    error,
    h('div', { class: 'table-wrap' }, h('table', null,
      h('thead', null, h('tr', null, ...['Time (UTC)', 'Operation', 'User', 'Relation', 'Object'].map((c) => h('th', { scope: 'col' }, c)))), body)),
    h('div', { class: 'pager' }, more),
    h('h2', null, 'Store log'),
    h('div', { class: 'row' }, h('button', { type: 'button', onclick: () => void storeLog() }, 'Reload store log'), logStatus),
    logs,
  );
}
