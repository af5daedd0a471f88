// The text of the impact stream's lines (docs/changing-models.md): structural changes, context-
// dependent relations, rejected tuples and changed assertions, one line each. Shared by
// `latch model impact` (src/cli/impact-report.ts) and the playground's Impact view; pure, no imports.

export type Line = Record<string, unknown>;

export const text = (v: unknown): string => (typeof v === 'string' ? v : JSON.stringify(v));

function tupleText(t: unknown): string {
  if (!t || typeof t !== 'object') return text(t);
  const k = t as { object?: string; relation?: string; user?: string; condition?: { name?: string } };
  const cond = k.condition?.name ? ` with ${k.condition.name}` : '';
  return `${k.object}#${k.relation}@${k.user}${cond}`;
}

function outcome(o: unknown): string {
  if (o && typeof o === 'object' && 'allowed' in o) return o.allowed ? 'allowed' : 'denied';
  if (o && typeof o === 'object' && 'error' in o) {
    const e = o.error as { code?: string };
    return `error ${e.code ?? ''}`;
  }
  return text(o);
}

/**
 * One line of the impact stream other than a pair, progress or the summary, as text; undefined for
 * those. Example: `~ doc#viewer: [user, group#member] or owner → [user, user:*] or owner`.
 */
export function impactLineText(l: Line): string | undefined {
  const name = `${text(l.object_type)}#${text(l.relation)}`;
  switch (l.kind) {
    case 'type_added':
      return `+ type ${text(l.type)}`;
    case 'type_removed':
      return `- type ${text(l.type)}`;
    case 'relation_added':
      return `+ ${name}: ${text(l.after)}`;
    case 'relation_removed':
      return `- ${name}: ${text(l.before)}`;
    case 'relation_changed':
      return `~ ${name}: ${text(l.before)} → ${text(l.after)}`;
    case 'condition_added':
    case 'condition_removed':
    case 'condition_changed':
      return `${l.kind === 'condition_added' ? '+' : l.kind === 'condition_removed' ? '-' : '~'} condition ${text(l.condition)}`;
    case 'context_dependent':
      return `! ${name} depends on the request context (conditions in: ${(l.models as string[]).join(', ')})`;
    case 'rejected_tuples': {
      const sample = (l.sample as unknown[]).slice(0, 3).map(tupleText).join(', ');
      return `rejected tuples (${text(l.reason)}): ${text(l.count)}${sample ? `, e.g. ${sample}` : ''}`;
    }
    case 'assertion': {
      const verdict = l.passes ? 'passes' : 'FAILS';
      return `assertion ${tupleText(l.tuple_key)} expects ${text(l.expectation)}: ${outcome(l.base)} → ${outcome(l.candidate)} (${verdict})`;
    }
    default:
      return undefined;
  }
}
