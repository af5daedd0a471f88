// What `latch model impact` prints: the structural changes, context-dependent relations, rejected
// tuples and changed assertions as they arrive, then a table of the summary's counts per relation.
// Example:
//   ~ doc#viewer: [user, group#member] or owner → [user, user:*] or owner
//   rejected tuples (restriction_removed): 1, e.g. doc:1#viewer@group:eng#member
//   relation     objects  gained  lost  undetermined
//   doc#viewer   2        0       2     0

import type { CliIo } from './common.js';
import { impactLineText, text, type Line } from './impact-text.js';

interface RelationRow {
  object_type: string;
  relation: string;
  evaluated: boolean;
  objects: number;
  gained: number;
  lost: number;
  undetermined: number;
  status: string;
}

function table(rows: readonly RelationRow[]): string {
  const cells = rows.map((r) => [
    `${r.object_type}#${r.relation}`,
    r.status,
    r.evaluated ? String(r.objects) : '-',
    r.evaluated ? String(r.gained) : '-',
    r.evaluated ? String(r.lost) : '-',
    r.evaluated ? String(r.undetermined) : '-',
  ]);
  const head = ['relation', 'definition', 'objects', 'gained', 'lost', 'undetermined'];
  const widths = head.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const row = (c: readonly string[]): string =>
    c
      .map((v, i) => v.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  return [row(head), ...cells.map(row)].join('\n');
}

interface ImpactReport {
  line(l: Line): void;
  /** Prints the summary; true when anything changes (access, tuples read, assertions). */
  finish(output: string | undefined, pairs: number | undefined): boolean;
}

export function impactReport(io: CliIo, file: string): ImpactReport {
  let summary: Line | undefined;
  return {
    line(l) {
      if (l.kind === 'summary') summary = l;
      else {
        const s = impactLineText(l);
        if (s !== undefined) io.out(`${s}\n`);
      }
    },
    finish(output, pairs) {
      if (!summary) throw new Error('the impact stream ended without its summary');
      const s = summary;
      io.out(
        `\nimpact of ${file} against model ${text(s.base_authorization_model_id)} at revision ${text(s.revision)}\n`,
      );
      io.out(`${table(s.relations as RelationRow[])}\n`);
      io.out(
        `total: ${text(s.gained)} gained, ${text(s.lost)} lost, ${text(s.undetermined)} undetermined; ` +
          `${text(s.rejected_tuples)} tuples read differently; ${text(s.assertions_changed)} of ${text(s.assertions_run)} assertions change\n`,
      );
      if (output !== undefined) io.out(`${pairs ?? 0} lines written to ${output}\n`);
      const n = (k: string): number => Number(s[k] ?? 0);
      return n('gained') + n('lost') + n('undetermined') + n('rejected_tuples') + n('assertions_changed') > 0;
    },
  };
}
