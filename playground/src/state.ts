// What every panel shares: the current store, its latest model (read once, re-read after a save),
// the on-demand DSL module, and a way to show an error where it happened.

import { call, describe, store } from './api.js';
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

/** The store's latest model, or undefined when it has none. */
export function latestModel(): Promise<ModelJson | undefined> {
  const id = current;
  if (!id) return Promise.resolve(undefined);
  latest ??= call<{ authorization_models: ModelJson[] }>('GET', store(id, '/authorization-models'), undefined, { page_size: 1 }).then((r) => r.authorization_models[0]);
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
}

export function clearError(el: HTMLElement): void {
  el.textContent = '';
  el.hidden = true;
}
