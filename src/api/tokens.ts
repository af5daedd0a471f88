// Continuation tokens: the backend's opaque cursor wrapped with the store, the endpoint and the
// filter it was made for, signed with an HMAC so a tampered or foreign token is refused.
//
// Wire form: URL-safe base64 (no padding, so it matches `^[A-Za-z0-9-_]+={0,2}$`) of
//   mac[16] ‖ utf8(kind \0 storeId \0 filter \0 cursor)
// where mac = first 16 bytes of HMAC-SHA256(key, payload). The key is random per process unless
// a secret is configured (tokens then survive restarts and work across replicas).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';
import { SHA256_IV, compress, digestInto, pad } from './sha256.js';

export type TokenKind = 'stores' | 'models' | 'read' | 'changes' | 'list-objects' | 'list-users' | 'indexes';

export interface TokenContent {
  readonly storeId: string;
  /** The filter the cursor is valid for (Read: object/relation/user; ReadChanges: the type). */
  readonly filter: string;
  readonly cursor: string;
}

const MAC_BYTES = 16;
const BLOCK = 64;

/**
 * The SHA-256 state after one 64-byte block: the key XOR `fill` (HMAC's ipad/opad, RFC 2104). The
 * key is 32 bytes (a SHA-256 digest or 32 random bytes), so it is never hashed down first.
 */
function keyedState(key: Buffer, fill: number): Int32Array {
  const block = new Uint8Array(BLOCK).fill(fill);
  for (let i = 0; i < key.length; i++) block[i] = (block[i] as number) ^ (key[i] as number);
  const state = Int32Array.from(SHA256_IV);
  compress(state, block, 0, BLOCK);
  return state;
}
const SEP = '\u0000';

export const invalidToken = (): AppError => new AppError('invalid_continuation_token', 'Invalid continuation token');

export class TokenCodec {
  readonly #key: Buffer;

  /** `secret` omitted → a random per-process key. */
  constructor(secret?: string) {
    this.#key = secret ? createHmac('sha256', 'latch continuation tokens').update(secret).digest() : randomBytes(32);
  }

  #mac(payload: Buffer): Buffer {
    return createHmac('sha256', this.#key).update(payload).digest().subarray(0, MAC_BYTES);
  }

  encode(kind: TokenKind, content: TokenContent): string {
    const payload = Buffer.from([kind, content.storeId, content.filter, content.cursor].join(SEP), 'utf8');
    return Buffer.concat([this.#mac(payload), payload]).toString('base64url');
  }

  /**
   * `encode(kind, {storeId, filter, cursor})` for many cursors of one listing, byte for byte, at
   * a fraction of the cost (every line of a resumable stream carries one): the HMAC's key blocks
   * and the whole blocks of the fixed payload prefix are hashed once, in JavaScript (./sha256.ts),
   * and each cursor reuses one buffer (the function owns it: one signer per stream).
   */
  signer(kind: TokenKind, storeId: string, filter: string): (cursor: string) => string {
    const prefix = Buffer.from([kind, storeId, filter, ''].join(SEP), 'utf8');
    const whole = prefix.length - (prefix.length % BLOCK);
    const inner = keyedState(this.#key, 0x36);
    compress(inner, prefix, 0, whole);
    const outer = keyedState(this.#key, 0x5c);
    const work = new Int32Array(8);
    // The outer message is the 32-byte inner digest: its padding is the same every time.
    const outerBlock = new Uint8Array(BLOCK);
    pad(outerBlock, 0, 32, BLOCK + 32);
    // out = mac ‖ prefix ‖ cursor, then the inner hash's padding (not part of the token).
    const start = MAC_BYTES + prefix.length;
    const from = MAC_BYTES + whole;
    // The block that the cursor's first `lead` bytes complete is hashed once per distinct lead:
    // a listing's cursors all begin with its type (`doc:`), so mostly once per stream.
    const lead = BLOCK - (prefix.length - whole);
    const leadState = new Int32Array(8);
    const leadBytes = new Uint8Array(lead);
    let leadKnown = false;
    let out = Buffer.alloc(start + 256 + 2 * BLOCK);
    prefix.copy(out, MAC_BYTES);
    return (cursor) => {
      if (out.length < start + cursor.length * 3 + 2 * BLOCK) {
        const grown = Buffer.alloc(start + cursor.length * 3 + 2 * BLOCK);
        out.copy(grown, 0, 0, start);
        out = grown;
      }
      const end = start + out.write(cursor, start, 'utf8');
      let at = from;
      if (end - start >= lead) {
        let same = leadKnown;
        for (let i = 0; same && i < lead; i++) same = leadBytes[i] === out[start + i];
        if (!same) {
          leadState.set(inner);
          compress(leadState, out, from, from + BLOCK);
          for (let i = 0; i < lead; i++) leadBytes[i] = out[start + i] as number;
          leadKnown = true;
        }
        work.set(leadState);
        at = from + BLOCK;
      } else work.set(inner);
      compress(work, out, at, pad(out, at, end, BLOCK + end - MAC_BYTES));
      digestInto(work, outerBlock, 0, 8);
      work.set(outer);
      compress(work, outerBlock, 0, BLOCK);
      digestInto(work, out, 0, MAC_BYTES / 4);
      return out.toString('base64url', 0, end);
    };
  }

  /**
   * The content of a token made by `encode(kind, …)`; throws invalid_continuation_token when the
   * token was tampered with, made by another process key, or made for another endpoint or store.
   * The filter is returned, not compared: Read compares it, ReadChanges reports a type mismatch.
   */
  decode(kind: TokenKind, storeId: string, token: string): TokenContent {
    const raw = Buffer.from(token, 'base64url');
    if (raw.length <= MAC_BYTES) throw invalidToken();
    const payload = raw.subarray(MAC_BYTES);
    if (!timingSafeEqual(raw.subarray(0, MAC_BYTES), this.#mac(payload))) throw invalidToken();
    const parts = payload.toString('utf8').split(SEP);
    if (parts.length !== 4 || parts[0] !== kind || parts[1] !== storeId) throw invalidToken();
    return { storeId, filter: parts[2] ?? '', cursor: parts[3] ?? '' };
  }
}
