// The playground's shell: the store bar, one tab per panel (keyboard: arrow keys move between
// tabs, Enter/Space activate), the panel named by the URL's hash, the store named by `?store=`.
// The first render is the visible panel's alone: it is built, shown and asks for its data before
// any other panel exists; each other panel is built when its tab is first chosen. Built panels stay
// mounted when hidden, so nothing typed in one is lost by visiting another.

import './styles.css';
import { hasCredential } from './api.js';
import { assertionsPanel } from './assertions.js';
import { changesPanel } from './changes.js';
import { h } from './dom.js';
import { graphPanel } from './graph.js';
import { modelPanel } from './model.js';
import { queriesPanel } from './queries.js';
import { onStore, panelShown, signedIn, storeId } from './state.js';
import { authDialog, storeBar } from './stores.js';
import { tuplesPanel } from './tuples.js';

const PANELS: { id: string; label: string; make: () => HTMLElement }[] = [
  { id: 'model', label: 'Model', make: modelPanel },
  { id: 'graph', label: 'Graph', make: graphPanel },
  { id: 'tuples', label: 'Tuples', make: tuplesPanel },
  { id: 'queries', label: 'Queries', make: queriesPanel },
  { id: 'assertions', label: 'Assertions', make: assertionsPanel },
  { id: 'changes', label: 'Changes', make: changesPanel },
];

function start(root: HTMLElement): void {
  const tabs: HTMLButtonElement[] = [];
  const panels: HTMLElement[] = [];
  const built: boolean[] = PANELS.map(() => false);
  const indexOf = (id: string): number =>
    Math.max(
      0,
      PANELS.findIndex((p) => p.id === id),
    );
  /** Builds panel `i` once; a panel registers its listeners as it is built (state.ts). */
  const ensure = (i: number): void => {
    if (built[i]) return;
    built[i] = true;
    panels[i]?.append((PANELS[i] as (typeof PANELS)[number]).make());
  };
  const show = (id: string, focus = false): void => {
    const i = indexOf(id);
    ensure(i);
    tabs.forEach((t, j) => {
      t.setAttribute('aria-selected', String(i === j));
      t.tabIndex = i === j ? 0 : -1;
    });
    panels.forEach((p, j) => {
      p.hidden = i !== j;
    });
    if (focus) tabs[i]?.focus();
    panelShown(PANELS[i]?.id ?? '');
    window.dispatchEvent(new CustomEvent('panel-shown', { detail: PANELS[i]?.id }));
    const hash = `#${PANELS[i]?.id}`;
    if (location.hash !== hash) history.replaceState(null, '', `${location.pathname}${location.search}${hash}`);
  };
  PANELS.forEach((p, i) => {
    const tab = h(
      'button',
      { type: 'button', role: 'tab', id: `tab-${p.id}`, 'aria-controls': `panel-${p.id}`, onclick: () => show(p.id) },
      p.label,
    );
    tab.addEventListener('keydown', (e) => {
      const step =
        e.key === 'ArrowRight' || e.key === 'ArrowDown' ? 1 : e.key === 'ArrowLeft' || e.key === 'ArrowUp' ? -1 : 0;
      if (e.key === 'Home' || e.key === 'End') {
        e.preventDefault();
        show((e.key === 'Home' ? PANELS[0] : PANELS[PANELS.length - 1])?.id ?? 'model', true);
      } else if (step) {
        e.preventDefault();
        show(PANELS[(i + step + PANELS.length) % PANELS.length]?.id ?? 'model', true);
      }
    });
    tabs.push(tab);
    panels.push(
      h('div', { role: 'tabpanel', id: `panel-${p.id}`, 'aria-labelledby': `tab-${p.id}`, tabindex: -1, hidden: true }),
    );
  });

  const initial = new URLSearchParams(location.search).get('store') ?? undefined;
  const dialog = authDialog(() => {
    signedIn();
    bar.dispatchEvent(new Event('refresh'));
  });
  const bar = storeBar(() => {
    if (!hasCredential() && !dialog.open) dialog.showModal();
  }, initial);
  onStore(() => {
    const q = new URLSearchParams(location.search);
    const id = storeId();
    if (id) q.set('store', id);
    else q.delete('store');
    const s = q.toString();
    history.replaceState(null, '', `${location.pathname}${s ? `?${s}` : ''}${location.hash}`);
  });

  root.replaceChildren(
    h('a', { class: 'skip', href: '#main' }, 'Skip to content'),
    h(
      'header',
      { class: 'top' },
      h('h1', null, h('span', { class: 'logo', 'aria-hidden': 'true' }, '⊢'), ' latch playground'),
      bar,
      h('button', { type: 'button', class: 'link', id: 'sign-in', onclick: () => dialog.showModal() }, 'Credentials'),
    ),
    h('nav', { class: 'tabs', role: 'tablist', 'aria-label': 'Playground sections' }, ...tabs),
    h('main', { id: 'main' }, ...panels),
    dialog,
  );
  show(location.hash.slice(1) || 'model');
  window.addEventListener('hashchange', () => show(location.hash.slice(1)));
}

/** How long the first draw waits for the first page index.html asked for, at most. */
const EARLY_WAIT_MS = 300;

// When index.html already asked for the first page of tuples, the shell is drawn once that answer
// is in: the page then lays out and paints once, shell and rows together, instead of painting the
// shell while the answer waits behind that work. A slow or failed answer does not hold it longer.
const root = document.getElementById('app') as HTMLElement;
const early = window.latchEarly?.answer;
if (early) {
  let started = false;
  const go = (): void => {
    if (started) return;
    started = true;
    start(root);
  };
  early.then(go, go);
  setTimeout(go, EARLY_WAIT_MS);
} else start(root);
