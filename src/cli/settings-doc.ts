// Renders the settings table (./settings.ts) for people: `latch serve --help` and the table of
// docs/configuration.md (a test checks the file carries exactly this rendering).

import { envName, SETTINGS, type Setting, type SettingValue } from './settings.js';

function shown(v: SettingValue): string {
  return Array.isArray(v) ? v.join(',') : String(v);
}

function defaultText(s: Setting): string {
  if (s.defaultNote) return s.defaultNote;
  return s.default === undefined ? 'unset' : shown(s.default);
}

function placeholder(s: Setting): string {
  if (s.kind === 'boolean') return '[=true|false]';
  if (s.kind === 'choice') return ` <${s.choices?.join('|')}>`;
  return ` ${s.value ?? '<value>'}`;
}

const GROUPS: readonly Setting['group'][] = [
  'Server',
  'PostgreSQL',
  'Placement',
  'Limits',
  'Engine',
  'Logging',
  'Authentication',
];

/** `latch serve --help`: every setting with its flag, environment variable and default. */
export function serveHelp(): string {
  const lines = [
    'Usage: latch serve [options]',
    '',
    'Run the HTTP API and the msgpack channel. Every setting comes from its flag, its environment',
    'variable or the config file (--config latch.yaml|json, keys = the names below), in that order',
    'of precedence, else its default. SIGTERM/SIGINT: stop accepting, finish in-flight requests',
    'within --shutdown-timeout, close the store, exit 0.',
  ];
  for (const g of GROUPS) {
    lines.push('', `${g}:`);
    for (const s of SETTINGS.filter((x) => x.group === g)) {
      lines.push(`  --${s.name}${placeholder(s)}`);
      lines.push(`      ${s.help}`);
      lines.push(`      env ${envName(s)}; default ${defaultText(s)}`);
    }
  }
  lines.push('', '  -h, --help', '      Show this help', '');
  return lines.join('\n');
}

/** The Markdown table of docs/configuration.md, one row per setting. */
export function settingsMarkdown(): string {
  const rows = ['| Setting (flag / file key) | Environment | Default | Values | Meaning |', '|---|---|---|---|---|'];
  for (const g of GROUPS) {
    for (const s of SETTINGS.filter((x) => x.group === g)) {
      const values =
        s.kind === 'choice'
          ? (s.choices ?? []).join(', ')
          : s.kind === 'integer'
            ? `${s.min ?? 0} … ${s.max ?? '∞'}${s.value && s.value !== '<n>' ? ` ${s.value.replace(/[<>]/g, '')}` : ''}`
            : s.kind === 'boolean'
              ? 'true, false'
              : s.kind === 'list'
                ? 'comma-separated list'
                : 'text';
      rows.push(
        `| \`--${s.name}\` | \`${envName(s)}\` | ${defaultText(s).replace(/\|/g, '\\|').replace(/</g, '&lt;')} | ${values} | ${g}: ${s.help.replace(/\|/g, '\\|')} |`,
      );
    }
  }
  return rows.join('\n') + '\n';
}
