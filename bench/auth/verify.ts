// Token verification cost per request: warm (the verified-token cache hit the HTTP layer sees on
// every request after the first with a token) vs cold (jose ES256 verification). Checks its own
// answers: every call must admit the right client. Quick run: `npx tsx bench/auth/verify.ts`.

import { loadavg } from 'node:os';
import { openAuth } from '../../src/api/auth/service.js';
import { admit } from '../../src/api/auth/gate.js';

const STORE = '01JAAAAAAAAAAAAAAAAAAAAAAA';
const WARM = Number(process.env.WARM ?? 500_000);
const COLD = Number(process.env.COLD ?? 2_000);

async function main(): Promise<void> {
  const auth = await openAuth({
    // The check bucket is opened wide: the warm loop runs far above any real request rate.
    config: {
      mode: 'client-credentials',
      issuer: 'http://127.0.0.1:8080',
      audience: 'http://127.0.0.1:8080',
      logRetentionDays: 0,
      rateLimits: { check: { perSecond: 1e15, burst: 1e15 } },
    },
    host: '127.0.0.1',
  });
  const { client } = await auth.clients!.create({ storeId: STORE, scopes: ['check:tuples'] });
  const now = Math.floor(Date.now() / 1000);
  const claims = (i: number) => ({
    iss: 'http://127.0.0.1:8080',
    sub: client.id,
    aud: 'http://127.0.0.1:8080/',
    iat: now,
    exp: now + 3600,
    jti: `j${i}`,
    client_id: client.id,
    store_id: STORE,
    scope: 'check:tuples',
  });
  const headers: string[] = [];
  for (let i = 0; i < COLD + 1; i++) headers.push(`Bearer ${await auth.keys!.sign(claims(i))}`);
  const a = auth.authenticator;

  // Cold: each header seen for the first time → full jose verification + claim checks.
  for (let i = 0; i < 200; i++) await a.verify(`Bearer ${await auth.keys!.sign(claims(-i - 1))}`); // JIT warm-up
  let t = process.hrtime.bigint();
  for (let i = 1; i <= COLD; i++) {
    const p = await a.authenticate(headers[i], 'Check', STORE);
    if (p.clientId !== client.id) throw new Error('wrong principal');
  }
  const coldUs = Number(process.hrtime.bigint() - t) / 1000 / COLD;

  // Warm: the same header again → cache hit, synchronous, plus the authorization decision.
  const h = headers[0] as string;
  await a.authenticate(h, 'Check', STORE);
  for (let i = 0; i < 50_000; i++) a.authenticate(h, 'Check', STORE);
  t = process.hrtime.bigint();
  for (let i = 0; i < WARM; i++) {
    const p = a.authenticate(h, 'Check', STORE);
    if (p instanceof Promise || p.clientId !== client.id) throw new Error('cache miss on a warm token');
  }
  const warmUs = Number(process.hrtime.bigint() - t) / 1000 / WARM;

  // The whole admission step as the HTTP layer runs it: authenticate, authorize, rate-limit bucket.
  t = process.hrtime.bigint();
  for (let i = 0; i < WARM; i++) {
    const g = admit(auth, 'Check', h, STORE);
    if (g.principal === undefined) throw new Error('not admitted synchronously');
  }
  const admitUs = Number(process.hrtime.bigint() - t) / 1000 / WARM;

  const out = {
    date: new Date().toISOString(),
    node: process.version,
    load_average_1_5_15: loadavg().map((l) => +l.toFixed(2)),
    cold_jose_es256_us: +coldUs.toFixed(2),
    warm_cache_hit_us: +warmUs.toFixed(3),
    warm_admission_with_rate_limit_us: +admitUs.toFixed(3),
    target_warm_us: 5,
    ok: warmUs <= 5,
  };
  console.log(JSON.stringify(out, null, 2));
  await auth.close();
  if (!out.ok) process.exitCode = 1;
}

void main();
