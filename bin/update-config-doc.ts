// Rewrites the settings table of docs/configuration.md from the settings table in
// src/cli/settings.ts (test/ops/settings.test.ts fails while the two differ):
//   npx tsx bin/update-config-doc.ts
import { readFileSync, writeFileSync } from 'node:fs';
import { settingsMarkdown } from '../src/cli/settings-doc.js';

const file = new URL('../docs/configuration.md', import.meta.url);
const doc = readFileSync(file, 'utf8');
const begin = '<!-- settings:begin -->\n';
const end = '<!-- settings:end -->';
const a = doc.indexOf(begin);
const b = doc.indexOf(end);
if (a === -1 || b < a) throw new Error('docs/configuration.md has no settings markers');
writeFileSync(file, doc.slice(0, a + begin.length) + settingsMarkdown() + doc.slice(b));
