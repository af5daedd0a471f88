// `npm run conformance [-- --json] [--target NAME] [--file SUBSTRING]`: runs the registered
// targets over ../shared/conformance (or $LATCH_CONFORMANCE_DIR) and prints per-file results.
// Exit code 1 when a case fails; when the data folder is absent, 0 with a plain notice, or 1
// under CI=true.

import { existsSync } from 'node:fs';
import { conformanceDir } from './data.js';
import { targets } from './targets.js';
import type { FileResult } from './types.js';

interface Args {
  json: boolean;
  target?: string | undefined;
  file?: string | undefined;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { json: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--json') args.json = true;
    else if (a === '--target') args.target = argv[++i];
    else if (a === '--file') args.file = argv[++i];
    else throw new Error(`unknown argument: ${a}`);
  }
  return args;
}

function printHuman(results: FileResult[]): void {
  for (const r of results) {
    console.log(`${r.failed === 0 ? 'ok  ' : 'FAIL'} ${r.file}: ${r.passed} passed, ${r.failed} failed`);
    for (const f of r.failures) console.log(`       - ${f.name}: ${f.message.split('\n').join('\n         ')}`);
  }
  const passed = results.reduce((n, r) => n + r.passed, 0);
  const failed = results.reduce((n, r) => n + r.failed, 0);
  console.log(`total: ${passed} passed, ${failed} failed in ${results.length} files`);
}

async function main(): Promise<number> {
  const args = parseArgs(process.argv.slice(2));
  const dir = conformanceDir();
  if (!existsSync(dir)) {
    const ci = process.env.CI === 'true';
    const msg = `conformance data not found at ${dir}: ${ci ? 'required under CI=true' : 'skipped'}`;
    if (args.json) console.log(JSON.stringify({ files: [], skipped: msg }));
    else console.log(msg);
    return ci ? 1 : 0;
  }
  const selected = targets.filter((t) => args.target === undefined || t.name === args.target);
  if (selected.length === 0)
    throw new Error(`no target named ${args.target}; known: ${targets.map((t) => t.name).join(', ')}`);
  const results: FileResult[] = [];
  for (const t of selected) results.push(...(await t.run(dir, { file: args.file })));
  if (args.json)
    console.log(JSON.stringify({ files: results.map(({ file, passed, failed }) => ({ file, passed, failed })) }));
  else printHuman(results);
  return results.some((r) => r.failed > 0) ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(2);
  },
);
