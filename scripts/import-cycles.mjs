// Import circles: reads every module under src/ with the TypeScript compiler's import scanner
// (type-only imports, re-exports and dynamic import() included), resolves the relative ones and
// fails, naming each, when some modules import each other in a loop (strongly connected
// components of the import graph, by Tarjan's algorithm). Run by `npm run lint`.
//
// Example: a.ts imports b.ts and b.ts `import type`s a.ts → "circle: src/a.ts -> src/b.ts -> src/a.ts".

import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? 'src');

function modules(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const p = join(dir, d.name);
    if (d.isDirectory()) return modules(p);
    return d.name.endsWith('.ts') && !d.name.endsWith('.d.ts') ? [p] : [];
  });
}

/** The module a relative specifier names: `./x.js` is ./x.ts, `./dir` is ./dir/index.ts. */
function target(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec);
  for (const p of [base.replace(/\.js$/, '.ts'), base, `${base}.ts`, join(base, 'index.ts')])
    if (p.endsWith('.ts') && existsSync(p)) return p;
  return undefined;
}

const files = modules(root);
const edges = new Map(
  files.map((f) => {
    const info = ts.preProcessFile(readFileSync(f, 'utf8'), true, true);
    const to = info.importedFiles.map((i) => target(f, i.fileName)).filter((t) => t !== undefined);
    return [f, [...new Set(to)]];
  }),
);

// Tarjan's strongly connected components, iterative over the graph's size.
let next = 0;
const index = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const circles = [];
function connect(v) {
  index.set(v, next);
  low.set(v, next++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v) ?? []) {
    if (!index.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), index.get(w)));
  }
  if (low.get(v) !== index.get(v)) return;
  const scc = [];
  let w;
  do {
    w = stack.pop();
    onStack.delete(w);
    scc.push(w);
  } while (w !== v);
  if (scc.length > 1 || (edges.get(v) ?? []).includes(v)) circles.push(scc);
}
for (const f of files) if (!index.has(f)) connect(f);

const name = (f) => relative(process.cwd(), f);
for (const scc of circles) {
  const inScc = new Set(scc);
  // One loop through the component, for the message: follow edges inside it back to the start.
  const path = [scc[0]];
  const seen = new Set(path);
  let at = scc[0];
  for (;;) {
    const step = (edges.get(at) ?? []).find((w) => inScc.has(w) && (w === scc[0] || !seen.has(w)));
    if (!step || step === scc[0]) break;
    path.push(step);
    seen.add(step);
    at = step;
  }
  console.error(`circle (${scc.length} modules): ${[...path, scc[0]].map(name).join(' -> ')}`);
  console.error(`  all: ${scc.map(name).sort().join(', ')}`);
}
if (circles.length > 0) {
  console.error(`${circles.length} import circle(s) in ${name(root)}/`);
  process.exit(1);
}
console.log(`no import circles among ${files.length} modules in ${name(root)}/`);
