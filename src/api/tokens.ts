// Continuation tokens: the backend's opaque cursor wrapped with the store, the endpoint and the
// filter it was made for, signed with an HMAC so a tampered or foreign token is refused.
//
// Wire form: URL-safe base64 (no padding, so it matches `^[A-Za-z0-9-_]+={0,2}$`) of
//   mac[16] ‖ utf8(kind \0 storeId \0 filter \0 cursor)
// where mac = first 16 bytes of HMAC-SHA256(key, signed part). The key is random per process
// unless a secret is configured (tokens then survive restarts and work across replicas).
//
// The signed part is the whole payload, except for complete listings ('list-objects',
// 'list-users'): there it is `kind \0 storeId \0 filter \0`, the listing, and the cursor is a
// position in it that any holder of a token of that listing may move. The cursor of a complete
// listing is only ever compared with its sorted results (a forged one skips or repeats results the
// same request may list anyway), and a resumable stream carries a token on every line: signing the
// listing once per page, not every line, is what lets the stream run at the engine's speed.
// `decode` still accepts the whole-payload MAC on listing tokens (made by earlier versions).

import { Buffer } from 'node:buffer';
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';

type TokenKind = 'stores' | 'models' | 'read' | 'changes' | 'list-objects' | 'list-users' | 'indexes';

interface TokenContent {
  readonly storeId: string;
  /** The filter the cursor is valid for (Read: object/relation/user; ReadChanges: the type). */
  readonly filter: string;
  readonly cursor: string;
}

const MAC_BYTES = 16;
const SEP = '\u0000';

/** The kinds whose MAC signs the listing, not the cursor (see the head of this file). */
const LISTINGS: ReadonlySet<TokenKind> = new Set(['list-objects', 'list-users']);

/** The payload up to and including its third separator (`kind \0 storeId \0 filter \0`); all of it without three. */
function listingPart(payload: Buffer): Buffer {
  let at = -1;
  for (let n = 0; n < 3; n++) {
    at = payload.indexOf(0, at + 1);
    if (at === -1) return payload;
  }
  return payload.subarray(0, at + 1);
}

/** See `TokenCodec.listingTokens`. */
export interface ListingTokens {
  /** URL-safe base64 (ASCII bytes) of the token's fixed bytes up to a multiple of 3. */
  readonly head: Buffer;
  /** The 0–2 fixed bytes that the cursor's bytes continue in the next base64 group. */
  readonly tail: Buffer;
}

const invalidToken = (): AppError => new AppError('invalid_continuation_token', 'Invalid continuation token');

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
    const signed = LISTINGS.has(kind)
      ? payload.subarray(0, payload.length - Buffer.byteLength(content.cursor, 'utf8'))
      : payload;
    return Buffer.concat([this.#mac(signed), payload]).toString('base64url');
  }

  /**
   * The tokens of one complete listing in parts, for a renderer that writes them straight into
   * its output (a resumable stream's lines): the token of cursor `c` is `head` followed by the
   * URL-safe base64 of `tail ‖ utf8(c)`, byte for byte `encode(kind, {storeId, filter, cursor: c})`.
   * `head` is the base64 of the token's fixed bytes up to a multiple of 3, `tail` the 0–2 left.
   */
  listingTokens(kind: 'list-objects' | 'list-users', storeId: string, filter: string): ListingTokens {
    const prefix = Buffer.from([kind, storeId, filter, ''].join(SEP), 'utf8');
    const fixed = Buffer.concat([this.#mac(prefix), prefix]);
    const whole = fixed.length - (fixed.length % 3);
    return { head: Buffer.from(fixed.toString('base64url', 0, whole), 'latin1'), tail: fixed.subarray(whole) };
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
    const mac = raw.subarray(0, MAC_BYTES);
    const signed = LISTINGS.has(kind) ? listingPart(payload) : payload;
    // A listing token made before listings were signed without their cursor: the whole payload.
    if (!timingSafeEqual(mac, this.#mac(signed)) && (signed === payload || !timingSafeEqual(mac, this.#mac(payload))))
      throw invalidToken();
    const parts = payload.toString('utf8').split(SEP);
    if (parts.length !== 4 || parts[0] !== kind || parts[1] !== storeId) throw invalidToken();
    return { storeId, filter: parts[2] ?? '', cursor: parts[3] ?? '' };
  }
}
