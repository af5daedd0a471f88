// The store log (SearchStoreLogs, where the server records it: authenticated modes with
// --log-retention-days above 0): the most recent calls on the store, newest first, as a table,
// with the search box's query (the server's Lucene subset, e.g. `request.operation:Write`); then the
// store's recorded decisions, each linked to its explanation (decisions.ts).

import { ApiError, call, store } from './api.js';
import { decisionsSection } from './decisions.js';
import { field, h, live } from './dom.js';
import { clearError, showError, storeId } from './state.js';

interface LogEntry {
  timestamp: string;
  client_id: string;
  request: {
    operation: string;
    tuple_key: Record<string, string | undefined> | null;
    tuple_keys: { writes: unknown[]; deletes: unknown[] } | null;
    filter: Record<string, string> | null;
  };
  response: { status: number; error_code: string; latency_ms: number };
}

/** What a call was about, in one line: its tuple, its writes and deletes, or its filter. */
function subject(r: LogEntry['request'], status: number): string {
  const k = r.tuple_key;
  if (k) return `${k.user ?? ''} ${k.relation ?? ''} ${k.object ?? ''}`.trim();
  const keys = r.tuple_keys;
  // A refused Write applied nothing: say what it asked for, not that it was written.
  if (keys && status >= 400) return `refused: ${keys.writes.length} to write, ${keys.deletes.length} to delete`;
  if (keys) return `${keys.writes.length} written, ${keys.deletes.length} deleted`;
  return r.filter
    ? Object.entries(r.filter)
        .map(([f, v]) => `${f}=${v}`)
        .join(' ')
    : '';
}

/** The section and its reload (called when the changes panel is shown or the store switches). */
export function storeLogSection(): { element: HTMLElement; reload: () => Promise<void> } {
  const [queryWrap, query] = field('Search', {
    id: 'store-log-query',
    placeholder: 'request.operation:Write AND response.status:200',
  });
  const body = h('tbody', { id: 'store-log-body' });
  const status = live('muted');
  status.id = 'store-log-status';
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'store-log-error' });
  /** Bumped by every reload: an answer to an older request is dropped. */
  let generation = 0;
  const decisions = decisionsSection();

  const reload = async (): Promise<void> => {
    void decisions.reload();
    const id = storeId();
    const gen = ++generation;
    body.replaceChildren();
    status.textContent = '';
    if (!id) return;
    try {
      const r = await call<{ logs: LogEntry[] }>('GET', store(id, '/logs'), undefined, {
        sort: 'timestamp:-1',
        page_size: 100,
        query: query.value.trim(),
      });
      if (gen !== generation) return;
      clearError(error);
      status.textContent = r.logs.length
        ? `${r.logs.length} most recent entries${query.value.trim() ? ' matching the search' : ''}`
        : 'No entries.';
      body.replaceChildren(
        ...r.logs.map((l) =>
          h(
            'tr',
            null,
            h('td', null, l.timestamp.replace('T', ' ').slice(0, 23)),
            h('td', null, l.request.operation),
            h('td', null, l.client_id),
            h('td', null, `${l.response.status}${l.response.error_code ? ` ${l.response.error_code}` : ''}`),
            h('td', null, subject(l.request, l.response.status)),
            h('td', { class: 'num' }, String(l.response.latency_ms)),
          ),
        ),
      );
    } catch (err) {
      if (gen !== generation) return;
      if (err instanceof ApiError && err.status === 404 && err.code !== 'store_id_not_found') {
        status.textContent =
          'The store log is not enabled on this server (it is recorded in authenticated modes with --log-retention-days above 0).';
      } else showError(error, err); // a refused search stays as typed
    }
  };

  const element = h(
    'section',
    { class: 'store-log', 'aria-labelledby': 'store-log-title' },
    h('h2', { id: 'store-log-title' }, 'Store log'),
    h(
      'form',
      {
        class: 'filters',
        'aria-label': 'Search the store log',
        onsubmit: (e: Event) => {
          e.preventDefault();
          void reload();
        },
      },
      queryWrap,
      h('button', { type: 'submit', id: 'store-log-search' }, 'Search'),
    ),
    error,
    status,
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
            ...['Time (UTC)', 'Operation', 'Client', 'Status', 'Tuple or filter', 'ms'].map((c) =>
              h('th', { scope: 'col' }, c),
            ),
          ),
        ),
        body,
      ),
    ),
    decisions.element,
  );
  return { element, reload };
}
