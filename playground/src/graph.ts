// The model graph panel: types as boxes in columns (a type's feeders to its left where cycles
// allow), each relation a row with its rewrite, edges drawn in an SVG layer over them. Selecting
// a relation (click, or Enter on the focused row) highlights everything that feeds it and lists it
// in text for screen readers.

import { h } from './dom.js';
import { buildGraph, feeders, type Edge, type ModelGraph } from './graph-model.js';
import { latestModel, onModelShown, onStoreShown } from './state.js';

const SVG = 'http://www.w3.org/2000/svg';
const MAX_PER_COLUMN = 5;

function columns(graph: ModelGraph): string[][] {
  const byLayer = new Map<number, string[]>();
  for (const t of graph.types) {
    const l = graph.layer.get(t.name) ?? 0;
    byLayer.set(l, [...(byLayer.get(l) ?? []), t.name]);
  }
  const out: string[][] = [];
  for (const l of [...byLayer.keys()].sort((a, b) => a - b)) {
    const names = byLayer.get(l) as string[];
    for (let i = 0; i < names.length; i += MAX_PER_COLUMN) out.push(names.slice(i, i + MAX_PER_COLUMN));
  }
  return out;
}

export function graphPanel(): HTMLElement {
  const canvas = h('div', { class: 'graph', id: 'model-graph' });
  const svg = document.createElementNS(SVG, 'svg');
  svg.setAttribute('class', 'graph-edges');
  svg.setAttribute('aria-hidden', 'true');
  const info = h(
    'div',
    { class: 'graph-info', 'aria-live': 'polite', id: 'graph-info' },
    'Select a relation to see what feeds it.',
  );
  const nodes = new Map<string, HTMLElement>();
  const paths = new Map<Edge, SVGPathElement>();
  let graph: ModelGraph | undefined;

  const draw = (): void => {
    if (!graph) return;
    const box = canvas.getBoundingClientRect();
    svg.setAttribute('width', String(canvas.scrollWidth));
    svg.setAttribute('height', String(canvas.scrollHeight));
    svg.replaceChildren();
    paths.clear();
    for (const e of graph.edges) {
      const a = nodes.get(e.from)?.getBoundingClientRect();
      const b = nodes.get(e.to)?.getBoundingClientRect();
      if (!a || !b) continue;
      const x1 = a.right - box.left + canvas.scrollLeft;
      const y1 = a.top + a.height / 2 - box.top + canvas.scrollTop;
      const y2 = b.top + b.height / 2 - box.top + canvas.scrollTop;
      const p = document.createElementNS(SVG, 'path');
      let d: string;
      if (b.left > a.right + 10) {
        // Left to right: into the target's left side.
        const x2 = b.left - box.left + canvas.scrollLeft;
        const bend = Math.max(30, (x2 - x1) / 2);
        d = `M${x1},${y1} C${x1 + bend},${y1} ${x2 - bend},${y2} ${x2},${y2}`;
      } else {
        // Same column, or backwards: an arc out of the source's right side into the target's right side.
        const x2 = b.right - box.left + canvas.scrollLeft;
        const out = 18 + Math.min(50, Math.abs(y2 - y1) / 4) + Math.max(0, x1 - x2) / 2;
        d =
          y1 === y2 && x1 === x2
            ? `M${x1},${y1 - 4} c22,-14 22,22 0,8`
            : `M${x1},${y1} C${Math.max(x1, x2) + out},${y1} ${Math.max(x1, x2) + out},${y2} ${x2},${y2}`;
      }
      p.setAttribute('d', d);
      // Edges out of a type itself (`user`) are the most numerous and the least telling: drawn faint.
      p.setAttribute(
        'class',
        `edge edge-${e.kind} op-${e.op.replace(' ', '-')}${e.from.includes('#') ? '' : ' from-type'}`,
      );
      svg.append(p);
      paths.set(e, p);
    }
  };

  const select = (node: string): void => {
    if (!graph) return;
    const f = feeders(graph, node);
    canvas.classList.add('focused');
    for (const [id, el] of nodes) el.classList.toggle('hl', f.nodes.has(id));
    for (const [e, p] of paths) p.classList.toggle('hl', f.edges.has(e));
    nodes.get(node)?.classList.add('selected');
    const direct = graph.edges
      .filter((e) => e.to === node)
      .map((e) => `${e.from} (${e.kind === 'ttu' ? `from ${e.via}` : e.kind}${e.op === 'or' ? '' : `, ${e.op}`})`);
    info.replaceChildren(
      h('strong', null, node),
      ` is fed directly by ${direct.length ? direct.join('; ') : 'nothing'}; ${f.nodes.size - 1} nodes feed it in all.`,
    );
  };

  const render = async (): Promise<void> => {
    nodes.clear();
    canvas.replaceChildren(svg);
    graph = undefined;
    let model;
    try {
      model = await latestModel();
    } catch {
      model = undefined;
    }
    if (!model) {
      canvas.append(h('p', { class: 'muted' }, 'This store has no model yet.'));
      return;
    }
    graph = buildGraph(model);
    const g = graph;
    for (const col of columns(g)) {
      const column = h('div', { class: 'graph-col' });
      for (const name of col) {
        const t = g.types.find((x) => x.name === name);
        if (!t) continue;
        const head = h('div', { class: 'graph-type-name', 'data-node': name }, name);
        nodes.set(name, head);
        const rows = t.relations.map((r) => {
          const id = `${name}#${r.name}`;
          const row = h(
            'button',
            { type: 'button', class: 'graph-rel', 'data-node': id, onclick: () => select(id) },
            h('span', { class: 'rel-name' }, r.name),
            h('span', { class: 'rel-rewrite' }, r.rewrite),
          );
          nodes.set(id, row);
          return row;
        });
        column.append(h('div', { class: 'graph-type' }, head, ...rows));
      }
      canvas.append(column);
    }
    requestAnimationFrame(draw);
  };
  onStoreShown('graph', () => void render());
  onModelShown('graph', () => void render());
  window.addEventListener('panel-shown', (e) => {
    if ((e as CustomEvent<string>).detail === 'graph') requestAnimationFrame(draw);
  });
  const observer = new ResizeObserver(() => draw());
  observer.observe(canvas);

  return h(
    'section',
    { class: 'panel' },
    h(
      'div',
      { class: 'toolbar' },
      h('h2', null, 'Model graph'),
      h(
        'span',
        { class: 'legend' },
        h('i', { class: 'k-direct' }),
        'direct ',
        h('i', { class: 'k-computed' }),
        'computed ',
        h('i', { class: 'k-ttu' }),
        'tuple-to-userset ',
        h('i', { class: 'k-and' }),
        'intersection ',
        h('i', { class: 'k-not' }),
        'exclusion',
      ),
    ),
    info,
    canvas,
  );
}
