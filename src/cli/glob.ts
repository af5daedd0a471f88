// Minimal file globbing for `latch test` (Node 20 has no fs.glob): `*` and `?` within one path
// segment, `**` across segments, `{a,b}` alternatives. A pattern without wildcards is returned
// as is, so a missing file is reported by the reader, not silently skipped.

import { readdir } from 'node:fs/promises';
import { join, resolve, sep } from 'node:path';

export async function expandGlobs(patterns: readonly string[], cwd = process.cwd()): Promise<string[]> {
  const out: string[] = [];
  for (const p of patterns) {
    if (!/[*?{]/.test(p)) {
      out.push(p);
      continue;
    }
    const parts = p.split(/[\\/]/);
    const firstGlob = parts.findIndex((s) => /[*?{]/.test(s));
    const base = parts.slice(0, firstGlob).join('/') || (p.startsWith('/') ? '/' : '.');
    const re = globToRegExp(parts.slice(firstGlob).join('/'));
    const matches = (await walk(resolve(cwd, base))).filter((rel) => re.test(rel.split(sep).join('/')));
    out.push(...matches.sort().map((rel) => (base === '.' ? rel : join(base, rel))));
  }
  return [...new Set(out)];
}

export function globToRegExp(glob: string): RegExp {
  let re = '';
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i] as string;
    if (c === '*' && glob[i + 1] === '*') {
      i++;
      if (glob[i + 1] === '/') {
        i++;
        re += '(?:.*/)?';
      } else re += '.*';
    } else if (c === '*') re += '[^/]*';
    else if (c === '?') re += '[^/]';
    else if (c === '{') {
      const end = glob.indexOf('}', i);
      if (end === -1) re += '\\{';
      else {
        re += `(?:${glob
          .slice(i + 1, end)
          .split(',')
          .map(escape)
          .join('|')})`;
        i = end;
      }
    } else re += escape(c);
  }
  return new RegExp(`^${re}$`);
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

async function walk(dir: string, prefix = ''): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const e of entries) {
    if (e.name === 'node_modules' || e.name.startsWith('.')) continue;
    const rel = prefix ? join(prefix, e.name) : e.name;
    if (e.isDirectory()) out.push(...(await walk(join(dir, e.name), rel)));
    else out.push(rel);
  }
  return out;
}
