// A merge sort that yields between bounded steps, so sorting the differences of one large
// revision (a million events when a 10,000-member group is granted on 100 documents) never holds
// the event loop longer than one run of RUN elements. Stable; sorts in place for short arrays.
// Example: `yield* sortSliced(users, compareStrings)` returns the users in code-unit order.

/** Elements sorted or merged between two yields. */
const RUN = 4096;

export const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** `a` sorted in place: strings by the engine's own code-unit order (no call per comparison). */
const sortRun = <T>(a: T[], cmp: (x: T, y: T) => number): T[] =>
  (cmp as unknown) === compareStrings ? a.sort() : a.sort(cmp);

/** `a` sorted by `cmp` (the same array, or a new one for arrays longer than one run). */
export function* sortSliced<T>(a: T[], cmp: (x: T, y: T) => number): Generator<void, T[]> {
  const n = a.length;
  if (n <= RUN) return sortRun(a, cmp);
  for (let lo = 0; lo < n; lo += RUN) {
    const part = sortRun(a.slice(lo, lo + RUN), cmp);
    for (let i = 0; i < part.length; i++) a[lo + i] = part[i] as T;
    yield;
  }
  let src = a;
  let dst = new Array<T>(n);
  for (let width = RUN; width < n; width *= 2) {
    let budget = RUN;
    for (let lo = 0; lo < n; lo += 2 * width) {
      const mid = Math.min(lo + width, n);
      const hi = Math.min(lo + 2 * width, n);
      let i = lo;
      let j = mid;
      for (let k = lo; k < hi; k++) {
        if (i < mid && (j >= hi || cmp(src[i] as T, src[j] as T) <= 0)) dst[k] = src[i++] as T;
        else dst[k] = src[j++] as T;
        if (--budget === 0) {
          budget = RUN;
          yield;
        }
      }
    }
    [src, dst] = [dst, src];
  }
  return src;
}
