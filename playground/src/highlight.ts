// DSL syntax highlighting for the editor's backdrop: each line tokenized by a few regular
// expressions into spans (keywords, type and relation names, comments, operators). Plain text
// in, DOM out: the user's text is never parsed as HTML.

const TOKEN = /((?<=^|\s)#.*$)|\b(model|schema|type|relations|define|condition|module|extend|and|or|but not|from|with)\b|(\[|\]|\(|\)|\{|\}|,|:|\*)|("[^"]*"|'[^']*'|\b\d+(?:\.\d+)?\b)|([A-Za-z_][\w-]*)/g;

function span(cls: string, text: string): HTMLSpanElement {
  const s = document.createElement('span');
  s.className = cls;
  s.textContent = text;
  return s;
}

/** One line as a fragment of spans; `prev` is the keyword before the current word, if any. */
export function highlightLine(line: string): DocumentFragment {
  const out = document.createDocumentFragment();
  let at = 0;
  let prev = '';
  for (const m of line.matchAll(TOKEN)) {
    const i = m.index ?? 0;
    if (i > at) out.append(line.slice(at, i));
    const [text, comment, keyword, punct, literal, word] = m;
    if (comment) out.append(span('tok-comment', comment));
    else if (keyword) out.append(span('tok-keyword', keyword));
    else if (punct) out.append(span('tok-punct', punct));
    else if (literal) out.append(span('tok-literal', literal));
    else if (word) out.append(span(prev === 'type' ? 'tok-type' : prev === 'define' ? 'tok-relation' : prev === 'condition' ? 'tok-condition' : 'tok-name', word));
    prev = keyword ?? (word ? '' : prev);
    at = i + text.length;
  }
  if (at < line.length) out.append(line.slice(at));
  return out;
}

/** Replaces `pre`'s content with the highlighted text; lines in `bad` get an error class. */
export function highlightInto(pre: HTMLElement, text: string, bad: ReadonlySet<number>): void {
  const frag = document.createDocumentFragment();
  text.split('\n').forEach((line, i) => {
    const el = document.createElement('div');
    el.className = bad.has(i + 1) ? 'line line-error' : 'line';
    el.append(highlightLine(line), '\n');
    frag.append(el);
  });
  pre.replaceChildren(frag);
}
