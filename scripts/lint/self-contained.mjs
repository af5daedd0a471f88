// Lint check: the project is self-contained. Nothing in src/ or docs/ points outside the
// repository (`../shared`), and every citation of the API surface, the semantics or the decisions
// names the project's own copies: docs/reference/http-api.md, docs/reference/semantics.md and
// docs/reference/decisions.md. Inside docs/reference/ the three cite each other by file name.
import { readFileSync } from 'node:fs';
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const FOLDERS = ['src', 'docs'];
const TEXT = /\.(ts|js|mjs|md|json|html|css|yaml|yml|sql)$/;

/** A bare or wrongly placed reference: the file name not preceded by `docs/reference/` (or `reference/` in docs/). */
const CITED = /(?<![\w/.-])((?:[\w.-]+\/)*)(semantics\.md|http-api\.md|decisions\.md)/gi;
const RULES = [
  { re: /\.\.\/shared/g, why: 'points outside the repository' },
  { re: /\bDECISIONS\b/g, why: 'cites DECISIONS; the decisions are docs/reference/decisions.md' },
];

function* files(dir) {
  for (const name of readdirSync(dir)) {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) yield* files(full);
    else if (TEXT.test(name)) yield full;
  }
}

const problems = [];
for (const folder of FOLDERS) {
  for (const file of files(path.join(ROOT, folder))) {
    const rel = path.relative(ROOT, file).split(path.sep).join('/');
    const inReference = rel.startsWith('docs/reference/');
    const text = readFileSync(file, 'utf8');
    const found = [];
    text.split('\n').forEach((line, i) => {
      for (const { re, why } of RULES) if (line.match(re)) found.push(`${rel}:${i + 1}: ${why}`);
      for (const m of line.matchAll(CITED)) {
        const prefix = m[1];
        const ok =
          prefix === 'docs/reference/' ||
          (rel.startsWith('docs/') && prefix === 'reference/') ||
          (inReference && prefix === '');
        if (!ok) found.push(`${rel}:${i + 1}: cites ${m[0]}; cite docs/reference/${m[2].toLowerCase()}`);
      }
    });
    problems.push(...found);
  }
}
for (const p of problems) console.error(p);
if (problems.length > 0) {
  console.error(`self-contained: ${problems.length} references outside docs/reference/ or the repository`);
  process.exit(1);
}
console.log('self-contained: src/ and docs/ cite only docs/reference/');
