// Continuation tokens: the backend's opaque cursor wrapped with the store, the endpoint and the
// filter it was made for, signed with an HMAC so a tampered or foreign token is refused.
//
// Wire form: URL-safe base64 (no padding, so it matches `^[A-Za-z0-9-_]+={0,2}$`) of
//   mac[16] ‖ utf8(kind \0 storeId \0 filter \0 cursor)
// where mac = first 16 bytes of HMAC-SHA256(key, payload). The key is random per process unless
// a secret is configured (tokens then survive restarts and work across replicas).

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AppError } from '../errors.js';

export type TokenKind = 'stores' | 'models' | 'read' | 'changes' | 'list-objects' | 'list-users' | 'indexes';

export interface TokenContent {
  readonly storeId: string;
  /** The filter the cursor is valid for (Read: object/relation/user; ReadChanges: the type). */
  readonly filter: string;
  readonly cursor: string;
}

const MAC_BYTES = 16;
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
