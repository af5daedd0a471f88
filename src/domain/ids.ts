// ULIDs for store and model ids: 48-bit millisecond time + 80 random bits, Crockford base32.
// Ids made in one process are strictly increasing, so "the newest model" is the greatest id.

import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
const ULID_PATTERN = /^[ABCDEFGHJKMNPQRSTVWXYZ0-9]{26}$/;

let lastTime = -1;
let lastRandom: number[] = [];

/** The ten-character time prefix of a ULID made at `ms`: the lower bound of that millisecond's ids. */
export function encodeTime(ms: number): string {
  let out = '';
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32] + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** Increment a base-32 digit array; monotonic within one millisecond. */
function increment(digits: number[]): number[] {
  const next = digits.slice();
  for (let i = next.length - 1; i >= 0; i--) {
    const d = next[i] ?? 0;
    if (d < 31) {
      next[i] = d + 1;
      return next;
    }
    next[i] = 0;
  }
  return next;
}

/** A new ULID, greater than every ULID this process made before. */
export function ulid(now: number = Date.now()): string {
  let random: number[];
  if (now <= lastTime) {
    now = lastTime;
    random = increment(lastRandom);
  } else {
    const bytes = randomBytes(16);
    random = Array.from({ length: 16 }, (_, i) => (bytes[i] ?? 0) % 32);
  }
  lastTime = now;
  lastRandom = random;
  return encodeTime(now) + random.map((d) => ALPHABET[d]).join('');
}

/** Milliseconds encoded in a ULID's first ten characters. */
export function ulidTime(id: string): number {
  let ms = 0;
  for (let i = 0; i < 10; i++) ms = ms * 32 + ALPHABET.indexOf(id[i] ?? '0');
  return ms;
}

export function isUlid(id: string): boolean {
  return ULID_PATTERN.test(id);
}
