// DSL syntax highlighting for the editor's backdrop: each line tokenized by a few regular
// expressions into spans (keywords, type and relation names, comments, operators). Plain text
// in, DOM out: the user's text is never parsed as HTML.

const TOKEN =
  /((?<=^|\s)#.*$)|\b(model|schema|type|relations|define|condition|module|extend|and|or|but not|from|with)\b|(\[|\]|\(|\)|\{|\}|,|:|\*)|("[^"]*"|'[^']*'|\b\d+(?:\.\d+)?\b)|([A-Za-z_][\w-]*)/g;

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
    else if (word)
      out.append(
        span(
          prev === 'type'
            ? 'tok-type'
            : prev === 'define'
              ? 'tok-relation'
              : prev === 'condition'
                ? 'tok-condition'
                : 'tok-name',
          word,
        ),
      );
    prev = keyword ?? (word ? '' : prev);
    at = i + text.length;
  }
  if (at < line.length) out.append(line.slice(at));
  return out;
}

/** A diagnostic's place: 1-based line, and columns [start, end) (1-based) to underline. */
export interface Mark {
  readonly start: number;
  readonly end: number;
}

/** `line` with the columns of `mark` wrapped in an underlined span (the word at `start` at least). */
function markedLine(line: string, mark: Mark): DocumentFragment {
  const from = Math.min(line.length, Math.max(0, mark.start - 1));
  let to = Math.min(line.length, mark.end - 1);
  if (to <= from) to = from + (/^[\w-]*/.exec(line.slice(from))?.[0].length || 1);
  const out = document.createDocumentFragment();
  const bad = span('tok-error', '');
  bad.append(highlightLine(line.slice(from, to)));
  out.append(highlightLine(line.slice(0, from)), bad, highlightLine(line.slice(to)));
  return out;
}

/** Replaces `pre`'s content with the highlighted text; lines in `bad` get an error class and mark. */
export function highlightInto(pre: HTMLElement, text: string, bad: ReadonlyMap<number, Mark>): void {
  const frag = document.createDocumentFragment();
  text.split('\n').forEach((line, i) => {
    const el = document.createElement('div');
    const mark = bad.get(i + 1);
    el.className = mark ? 'line line-error' : 'line';
    el.append(mark ? markedLine(line, mark) : highlightLine(line), '\n');
    frag.append(el);
  });
  pre.replaceChildren(frag);
}
