// Persistence of the built-in issuer's signing keys (ES256 JWKs) in the auth DB. The key
// material is made and used by src/api/auth/signing-keys.ts; this module only stores records.
// Contract: `save` of a new current key and the pointer to it land in one atomic batch.

import type { AuthKv } from './kv.js';

export interface SigningKeyRecord {
  readonly kid: string;
  readonly createdAt: number;
  readonly privateJwk: Readonly<Record<string, unknown>>;
  readonly publicJwk: Readonly<Record<string, unknown>>;
}

const PREFIX = 'key\u0000';
const CURRENT = 'meta\u0000current-key';

export class KeyRecords {
  constructor(private readonly kv: AuthKv) {}

  /** Every stored key, oldest first, and the kid of the current one. */
  async load(): Promise<{ keys: SigningKeyRecord[]; current: string | undefined }> {
    const rows = await this.kv.range({ gte: PREFIX, lt: PREFIX + '\uffff' });
    const keys = rows.map(([, v]) => JSON.parse(v) as SigningKeyRecord).sort((a, b) => a.createdAt - b.createdAt);
    return { keys, current: await this.kv.get(CURRENT) };
  }

  /** Stores `key` as the new current key and deletes `retire` (keys past their verification life). */
  async promote(key: SigningKeyRecord, retire: readonly string[]): Promise<void> {
    await this.kv.batch(
      [
        { type: 'put', key: PREFIX + key.kid, value: JSON.stringify(key) },
        { type: 'put', key: CURRENT, value: key.kid },
        ...retire.map((kid) => ({ type: 'del' as const, key: PREFIX + kid })),
      ],
      true,
    );
  }
}
