// A small DOM builder: h('button', {onclick}, 'Save') and a few helpers. No framework: the
// playground is a dozen panels of forms and tables, and plain DOM keeps the bundle tiny.

type Child = Node | string | number | false | null | undefined | readonly Child[];
type Attrs = Record<string, unknown>;

function append(el: Node, c: Child): void {
  if (c === null || c === undefined || c === false) return;
  if (Array.isArray(c)) for (const x of c as readonly Child[]) append(el, x);
  else el.appendChild(c instanceof Node ? c : document.createTextNode(String(c)));
}

/** An element: `on*` attributes are listeners, `class`/`for` map to properties, booleans toggle. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [k, v] of Object.entries(attrs)) {
      if (v === undefined || v === null || v === false) continue;
      if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v as EventListener);
      else if (k === 'value') (el as HTMLInputElement).value = String(v);
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  for (const c of children) append(el, c);
  return el;
}

export function clear(el: Element, ...children: Child[]): void {
  el.replaceChildren();
  for (const c of children) append(el, c);
}

let ids = 0;
/** A unique id for label/field pairs. */
export function uid(prefix: string): string {
  return `${prefix}-${++ids}`;
}

/** A labelled input; returns [wrapper, input]. */
export function field(label: string, attrs: Attrs = {}): [HTMLElement, HTMLInputElement] {
  const id = uid('f');
  const input = h('input', { id, type: 'text', autocomplete: 'off', spellcheck: 'false', ...attrs });
  return [h('label', { class: 'field', for: id }, h('span', null, label), input), input];
}

export function area(label: string, attrs: Attrs = {}): [HTMLElement, HTMLTextAreaElement] {
  const id = uid('f');
  const input = h('textarea', { id, spellcheck: 'false', rows: 3, ...attrs });
  return [h('label', { class: 'field', for: id }, h('span', null, label), input), input];
}

/** A region that announces its text politely to screen readers (results, errors). */
export function live(cls: string): HTMLElement {
  return h('div', { class: cls, 'aria-live': 'polite' });
}
