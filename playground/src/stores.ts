// The store bar: list (all pages), create, delete and switch stores; the credential dialog for
// authenticated servers.

import { ApiError, call, hasCredential, setClient, setKey } from './api.js';
import { field, h } from './dom.js';
import { clearError, setStore, showError, storeId } from './state.js';
import type { Store } from './types.js';

async function allStores(): Promise<Store[]> {
  const out: Store[] = [];
  let token: string | undefined;
  do {
    const r = await call<{ stores: Store[]; continuation_token?: string }>('GET', '/stores', undefined, {
      page_size: 100,
      continuation_token: token,
    });
    out.push(...r.stores);
    token = r.continuation_token || undefined;
  } while (token);
  return out;
}

export function storeBar(onAuthNeeded: () => void, initial?: string): HTMLElement {
  const select = h('select', { id: 'store-select', 'aria-label': 'Store' });
  const error = h('div', { class: 'error', role: 'alert', hidden: true });
  const [nameWrap, name] = field('New store', { placeholder: 'name', id: 'new-store-name' });
  const refresh = async (select_?: string): Promise<void> => {
    // A store named in the URL is opened at once; the list follows and corrects it if it is gone.
    if (select_) setStore(select_);
    try {
      const stores = await allStores();
      clearError(error);
      select.replaceChildren(
        h('option', { value: '' }, stores.length ? '— choose a store —' : '— no stores yet —'),
        ...stores.map((s) => h('option', { value: s.id }, `${s.name} (${s.id})`)),
      );
      const want = select_ ?? storeId();
      select.value = want && stores.some((s) => s.id === want) ? want : '';
      setStore(select.value || undefined);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401 && !hasCredential()) onAuthNeeded();
      showError(error, err);
    }
  };
  select.addEventListener('change', () => setStore(select.value || undefined));
  const create = async (e: Event): Promise<void> => {
    e.preventDefault();
    if (!name.value.trim()) return showError(error, new Error('a store needs a name'));
    try {
      const s = await call<Store>('POST', '/stores', { name: name.value.trim() });
      name.value = '';
      await refresh(s.id);
    } catch (err) {
      showError(error, err);
    }
  };
  const remove = async (): Promise<void> => {
    const id = storeId();
    if (!id) return;
    const label = select.selectedOptions[0]?.textContent ?? id;
    if (!confirm(`Delete store ${label}? Its models and tuples are deleted too.`)) return;
    try {
      await call('DELETE', `/stores/${encodeURIComponent(id)}`);
      await refresh('');
    } catch (err) {
      showError(error, err);
    }
  };
  const bar = h(
    'div',
    { class: 'storebar' },
    h('label', { class: 'field', for: 'store-select' }, h('span', null, 'Store'), select),
    h('button', { type: 'button', onclick: () => void refresh(), title: 'Reload the list of stores' }, 'Reload'),
    h('button', { type: 'button', class: 'danger', id: 'delete-store', onclick: () => void remove() }, 'Delete store'),
    h(
      'form',
      { class: 'inline', onsubmit: (e: Event) => void create(e) },
      nameWrap,
      h('button', { type: 'submit', id: 'create-store' }, 'Create'),
    ),
    error,
  );
  bar.addEventListener('refresh', () => void refresh());
  void refresh(initial);
  return bar;
}

/** The credential dialog: a preshared key or OAuth client credentials, kept in memory only. */
export function authDialog(done: () => void): HTMLDialogElement {
  const [keyWrap, key] = field('API key (preshared key or bearer token)', { type: 'password', id: 'auth-key' });
  const [idWrap, id] = field('Client id', { id: 'auth-client-id' });
  const [secretWrap, secret] = field('Client secret', { type: 'password', id: 'auth-client-secret' });
  const dialog = h('dialog', { id: 'auth-dialog', 'aria-labelledby': 'auth-title' });
  const submit = (e: Event): void => {
    e.preventDefault();
    if (key.value) setKey(key.value);
    else if (id.value && secret.value) setClient(id.value, secret.value);
    else return;
    key.value = '';
    secret.value = '';
    dialog.close();
    done();
  };
  dialog.append(
    h(
      'form',
      { onsubmit: submit },
      h('h2', { id: 'auth-title' }, 'Sign in to latch'),
      h(
        'p',
        null,
        "This server requires authentication. What you enter stays in this tab's memory only and is forgotten when you close it.",
      ),
      keyWrap,
      h('p', { class: 'muted' }, 'or'),
      idWrap,
      secretWrap,
      h(
        'div',
        { class: 'row' },
        h('button', { type: 'submit' }, 'Sign in'),
        h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'),
      ),
    ),
  );
  return dialog;
}
