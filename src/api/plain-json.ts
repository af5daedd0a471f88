// Strings JSON writes as they are, one byte a character: the fast renderers of large replies
// (listing-lines.ts, delete-tuples.ts) copy such a string straight into their buffer and fall back
// to JSON.stringify for any other.

/** Whether `s` is written by JSON as it is and as one byte a character (printable ASCII, no `"` or `\`). */
export function plain(s: string): boolean {
  for (let c = 0; c < s.length; c++) {
    const u = s.charCodeAt(c);
    if (u < 0x20 || u > 0x7e || u === 0x22 || u === 0x5c) return false;
  }
  return true;
}

/** Copies the characters of a `plain` string `s` to `buf` at `at`; returns the end. */
export function putPlain(buf: Uint8Array, at: number, s: string): number {
  for (let c = 0; c < s.length; c++) buf[at++] = s.charCodeAt(c);
  return at;
}
