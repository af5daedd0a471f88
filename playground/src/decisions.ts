// The store's recorded decisions (the decision log, where the server records them: `--decision-log`
// or the store's own sampling), newest first, each with a link that replays it at its revision
// (`GET /stores/{id}/decisions/{decision_id}/explain`) and shows whether the replay matches and why.

import { ApiError, call, store } from './api.js';
import { h, live } from './dom.js';
import { clearError, showError, storeId } from './state.js';

interface Decision {
  id: string;
  timestamp: string;
  operation: string;
  revision: number;
  request: { tuple_key?: Record<string, string>; type?: string; relation?: string; user?: string };
  answer: Record<string, unknown>;
}

interface Explained {
  equal: boolean;
  replayed: Record<string, unknown>;
  reason: { allowed: boolean; chain: { kind: string; label: string }[] } | null;
}

/** What was asked, in one line. */
function asked(r: Decision['request']): string {
  const k = r.tuple_key;
  if (k) return `${k.user ?? ''} ${k.relation ?? ''} ${k.object ?? ''}`;
  return [r.type, r.relation, r.user].filter(Boolean).join(' ');
}

/** The answer, in one line. */
function answered(a: Decision['answer']): string {
  if ('allowed' in a) return String(a.allowed);
  const list = (a.objects ?? a.users) as unknown[] | undefined;
  return list ? `${list.length} result${list.length === 1 ? '' : 's'}` : '';
}

export function decisionsSection(): { element: HTMLElement; reload: () => Promise<void> } {
  const body = h('tbody', { id: 'decisions-body' });
  const status = live('muted');
  status.id = 'decisions-status';
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'decisions-error' });
  const why = h('div', { class: 'why', id: 'decision-why', hidden: true });
  let generation = 0;

  const explain = async (d: Decision): Promise<void> => {
    const id = storeId();
    if (!id) return;
    try {
      const r = await call<Explained>('GET', store(id, `/decisions/${encodeURIComponent(d.id)}/explain`));
      const steps = r.reason?.chain ?? [];
      why.replaceChildren(
        h('h4', null, `Decision ${d.id} at revision ${d.revision}: replay ${r.equal ? 'matches' : 'DIFFERS'}`),
        steps.length
          ? h('ol', null, ...steps.map((s) => h('li', null, `${s.kind}: ${s.label}`)))
          : h('p', null, `Replayed: ${JSON.stringify(r.replayed)}`),
      );
      why.hidden = false;
      clearError(error);
    } catch (err) {
      showError(error, err);
    }
  };

  const reload = async (): Promise<void> => {
    const id = storeId();
    const gen = ++generation;
    body.replaceChildren();
    why.hidden = true;
    status.textContent = '';
    if (!id) return;
    try {
      const r = await call<{ decisions: Decision[] }>('GET', store(id, '/decisions'), undefined, {
        sort: 'timestamp:-1',
        page_size: 50,
      });
      if (gen !== generation) return;
      clearError(error);
      status.textContent = r.decisions.length
        ? `${r.decisions.length} most recent decisions`
        : 'No decisions recorded.';
      body.replaceChildren(
        ...r.decisions.map((d) =>
          h(
            'tr',
            null,
            h('td', null, d.timestamp.replace('T', ' ').slice(0, 23)),
            h('td', null, d.operation),
            h('td', null, asked(d.request)),
            h('td', null, answered(d.answer)),
            h('td', null, h('button', { type: 'button', class: 'link', onclick: () => void explain(d) }, 'explain')),
          ),
        ),
      );
    } catch (err) {
      if (gen !== generation) return;
      if (err instanceof ApiError && err.status === 404 && err.code !== 'store_id_not_found')
        status.textContent = 'The decision log is not served by this server.';
      else showError(error, err);
    }
  };

  const head = ['Time (UTC)', 'Operation', 'Asked', 'Answer', 'Why'].map((c) => h('th', { scope: 'col' }, c));
  const element = h(
    'section',
    { class: 'store-log', 'aria-labelledby': 'decisions-title' },
    h('h2', { id: 'decisions-title' }, 'Decisions'),
    error,
    status,
    h('div', { class: 'table-wrap' }, h('table', null, h('thead', null, h('tr', null, ...head)), body)),
    why,
  );
  return { element, reload };
}
