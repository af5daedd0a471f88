// Every `latch …` command line printed in README.md and docs/*.md parses with the command it
// names: the flags exist, values have their types and choices, positionals are complete (so a
// doc cannot drift from the command line, e.g. `--postgres-migrate false`). Commands are taken
// from shell code blocks (lines starting with `latch`, `npx latch` or `$ latch`, and `$(latch …)`
// substitutions); `text` blocks hold synopses and output and are not read.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { parseArgs, UsageError } from '../../src/cli/args.js';
import { findCommand } from '../../src/cli/commands.js';
import { resolveSettings, serveConfig } from '../../src/cli/settings-load.js';

const root = join(import.meta.dirname, '../..');
const files = [
  'README.md',
  ...readdirSync(join(root, 'docs'), { recursive: true, encoding: 'utf8' })
    .filter((f) => f.endsWith('.md'))
    .map((f) => join('docs', f)),
];

/** Shell words of one command (quotes, `\`-continuations joined earlier), up to a pipe, redirect, `;`, `&&`, `)` or comment. */
export function words(line: string): string[] {
  const out: string[] = [];
  let word: string | undefined;
  for (let i = 0; i < line.length; i++) {
    const c = line[i] as string;
    if (c === "'" || c === '"') {
      const end = line.indexOf(c, i + 1);
      word = (word ?? '') + line.slice(i + 1, end === -1 ? line.length : end);
      i = end === -1 ? line.length : end;
    } else if (/\s/.test(c)) {
      if (word !== undefined) out.push(word);
      word = undefined;
    } else if (word === undefined && (c === '#' || c === '|' || c === '>' || c === ';' || c === ')' || c === '&')) {
      break;
    } else word = (word ?? '') + c;
  }
  if (word !== undefined) out.push(word);
  // A bare `…` after `--flag` is that flag's elided value; elsewhere it elides arguments.
  return out.filter((w, i) => w !== '…' || /^--[^=]+$/.test(out[i - 1] ?? ''));
}

interface Found {
  readonly where: string;
  readonly argv: string[];
  readonly env: Record<string, string>;
  /** A `console` example whose next line is latch's usage error: it must fail to parse. */
  readonly refused: boolean;
}

function commandsIn(file: string): Found[] {
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  const found: Found[] = [];
  let fence: string | undefined;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i] as string;
    const open = /^\s*```(\S*)/.exec(line);
    if (open) {
      fence = fence === undefined ? open[1] || 'sh' : undefined;
      continue;
    }
    if (fence === undefined || fence === 'text' || fence === 'yaml' || fence === 'json') continue;
    let text = line;
    while (text.endsWith('\\') && i + 1 < lines.length) text = text.slice(0, -1) + ' ' + lines[++i];
    const head = /^\s*(?:\$ )?((?:[A-Z_]+=\S+ )*)(?:npx )?latch (.*)$/.exec(text);
    const starts = [...text.matchAll(/\$\((?:npx )?latch ([^)]*)\)/g)].map((m) => ({ env: '', rest: m[1] as string }));
    if (head && (fence !== 'console' || /^\s*\$ /.test(text)))
      starts.push({ env: head[1] as string, rest: head[2] as string });
    const refused = fence === 'console' && /^latch [a-z -]+: /.test(lines[i + 1] ?? '');
    for (const { env, rest } of starts) {
      const vars = Object.fromEntries(
        env
          .trim()
          .split(/\s+/)
          .filter(Boolean)
          .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
      );
      found.push({ where: `${file}:${i + 1}`, argv: words(rest), env: vars, refused });
    }
  }
  return found;
}

const all = files.flatMap(commandsIn);

test('the docs print command lines (the extraction finds them)', () => {
  expect(all.length).toBeGreaterThan(50);
});

describe.each(all.map((c) => [`${c.where}: latch ${c.argv.join(' ')}`, c] as const))('%s', (_, c) => {
  test(c.refused ? 'is refused as the docs show' : 'parses', () => {
    const [name, ...rest] = c.argv;
    if (name === '--version' || name === '--help') return expect(rest).toEqual([]);
    const parse = (): unknown => {
      // serve: every flag and value; the whole configuration only for a refusal the docs show.
      if (name === 'serve') return c.refused ? serveConfig(resolveSettings(rest, c.env)) : resolveSettings(rest, c.env);
      const hit = findCommand(c.argv);
      if (!hit) throw new Error(`no command 'latch ${c.argv.slice(0, 2).join(' ')}'`);
      return parseArgs(hit.command.spec, hit.rest, c.env);
    };
    if (c.refused) expect(parse).toThrow(UsageError);
    else expect(parse).not.toThrow();
  });
});
