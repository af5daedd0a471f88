// What every panel shares: the current store, its latest model (read once, re-read after a save),
// the on-demand DSL module, and a way to show an error where it happened.

import { ApiError, call, describe, store } from './api.js';
import type { ModelJson } from './types.js';

type Listener = () => void;

let current: string | undefined;
let latest: Promise<ModelJson | undefined> | undefined;
const storeListeners: Listener[] = [];
const modelListeners: Listener[] = [];

export function storeId(): string | undefined {
  return current;
}

export function setStore(id: string | undefined): void {
  if (id === current) return;
  current = id;
  latest = undefined;
  for (const fn of storeListeners) fn();
}

export function onStore(fn: Listener): void {
  storeListeners.push(fn);
}

export function onModel(fn: Listener): void {
  modelListeners.push(fn);
}

// Panels load their data only when seen: a store switch (or a new model) marks the hidden
// panels stale and each reloads when it is shown. The first render then asks the server only
// for what the visible panel shows.
let visiblePanel = '';
const stale = new Map<string, Listener>();

/** Called by the shell when `panel` becomes the visible one. */
export function panelShown(panel: string): void {
  visiblePanel = panel;
  const fn = stale.get(panel);
  if (fn) {
    stale.delete(panel);
    fn();
  }
}

export function isShown(panel: string): boolean {
  return panel === visiblePanel;
}

/** `fn` now if `panel` is visible, else when it is next shown (once, however many changes came). */
function whenShown(panel: string, fn: Listener): void {
  if (panel === visiblePanel) fn();
  else stale.set(panel, fn);
}

/**
 * Runs `fn` for `panel` on every store switch, deferred while the panel is hidden. A panel built
 * after a store was chosen (panels are built lazily, main.ts) also gets that store.
 */
export function onStoreShown(panel: string, fn: Listener): void {
  onStore(() => whenShown(panel, fn));
  if (current) whenShown(panel, fn);
}

/** Runs `fn` for `panel` after every model change, deferred while the panel is hidden. */
export function onModelShown(panel: string, fn: Listener): void {
  onModel(() => whenShown(panel, fn));
}

/** The store's latest model, or undefined when it has none. */
export function latestModel(): Promise<ModelJson | undefined> {
  const id = current;
  if (!id) return Promise.resolve(undefined);
  latest ??= call<{ authorization_models: ModelJson[] }>('GET', store(id, '/authorization-models'), undefined, {
    page_size: 1,
  }).then((r) => r.authorization_models[0]);
  return latest;
}

/** After a model was written: panels re-read it. */
export function modelChanged(): void {
  latest = undefined;
  for (const fn of modelListeners) fn();
}

let dslModule: Promise<typeof import('./dsl.js')> | undefined;
/** The language module, fetched on first use (it is most of the playground's bytes). */
export function dsl(): Promise<typeof import('./dsl.js')> {
  dslModule ??= import('./dsl.js');
  return dslModule;
}

/** Shows `err` as `code: message` in `el` (an error region next to the control that failed). */
export function showError(el: HTMLElement, err: unknown): void {
  el.textContent = describe(err);
  el.hidden = false;
  if (err instanceof ApiError) el.dataset.code = err.code;
  else delete el.dataset.code;
}

export function clearError(el: HTMLElement): void {
  el.textContent = '';
  el.hidden = true;
  delete el.dataset.code;
}

/** The codes of a request that had no (or no valid) credential. */
const AUTH_CODES = new Set([
  'bearer_token_missing',
  'unauthenticated',
  'auth_failed_invalid_bearer_token',
  'auth_failed_invalid_subject',
  'auth_failed_invalid_audience',
  'auth_failed_invalid_issuer',
  'auth_failure',
]);

/** After the user signed in: errors that only said "sign in" go, and the panels re-read. */
export function signedIn(): void {
  for (const el of document.querySelectorAll<HTMLElement>('.error[data-code]'))
    if (AUTH_CODES.has(el.dataset.code ?? '')) clearError(el);
  modelChanged();
}
