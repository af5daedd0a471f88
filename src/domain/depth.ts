// The nesting bound of request values: free-form JSON (a request's `context`, a condition's
// context, a model's metadata) is measured here, iteratively, before anything walks it recursively
// (the context checks, CEL conversion, JSON.stringify, the canonical forms of stored contexts).

/**
 * Deepest nesting accepted in a request value, counted from the value itself: `{"a":[1]}` is 2
 * deep. OpenFGA (protojson) stops at 10,000; 64 is far above any real context or model and far
 * below what a recursive walk on a 1 MB stack survives (JSON arrays 100,000 deep took it down).
 */
export const MAX_VALUE_DEPTH = 64;

// The walk's explicit stack, reused across calls (cleared after each one so it holds no values).
const pending: object[] = [];
const levels: number[] = [];

/** True when `value` nests objects or arrays more than `max` levels deep. Never recurses. */
export function deeperThan(value: unknown, max: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  let n = 0;
  pending[n] = value;
  levels[n++] = 1;
  let deep = false;
  while (n > 0 && !deep) {
    const v = pending[--n] as Record<string, unknown>;
    const level = (levels[n] as number) + 1;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) {
        const c: unknown = v[i];
        if (typeof c !== 'object' || c === null) continue;
        if (level > max) deep = true;
        pending[n] = c;
        levels[n++] = level;
      }
    } else {
      for (const key in v) {
        const c: unknown = v[key];
        if (typeof c !== 'object' || c === null) continue;
        if (level > max) deep = true;
        pending[n] = c;
        levels[n++] = level;
      }
    }
  }
  pending.length = 0;
  return deep;
}
