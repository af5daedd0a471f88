// SHA-256 compression in JavaScript over caller-owned state, for HMACs whose key and message
// prefix repeat (the continuation token of every line of a resumable stream, ./tokens.ts): the
// state after the repeated bytes is computed once, and each message then costs two or three
// block compressions with no allocation and no call into native code (node:crypto costs ≈ 3 µs
// per HMAC object, more than the compressions themselves).

const K = Int32Array.from([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5, 0xd807aa98,
  0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174, 0xe49b69c1, 0xefbe4786,
  0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da, 0x983e5152, 0xa831c66d, 0xb00327c8,
  0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967, 0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13,
  0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85, 0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819,
  0xd6990624, 0xf40e3585, 0x106aa070, 0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a,
  0x5b9cca4f, 0x682e6ff3, 0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7,
  0xc67178f2,
]);

/** The initial hash value (FIPS 180-4 §5.3.3). */
export const SHA256_IV: readonly number[] = [
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
];

const W = new Int32Array(64);

/** Compresses the 64-byte blocks of `bytes[from, to)` (`to - from` a multiple of 64) into `state`. */
export function compress(state: Int32Array, bytes: Uint8Array, from: number, to: number): void {
  for (let at = from; at < to; at += 64) {
    for (let i = 0; i < 16; i++) {
      const j = at + i * 4;
      W[i] =
        ((bytes[j] as number) << 24) |
        ((bytes[j + 1] as number) << 16) |
        ((bytes[j + 2] as number) << 8) |
        (bytes[j + 3] as number);
    }
    for (let i = 16; i < 64; i++) {
      const w15 = W[i - 15] as number;
      const w2 = W[i - 2] as number;
      const s0 = ((w15 >>> 7) | (w15 << 25)) ^ ((w15 >>> 18) | (w15 << 14)) ^ (w15 >>> 3);
      const s1 = ((w2 >>> 17) | (w2 << 15)) ^ ((w2 >>> 19) | (w2 << 13)) ^ (w2 >>> 10);
      W[i] = ((W[i - 16] as number) + s0 + (W[i - 7] as number) + s1) | 0;
    }
    let a = state[0] as number;
    let b = state[1] as number;
    let c = state[2] as number;
    let d = state[3] as number;
    let e = state[4] as number;
    let f = state[5] as number;
    let g = state[6] as number;
    let h = state[7] as number;
    for (let i = 0; i < 64; i++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + S1 + ((e & f) ^ (~e & g)) + (K[i] as number) + (W[i] as number)) | 0;
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (S0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    state[0] = (state[0] as number) + a;
    state[1] = (state[1] as number) + b;
    state[2] = (state[2] as number) + c;
    state[3] = (state[3] as number) + d;
    state[4] = (state[4] as number) + e;
    state[5] = (state[5] as number) + f;
    state[6] = (state[6] as number) + g;
    state[7] = (state[7] as number) + h;
  }
}

/**
 * Pads the message whose last block starts at `bytes[from]` and that ends at `bytes[length)`
 * (`total` bytes hashed in all, earlier blocks included) as FIPS 180-4 §5.1.1 asks; returns where
 * the padded message ends (a multiple of 64 past `from`). `bytes` needs room for 72 more bytes.
 */
export function pad(bytes: Uint8Array, from: number, length: number, total: number): number {
  bytes[length] = 0x80;
  let end = length + 1;
  while ((end - from) % 64 !== 56) bytes[end++] = 0;
  const bits = total * 8;
  const high = Math.floor(bits / 0x100000000);
  for (let i = 0; i < 4; i++) bytes[end + i] = (high >>> (24 - i * 8)) & 0xff;
  for (let i = 0; i < 4; i++) bytes[end + 4 + i] = (bits >>> (24 - i * 8)) & 0xff;
  return end + 8;
}

/** Writes `state` big-endian into `out` from `at` (`words` words). */
export function digestInto(state: Int32Array, out: Uint8Array, at: number, words: number): void {
  for (let i = 0; i < words; i++) {
    const w = state[i] as number;
    out[at + i * 4] = w >>> 24;
    out[at + i * 4 + 1] = (w >>> 16) & 0xff;
    out[at + i * 4 + 2] = (w >>> 8) & 0xff;
    out[at + i * 4 + 3] = w & 0xff;
  }
}
