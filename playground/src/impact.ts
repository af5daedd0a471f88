// The model editor's "Impact" view: the unsaved model's impact on the store's tuples
// (POST /stores/{id}/authorization-models/impact, docs/changing-models.md), before "Save as new
// version": structural changes, stored tuples read differently, the assertions that change, a
// table per relation and the first pairs that gain or lose access. Nothing is written.

import { stream, store } from './api.js';
import { h } from './dom.js';
import { clearError, showError, storeId } from './state.js';
import type { ModelJson } from './types.js';
import { impactLineText, text, type Line } from '../../src/cli/impact-text.js';

/** Pairs shown in the page; the summary counts all of them. */
const SHOWN = 200;

function summaryTable(s: Line): HTMLElement {
  const rows = (s.relations as Line[]).map((r) =>
    h(
      'tr',
      null,
      h('td', null, `${text(r.object_type)}#${text(r.relation)}`),
      h('td', null, text(r.status)),
      ...['objects', 'gained', 'lost', 'undetermined'].map((k) => h('td', null, r.evaluated ? text(r[k]) : '–')),
    ),
  );
  return h(
    'div',
    { class: 'table-wrap' },
    h(
      'table',
      { id: 'impact-summary' },
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          ...['Relation', 'Definition', 'Objects', 'Gained', 'Lost', 'Undetermined'].map((c) => h('th', null, c)),
        ),
      ),
      h('tbody', null, ...rows),
    ),
  );
}

/**
 * The Impact button (placed before "Save as new version") and the view it fills. `candidate`
 * turns the editor's text into a model (throws with the language library's message).
 */
export function impactView(
  candidate: () => Promise<ModelJson>,
  error: HTMLElement,
): { button: HTMLElement; view: HTMLElement } {
  const status = h('p', { class: 'status', id: 'impact-status', 'aria-live': 'polite' });
  const notes = h('ul', { id: 'impact-notes' });
  const pairs = h('ul', { id: 'impact-pairs' });
  const table = h('div');
  const view = h(
    'section',
    { id: 'model-impact', hidden: true },
    h('h3', null, 'Impact of this model'),
    status,
    notes,
    table,
    pairs,
  );
  let running: AbortController | undefined;
  const run = async (): Promise<void> => {
    const id = storeId();
    if (!id) return showError(error, new Error('choose or create a store first'));
    clearError(error);
    let model: ModelJson;
    try {
      model = await candidate();
    } catch (err) {
      return showError(error, err);
    }
    running?.abort();
    const ctl = (running = new AbortController());
    view.hidden = false;
    notes.replaceChildren();
    pairs.replaceChildren();
    table.replaceChildren();
    status.textContent = 'Computing…';
    let shown = 0;
    const onLine = (l: Line): void => {
      if (l.kind === 'progress') status.textContent = `Computing… ${text(l.evaluated)} of ${text(l.total)} objects`;
      else if (l.kind === 'gained' || l.kind === 'lost') {
        if (shown++ < SHOWN)
          pairs.append(
            h(
              'li',
              { class: l.kind === 'gained' ? 'add' : 'del' },
              `${l.kind === 'gained' ? '+' : '−'} ${text(l.user)} ${text(l.relation)} ${text(l.object)}`,
            ),
          );
      } else if (l.kind === 'summary') {
        table.replaceChildren(summaryTable(l));
        status.textContent = `${text(l.gained)} gained, ${text(l.lost)} lost, ${text(l.undetermined)} undetermined; ${text(l.rejected_tuples)} tuple(s) read differently; ${text(l.assertions_changed)} assertion(s) change${shown > SHOWN ? ` (first ${SHOWN} pairs shown)` : ''}`;
      } else {
        const n = impactLineText(l);
        if (n !== undefined) notes.append(h('li', null, n));
      }
    };
    try {
      await stream(
        store(id, '/authorization-models/impact'),
        { ...model, options: { assertions: true } },
        onLine,
        ctl.signal,
      );
    } catch (err) {
      if (ctl.signal.aborted) return;
      status.textContent = '';
      showError(error, err);
    }
  };
  const button = h('button', { type: 'button', id: 'impact-model', onclick: () => void run() }, 'Impact');
  return { button, view };
}
