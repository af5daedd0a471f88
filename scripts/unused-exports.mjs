// Exports that no other file imports: every exported declaration of src/**/*.ts that no module of
// src/, test/, bench/, playground/src/ or scripts/ imports by name, re-exports or loads whole
// (`import * as`, `export *`, a literal `import()`), leaving out the package's public entries
// (package.json "exports": src/latch.ts, src/client/index.ts) and all they export. Each such
// `export` only widens a module's surface: drop the keyword, and `tsc --noUnusedLocals` then shows
// what nothing uses at all. Not run by lint (a report to act on, not a rule): `node
// scripts/unused-exports.mjs` prints `file:line<TAB>name` lines and a count (about a minute).

import { existsSync, readdirSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';

const root = resolve(process.argv[2] ?? '.');
const config = ts.getParsedCommandLineOfConfigFile(
  join(root, 'tsconfig.json'),
  {},
  {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: () => {},
  },
);
if (!config) throw new Error(`cannot read ${join(root, 'tsconfig.json')}`);

/** .ts files below `dir` (the folders tsconfig.json does not include). */
function tsFiles(dir) {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return tsFiles(p);
    return /\.tsx?$/.test(e.name) && !e.name.endsWith('.d.ts') ? [p] : [];
  });
}

const program = ts.createProgram(
  [...config.fileNames, ...tsFiles(join(root, 'playground/src')), ...tsFiles(join(root, 'scripts'))],
  { ...config.options, noEmit: true },
);
const checker = program.getTypeChecker();
const src = join(root, 'src') + sep;
const entries = new Set([join(root, 'src/latch.ts'), join(root, 'src/client/index.ts')]);

/** The declared symbol behind an import or re-export. */
const target = (s) => (s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s);
const used = new Set();
const wholeFiles = new Set();

function moduleFile(specifier) {
  return checker.getSymbolAtLocation(specifier)?.declarations?.[0]?.getSourceFile().fileName;
}

function visit(node) {
  if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
    const file = moduleFile(node.moduleSpecifier);
    const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
    const whole = ts.isImportDeclaration(node)
      ? bindings !== undefined && ts.isNamespaceImport(bindings)
      : node.exportClause === undefined;
    if (whole && file) wholeFiles.add(file);
    if (bindings && (ts.isNamedImports(bindings) || ts.isNamedExports(bindings)))
      for (const el of bindings.elements) {
        const s = checker.getSymbolAtLocation(el.name);
        if (s) used.add(target(s));
      }
    const name = ts.isImportDeclaration(node) ? node.importClause?.name : undefined;
    const s = name && checker.getSymbolAtLocation(name);
    if (s) used.add(target(s));
  }
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
    const arg = node.arguments[0];
    const file = arg && ts.isStringLiteral(arg) ? moduleFile(arg) : undefined;
    if (file) wholeFiles.add(file);
  }
  if (ts.isImportTypeNode(node) && node.qualifier) {
    const s = checker.getSymbolAtLocation(node.qualifier);
    if (s) used.add(target(s));
  }
  ts.forEachChild(node, visit);
}

for (const sf of program.getSourceFiles()) if (!sf.fileName.includes('node_modules')) visit(sf);
for (const file of entries) {
  const sf = program.getSourceFile(file);
  const module = sf && checker.getSymbolAtLocation(sf);
  if (module) for (const s of checker.getExportsOfModule(module)) used.add(target(s));
}

let count = 0;
for (const sf of program.getSourceFiles()) {
  if (!sf.fileName.startsWith(src) || entries.has(sf.fileName) || wholeFiles.has(sf.fileName)) continue;
  const module = checker.getSymbolAtLocation(sf);
  if (!module) continue;
  for (const s of checker.getExportsOfModule(module)) {
    const declared = target(s);
    const at = declared.declarations?.[0];
    // A default export is named by its file (a worker's entry), and a re-export is its origin's.
    if (s.name === 'default' || used.has(declared) || !at || at.getSourceFile() !== sf) continue;
    const { line } = sf.getLineAndCharacterOfPosition(at.getStart());
    process.stdout.write(`${relative(root, sf.fileName)}:${line + 1}\t${s.name}\n`);
    count++;
  }
}
process.stderr.write(`${count} exports that no other file imports\n`);
