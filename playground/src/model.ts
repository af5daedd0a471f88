// The model panel: a DSL editor with highlighting and diagnostics as you type (line and column,
// from the language library running in the browser), save as a new model version, and the
// version history with a line diff between any two versions, and the unsaved model's impact on
// the store's data (./impact.ts). Drafts are kept per store in memory:
// switching stores or panels never loses what was typed.

import { call, store } from './api.js';
import { diffLines } from './diff.js';
import { h, live } from './dom.js';
import { highlightInto, type Mark } from './highlight.js';
import { clearError, dsl, latestModel, modelChanged, onModelShown, onStoreShown, showError, storeId } from './state.js';
import type { ModelJson } from './types.js';
import { impactView } from './impact.js';
import { shadowBox } from './shadow.js';

const STARTER = `model
  schema 1.1

type user

type group
  relations
    define member: [user, group#member]

type folder
  relations
    define owner: [user]
    define parent: [folder]
    define viewer: [user, group#member] or owner or viewer from parent

type document
  relations
    define parent: [folder]
    define owner: [user]
    define editor: [user, group#member] or owner
    define viewer: [user, user:*, group#member] or editor or viewer from parent
    define blocked: [user]
    define can_view: viewer but not blocked
`;

const drafts = new Map<string, string>();

/** Model ids are ULIDs: their first 10 characters are the creation time in ms, base 32. */
function ulidTime(id: string): string {
  const alphabet = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  let ms = 0;
  for (const c of id.slice(0, 10).toUpperCase()) ms = ms * 32 + Math.max(0, alphabet.indexOf(c));
  return new Date(ms).toISOString().replace('T', ' ').slice(0, 19);
}

export function modelPanel(): HTMLElement {
  const text = h('textarea', {
    id: 'dsl-editor',
    class: 'editor-input',
    spellcheck: 'false',
    wrap: 'off',
    autocapitalize: 'off',
    'aria-label': 'Authorization model (DSL)',
    'aria-describedby': 'dsl-diagnostics',
  });
  const backdrop = h('pre', { class: 'editor-backdrop', 'aria-hidden': 'true' });
  const gutter = h('div', { class: 'editor-gutter', 'aria-hidden': 'true' });
  const diagnostics = h('ul', { id: 'dsl-diagnostics', class: 'diagnostics', 'aria-live': 'polite' });
  const status = live('status');
  const error = h('div', { class: 'error', role: 'alert', hidden: true, id: 'model-error' });
  let timer: number | undefined;
  let bad = new Map<number, Mark>();

  const paint = (): void => {
    highlightInto(backdrop, text.value, bad);
    const lines = text.value.split('\n').length;
    if (gutter.childElementCount !== lines || bad.size > 0 || gutter.querySelector('.bad')) {
      gutter.replaceChildren(
        ...Array.from({ length: lines }, (_, i) => h('div', { class: bad.has(i + 1) ? 'bad' : '' }, String(i + 1))),
      );
    }
  };
  const sync = (): void => {
    backdrop.scrollTop = text.scrollTop;
    backdrop.scrollLeft = text.scrollLeft;
    gutter.scrollTop = text.scrollTop;
  };
  const goTo = (line: number, column: number): void => {
    const lines = text.value.split('\n');
    let at = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) at += (lines[i] as string).length + 1;
    text.focus();
    text.setSelectionRange(at + column - 1, at + column - 1);
  };
  const diagnose = async (): Promise<void> => {
    const value = text.value;
    const found = (await dsl()).diagnose(value);
    if (value !== text.value) return; // typed on meanwhile: a newer run follows
    bad = new Map(found.map((d) => [d.line, { start: d.column, end: d.endColumn }]));
    text.setAttribute('aria-invalid', found.length ? 'true' : 'false');
    diagnostics.replaceChildren(
      ...found.map((d) =>
        h(
          'li',
          null,
          h(
            'button',
            {
              type: 'button',
              class: 'link diag',
              'data-line': d.line,
              'data-column': d.column,
              onclick: () => goTo(d.line, d.column),
            },
            `Line ${d.line}, column ${d.column}: ${d.message}`,
          ),
        ),
      ),
    );
    status.textContent = found.length ? `${found.length} problem${found.length > 1 ? 's' : ''}` : 'No problems';
    paint();
  };
  /** Counts the user's edits: a load that finishes after one never replaces the text. */
  let edits = 0;
  text.addEventListener('input', (e) => {
    if (e.isTrusted) edits++;
    const id = storeId();
    if (id) drafts.set(id, text.value);
    paint();
    clearTimeout(timer);
    timer = window.setTimeout(() => void diagnose(), 120);
  });
  text.addEventListener('scroll', sync);
  text.addEventListener('keydown', (e) => {
    // Tab indents by two spaces; Escape then Tab leaves the editor (keyboard users are never trapped).
    if (e.key === 'Tab' && !e.shiftKey && !text.dataset.escape) {
      e.preventDefault();
      const s = text.selectionStart;
      text.setRangeText('  ', s, text.selectionEnd, 'end');
      text.dispatchEvent(new Event('input'));
    } else if (e.key === 'Escape') text.dataset.escape = '1';
    else if (e.key === 's' && (e.ctrlKey || e.metaKey)) {
      e.preventDefault();
      void save();
    } else delete text.dataset.escape;
  });

  const save = async (): Promise<void> => {
    const id = storeId();
    if (!id) return showError(error, new Error('choose or create a store first'));
    clearError(error);
    // A diagnosis still pending from the last keystroke runs now, not after the save: it would
    // replace the "Saved as model" status with its own.
    clearTimeout(timer);
    await diagnose();
    let model: ModelJson;
    const lang = await dsl();
    try {
      model = lang.dslToJson(text.value);
    } catch (err) {
      // The library's own message counts from 0; the diagnostics (and the gutter) from 1.
      const first = lang.diagnose(text.value)[0];
      return showError(error, first ? new Error(`Line ${first.line}, column ${first.column}: ${first.message}`) : err);
    }
    try {
      const r = await call<{ authorization_model_id: string }>('POST', store(id, '/authorization-models'), model);
      status.textContent = `Saved as model ${r.authorization_model_id}`;
      drafts.delete(id);
      modelChanged();
    } catch (err) {
      showError(error, err); // the text stays as typed
    }
  };

  // The unsaved model's impact on the store's data, before saving it.
  const impact = impactView(async () => (await dsl()).dslToJson(text.value), error);

  // History and diff.
  const history = h('ol', { class: 'history', id: 'model-history' });
  const from = h('select', { id: 'diff-from', 'aria-label': 'Older version' });
  const to = h('select', { id: 'diff-to', 'aria-label': 'Newer version' });
  const diffOut = h('pre', { class: 'diff', id: 'model-diff', tabindex: 0, 'aria-label': 'Differences' });
  const models = new Map<string, ModelJson>();
  const loadHistory = async (): Promise<void> => {
    const id = storeId();
    models.clear();
    history.replaceChildren();
    from.replaceChildren();
    to.replaceChildren();
    diffOut.replaceChildren();
    if (!id) return;
    try {
      let token: string | undefined;
      do {
        const r = await call<{ authorization_models: ModelJson[]; continuation_token?: string }>(
          'GET',
          store(id, '/authorization-models'),
          undefined,
          { page_size: 50, continuation_token: token },
        );
        for (const m of r.authorization_models) models.set(m.id as string, m);
        token = r.continuation_token || undefined;
      } while (token && models.size < 500);
    } catch (err) {
      return showError(error, err);
    }
    const ids = [...models.keys()];
    history.replaceChildren(
      ...ids.map((m, i) =>
        h(
          'li',
          null,
          h('code', null, m),
          ` ${ulidTime(m)} UTC`,
          i === 0 ? h('span', { class: 'badge' }, 'latest') : '',
          ' ',
          h('button', { type: 'button', class: 'link', onclick: () => void open(m) }, 'Open in editor'),
        ),
      ),
    );
    for (const sel of [from, to])
      sel.replaceChildren(...ids.map((m) => h('option', { value: m }, `${m.slice(-8)} · ${ulidTime(m)}`)));
    to.value = ids[0] ?? '';
    from.value = ids[1] ?? ids[0] ?? '';
  };
  const open = async (m: string): Promise<void> => {
    const model = models.get(m);
    if (!model) return;
    text.value = (await dsl()).jsonToDsl(model);
    text.dispatchEvent(new Event('input'));
  };
  const showDiff = async (): Promise<void> => {
    const a = models.get(from.value);
    const b = models.get(to.value);
    if (!a || !b) return;
    const d = await dsl();
    const lines = diffLines(d.jsonToDsl(a).split('\n'), d.jsonToDsl(b).split('\n'));
    diffOut.replaceChildren(
      ...lines.map((l) => h('div', { class: l.op === '+' ? 'add' : l.op === '-' ? 'del' : '' }, `${l.op} ${l.text}`)),
    );
  };

  const load = async (): Promise<void> => {
    const id = storeId();
    clearError(error);
    const draft = id ? drafts.get(id) : undefined;
    if (draft !== undefined) text.value = draft;
    else {
      const seen = edits;
      try {
        const m = await latestModel();
        const loaded = m ? (await dsl()).jsonToDsl(m) : STARTER;
        if (edits === seen) text.value = loaded;
      } catch (err) {
        showError(error, err);
      }
    }
    paint();
    void diagnose();
    void loadHistory();
  };
  onStoreShown('model', () => void load());
  onModelShown('model', () => void loadHistory());
  text.value = STARTER;
  paint();
  // The language module is fetched when the editor is first shown, not before.
  let first = true;
  window.addEventListener('panel-shown', (e) => {
    if ((e as CustomEvent<string>).detail !== 'model' || !first) return;
    first = false;
    void diagnose();
  });

  return h(
    'section',
    { class: 'panel model-panel' },
    h(
      'div',
      { class: 'toolbar' },
      h('h2', null, 'Model'),
      impact.button,
      h(
        'button',
        { type: 'button', id: 'save-model', class: 'primary', onclick: () => void save() },
        'Save as new version',
      ),
      h('span', { class: 'muted' }, 'Ctrl+S saves · Esc then Tab leaves the editor'),
      status,
    ),
    error,
    h('div', { class: 'editor' }, gutter, h('div', { class: 'editor-body' }, backdrop, text)),
    diagnostics,
    impact.view,
    shadowBox(error),
    h(
      'details',
      { class: 'history-box', id: 'model-versions', ontoggle: () => void 0 },
      h('summary', null, 'Version history and diff'),
      history,
      h(
        'div',
        { class: 'row' },
        h('label', null, 'From ', from),
        h('label', null, 'To ', to),
        h('button', { type: 'button', id: 'show-diff', onclick: () => void showDiff() }, 'Show diff'),
      ),
      diffOut,
    ),
  );
}
