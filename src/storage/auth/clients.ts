// OAuth clients of the built-in issuer: id, bound store, scopes, the secret as a salted scrypt
// hash (never the secret), an optional public key for private_key_jwt, and lifecycle times.
// Contract: `create`/`rotate` return the clear secret once; it is never stored or logged.

import {
  createPublicKey,
  randomBytes,
  scrypt as scryptCb,
  timingSafeEqual,
  type JsonWebKey,
  type ScryptOptions,
} from 'node:crypto';
import type { AuthKv } from './kv.js';

export interface ClientRecord {
  readonly id: string;
  /** The store the client's tokens are bound to, or `*` for an account-level client. */
  readonly storeId: string;
  readonly scopes: readonly string[];
  /** `scrypt$N$r$p$salt$hash` (base64url parts). */
  readonly secretHash: string;
  /** Public JWK for `private_key_jwt` client assertions, when registered. */
  readonly publicKey?: Readonly<Record<string, unknown>> | undefined;
  readonly name?: string | undefined;
  readonly createdAt: string;
  readonly rotatedAt?: string | undefined;
  readonly revokedAt?: string | undefined;
}

interface NewClient {
  readonly storeId: string;
  readonly scopes: readonly string[];
  readonly name?: string | undefined;
  readonly publicKey?: Readonly<Record<string, unknown>> | undefined;
}

const PREFIX = 'client\u0000';
const KEY_LEN = 32;
/** N = 2^14, r = 8: ≈ 16 MiB and tens of ms per check; stored with the hash so it can grow. */
const COST = { N: 16384, r: 8, p: 1 };

function scrypt(secret: string, salt: Buffer, n: number, r: number, p: number): Promise<Buffer> {
  const options: ScryptOptions = { N: n, r, p, maxmem: 256 * n * r + 1024 * 1024 };
  return new Promise((resolve, reject) =>
    scryptCb(secret, salt, KEY_LEN, options, (err, key) => (err ? reject(err) : resolve(key))),
  );
}

/**
 * Why `jwk` cannot serve as a client's public key (private material, or no usable key: `{"kty":
 * "RSA"}` alone), or undefined when it is a public key node can import.
 */
export function publicJwkProblem(jwk: Readonly<Record<string, unknown>>): string | undefined {
  if ('d' in jwk || 'k' in jwk) return 'it contains private material';
  try {
    createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
    return undefined;
  } catch {
    return 'it holds no usable public key';
  }
}

async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(secret, salt, COST.N, COST.r, COST.p);
  return ['scrypt', COST.N, COST.r, COST.p, salt.toString('base64url'), hash.toString('base64url')].join('$');
}

/** Constant-time comparison of `secret` with a stored hash; a malformed hash never matches. */
export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [kind, n, r, p, salt, hash] = stored.split('$');
  if (kind !== 'scrypt' || !n || !r || !p || salt === undefined || hash === undefined) return false;
  const expected = Buffer.from(hash, 'base64url');
  const actual = await scrypt(secret, Buffer.from(salt, 'base64url'), Number(n), Number(r), Number(p));
  return expected.length === actual.length && timingSafeEqual(expected, actual);
}

/** A hash of a random secret: compared against when the client is unknown, to keep timing flat. */
let decoy: Promise<string> | undefined;
export function decoyHash(): Promise<string> {
  decoy ??= hashSecret(randomBytes(32).toString('base64url'));
  return decoy;
}

function newClientId(): string {
  return randomBytes(18).toString('base64url').replace(/[-_]/g, 'x');
}

function newSecret(): string {
  return randomBytes(32).toString('base64url');
}

/** The client table, mirrored in memory so a revocation check per request is one Map lookup. */
export class ClientStore {
  #byId = new Map<string, ClientRecord>();
  #reloadedAt = 0;

  private constructor(private readonly kv: AuthKv) {}

  static async open(kv: AuthKv): Promise<ClientStore> {
    const s = new ClientStore(kv);
    await s.reload();
    return s;
  }

  /**
   * Reads the table again: on a datastore shared by several nodes (PostgreSQL), clients created,
   * rotated or revoked through another node. Replaces the mirror in one assignment.
   */
  async reload(): Promise<void> {
    const next = new Map<string, ClientRecord>();
    for (const [, value] of await this.kv.range({ gte: PREFIX, lt: PREFIX + '\uffff' })) {
      const rec = JSON.parse(value) as ClientRecord;
      next.set(rec.id, rec);
    }
    this.#byId = next;
  }

  get(id: string): ClientRecord | undefined {
    return this.#byId.get(id);
  }

  /** `get`, reading the table again on a miss (at most once per 250 ms, so unknown ids cannot flood it). */
  async lookup(id: string): Promise<ClientRecord | undefined> {
    const hit = this.#byId.get(id);
    if (hit || Date.now() - this.#reloadedAt < 250) return hit;
    this.#reloadedAt = Date.now();
    await this.reload();
    return this.#byId.get(id);
  }

  list(): ClientRecord[] {
    return [...this.#byId.values()].sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async #put(rec: ClientRecord): Promise<void> {
    await this.kv.batch([{ type: 'put', key: PREFIX + rec.id, value: JSON.stringify(rec) }], true);
    this.#byId.set(rec.id, rec);
  }

  /**
   * A client with a public key (private_key_jwt) authenticates with it only: its stored hash is of
   * a random secret never shown, and `secret` is undefined.
   */
  create(c: NewClient & { readonly publicKey?: undefined }): Promise<{ client: ClientRecord; secret: string }>;
  create(c: NewClient): Promise<{ client: ClientRecord; secret: string | undefined }>;
  async create(c: NewClient): Promise<{ client: ClientRecord; secret: string | undefined }> {
    const secret = newSecret();
    const client: ClientRecord = {
      id: newClientId(),
      storeId: c.storeId,
      scopes: [...new Set(c.scopes)].sort(),
      secretHash: await hashSecret(secret),
      publicKey: c.publicKey,
      name: c.name,
      createdAt: new Date().toISOString(),
    };
    await this.#put(client);
    return { client, secret: c.publicKey === undefined ? secret : undefined };
  }

  /** A new secret; the old one stops working at once (undefined for a private_key_jwt client: it has none). Tokens already issued live until `exp`. */
  async rotate(id: string): Promise<{ client: ClientRecord; secret: string } | undefined> {
    const old = this.#byId.get(id);
    if (!old || old.revokedAt || old.publicKey !== undefined) return undefined;
    const secret = newSecret();
    const client: ClientRecord = { ...old, secretHash: await hashSecret(secret), rotatedAt: new Date().toISOString() };
    await this.#put(client);
    return { client, secret };
  }

  /** Permanent: the client gets no new token and its live tokens are refused (403). */
  async revoke(id: string): Promise<ClientRecord | undefined> {
    const old = this.#byId.get(id);
    if (!old) return undefined;
    if (old.revokedAt) return old;
    const client: ClientRecord = { ...old, revokedAt: new Date().toISOString() };
    await this.#put(client);
    return client;
  }
}
