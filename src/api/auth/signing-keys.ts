// The built-in issuer's signing keys: ES256 key pairs persisted in the auth DB, rotated every
// `rotationSeconds` (never faster than the token lifetime, so the previous key still verifies
// every live token). The JWKS publishes the current and the previous public key.

import {
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
  type CryptoKey,
  type JWK,
  type JWTPayload,
} from 'jose';
import type { KeyRecords, SigningKeyRecord } from '../../storage/auth/signing-key-records.js';
import { logger } from '../../log.js';

export const SIGNING_ALG = 'ES256';

interface LiveKey {
  readonly kid: string;
  readonly createdAt: number;
  readonly privateKey: CryptoKey;
  readonly publicKey: CryptoKey;
  readonly publicJwk: JWK;
}

async function live(rec: SigningKeyRecord): Promise<LiveKey> {
  const privateKey = (await importJWK(rec.privateJwk as JWK, SIGNING_ALG)) as CryptoKey;
  const publicKey = (await importJWK(rec.publicJwk as JWK, SIGNING_ALG)) as CryptoKey;
  return { kid: rec.kid, createdAt: rec.createdAt, privateKey, publicKey, publicJwk: rec.publicJwk as JWK };
}

async function generate(): Promise<SigningKeyRecord> {
  const pair = await generateKeyPair(SIGNING_ALG, { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  const kid = await calculateJwkThumbprint(publicJwk);
  return {
    kid,
    createdAt: Date.now(),
    privateJwk: await exportJWK(pair.privateKey),
    publicJwk: { ...publicJwk, kid, alg: SIGNING_ALG, use: 'sig' },
  };
}

export class KeyRing {
  #current: LiveKey | undefined;
  #previous: LiveKey | undefined;
  #timer: NodeJS.Timeout | undefined;
  /** Public keys of every stored key (see reload); empty until the first reload. */
  #verifiers = new Map<string, CryptoKey>();
  /** Called with the kid that stopped verifying (the verifier drops its cached tokens). */
  onRetire: (kid: string) => void = () => {};

  private constructor(
    private readonly records: KeyRecords,
    private readonly rotationMs: number,
  ) {}

  /** Loads the stored keys (making the first one), rotating at once when the current one is due. */
  static async open(records: KeyRecords, rotationSeconds: number, tokenTtlSeconds: number): Promise<KeyRing> {
    const ring = new KeyRing(records, Math.max(rotationSeconds, tokenTtlSeconds) * 1000);
    const { keys, current } = await records.load();
    const cur = keys.find((k) => k.kid === current);
    if (!cur) {
      await ring.rotate(keys.map((k) => k.kid));
    } else {
      ring.#current = await live(cur);
      const prev = keys.filter((k) => k.kid !== cur.kid && k.createdAt <= cur.createdAt).pop();
      ring.#previous = prev ? await live(prev) : undefined;
      if (Date.now() - cur.createdAt >= ring.rotationMs) await ring.rotate();
    }
    await ring.reload();
    ring.#schedule();
    return ring;
  }

  /**
   * Adopts what the stored records say (several nodes share them on PostgreSQL): the stored
   * current key and the one before it sign and publish; every stored key verifies, so a token
   * signed by another node's key (also one that lost a race to become current) is accepted until
   * that key is retired.
   */
  async reload(): Promise<void> {
    const { keys, current } = await this.records.load();
    const cur = keys.find((k) => k.kid === current);
    if (cur && cur.kid !== this.#current?.kid) {
      const prev = keys.filter((k) => k.kid !== cur.kid && k.createdAt <= cur.createdAt).pop();
      this.#current = await live(cur);
      this.#previous = prev ? await live(prev) : undefined;
    }
    const next = new Map<string, CryptoKey>();
    for (const k of keys)
      next.set(k.kid, this.#verifiers.get(k.kid) ?? ((await importJWK(k.publicJwk as JWK, SIGNING_ALG)) as CryptoKey));
    for (const kid of this.#verifiers.keys()) if (!next.has(kid)) this.onRetire(kid);
    this.#verifiers = next;
  }

  #schedule(): void {
    const due = Math.max(1000, this.#cur().createdAt + this.rotationMs - Date.now());
    this.#timer = setTimeout(
      () => {
        // Another node may have rotated already: then its key is adopted instead.
        this.reload()
          .then(() => (Date.now() - this.#cur().createdAt >= this.rotationMs ? this.rotate() : undefined))
          .then(
            () => this.#schedule(),
            (err: unknown) => logger.log('error', 'signing key rotation failed', { cause: String(err) }),
          );
      },
      Math.min(due, 2 ** 31 - 1),
    );
    this.#timer.unref();
  }

  /** Makes a new current key; the old current becomes previous, the old previous is retired. */
  async rotate(extraRetired: readonly string[] = []): Promise<void> {
    const rec = await generate();
    const old = this.#current;
    const retired = [...extraRetired];
    if (old && this.#previous) retired.push(this.#previous.kid);
    await this.records.promote(
      rec,
      retired.filter((k) => k !== old?.kid),
    );
    this.#previous = old;
    this.#current = await live(rec);
    for (const kid of retired) this.onRetire(kid);
  }

  #cur(): LiveKey {
    if (!this.#current) throw new Error('key ring not open');
    return this.#current;
  }

  get currentKid(): string {
    return this.#cur().kid;
  }

  /** The public key for `kid` when it is current or previous, or (after a reload) any stored key. */
  publicKey(kid: string | undefined): CryptoKey | undefined {
    if (kid === undefined) return undefined;
    if (this.#current?.kid === kid) return this.#current.publicKey;
    if (this.#previous?.kid === kid) return this.#previous.publicKey;
    return this.#verifiers.get(kid);
  }

  jwks(): { keys: JWK[] } {
    return { keys: [this.#cur().publicJwk, ...(this.#previous ? [this.#previous.publicJwk] : [])] };
  }

  /** Signs `claims` with the current key (`kid` in the header). */
  sign(claims: JWTPayload): Promise<string> {
    const key = this.#cur();
    return new SignJWT(claims).setProtectedHeader({ alg: SIGNING_ALG, kid: key.kid, typ: 'JWT' }).sign(key.privateKey);
  }

  close(): void {
    if (this.#timer) clearTimeout(this.#timer);
  }
}
