// The model editor's "Shadow" box: the store's shadow model (docs/changing-models.md, shadow
// evaluation) — attach a written model with a sampling rate, clear it, and read the server's
// report: counts and the newest disagreements (request, both answers, revision).

import { call, store } from './api.js';
import { h } from './dom.js';
import { clearError, showError, storeId } from './state.js';

type Json = Record<string, unknown>;
const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

function answerText(a: unknown): string {
  const o = (a ?? {}) as Json;
  if ('allowed' in o) return text(o.allowed);
  if ('objects_count' in o) return `${text(o.objects_count)} objects`;
  return `error ${text(((o.error ?? {}) as Json).code)}`;
}

function requestText(r: Json): string {
  const k = r.tuple_key as Json | undefined;
  return k
    ? `${text(k.object)}#${text(k.relation)}@${text(k.user)}`
    : `${text(r.type)}#${text(r.relation)}@${text(r.user)}`;
}

function recordItem(d: Json): HTMLElement {
  const diff = d.lost || d.gained ? ` (lost ${text(d.lost)}, gained ${text(d.gained)})` : '';
  return h(
    'li',
    null,
    `${text(d.operation)} ${requestText(d.request as Json)} at revision ${text(d.revision)}: `,
    h('strong', null, answerText(d.answer)),
    ' → shadow ',
    h('strong', null, answerText(d.shadow_answer)),
    diff,
  );
}

/** The box, placed under the editor; `error` is the panel's error line. */
export function shadowBox(error: HTMLElement): HTMLElement {
  const model = h('input', { id: 'shadow-model', placeholder: 'model id (written, not the latest)', size: 30 });
  const sampling = h('input', { id: 'shadow-sampling', type: 'number', min: 0, max: 1, step: 0.05, value: '0.1' });
  const status = h('p', { class: 'status', id: 'shadow-status', 'aria-live': 'polite' });
  const records = h('ul', { id: 'shadow-records' });
  const refresh = async (): Promise<void> => {
    const id = storeId();
    if (!id) return showError(error, new Error('choose or create a store first'));
    clearError(error);
    try {
      const r = await call<Json>('GET', store(id, '/shadow/report'));
      const s = r.shadow as Json | null;
      status.textContent = `${s ? `Shadow ${text(s.authorization_model_id)} at sampling ${text(s.sampling)}` : 'No shadow'}: ${text(r.evaluated)} evaluated, ${text(r.disagreements)} disagreements, ${text(r.dropped)} dropped`;
      records.replaceChildren(...((r.records ?? []) as Json[]).map(recordItem));
    } catch (err) {
      showError(error, err);
    }
  };
  const act = async (method: 'PUT' | 'DELETE'): Promise<void> => {
    const id = storeId();
    if (!id) return showError(error, new Error('choose or create a store first'));
    clearError(error);
    try {
      const body =
        method === 'PUT'
          ? {
              authorization_model_id: (model as HTMLInputElement).value.trim(),
              sampling: Number((sampling as HTMLInputElement).value),
            }
          : undefined;
      await call(method, store(id, '/shadow'), body);
    } catch (err) {
      return showError(error, err);
    }
    await refresh();
  };
  return h(
    'details',
    { class: 'history-box', id: 'model-shadow', ontoggle: () => void refresh() },
    h('summary', null, 'Shadow evaluation'),
    h(
      'div',
      { class: 'row' },
      h('label', null, 'Shadow model ', model),
      h('label', null, 'Sampling ', sampling),
      h('button', { type: 'button', id: 'shadow-set', onclick: () => void act('PUT') }, 'Set shadow'),
      h('button', { type: 'button', id: 'shadow-clear', onclick: () => void act('DELETE') }, 'Clear'),
      h('button', { type: 'button', id: 'shadow-refresh', onclick: () => void refresh() }, 'Refresh report'),
    ),
    status,
    records,
  );
}
