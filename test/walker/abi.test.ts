// src/abi.ts is the host's copy of the walker ABI in assembly/abi.ts (and the version and batch
// record size in assembly/index.ts). This test reads the AssemblyScript sources and fails on any
// constant that differs or exists on one side only, so the two cannot drift apart silently.

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as host from '../../src/abi.js';

/** `export const NAME: type = value;` of an AssemblyScript file, values evaluated (decimal or hex). */
function constants(file: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of readFileSync(file, 'utf8').matchAll(/^export const (\w+): [iu](?:32|size) = (0x[0-9a-f]+|\d+);/gim)) {
    out.set(m[1] as string, Number(m[2]));
  }
  return out;
}

/** The host's value of an assembly constant: `S_NODE_COUNT` is `S.NODE_COUNT`, `C_*` and `P_*` alike. */
function hostValue(name: string): number | undefined {
  const table = (prefix: string): Record<string, number> | undefined =>
    prefix === 'S' ? host.S : prefix === 'C' ? host.C : prefix === 'P' ? host.P : undefined;
  const m = /^([SCP])_(\w+)$/.exec(name);
  const grouped = m ? table(m[1] as string)?.[m[2] as string] : undefined;
  if (grouped !== undefined) return grouped;
  const flat = (host as Record<string, unknown>)[name];
  return typeof flat === 'number' ? flat : undefined;
}

/** Host-only constants: not part of the wasm's sources (each says why). */
const HOST_ONLY = new Set([
  'R_ERR_INTERNAL', // a worker trapped or died: set by the pool, never by the walker
  'MAX_NAMES', // interning limits derived from SR_MASK / COND_SHIFT
  'MAX_CONDS',
  'UNSEEN_NODE', // a host-side node id for strings no tuple mentions (never reaches a lookup)
  'FORM_OBJECT', // restriction forms, documented in assembly/abi.ts's comment on restriction lists
  'FORM_WILDCARD',
  'FORM_USERSET',
]);

describe('src/abi.ts mirrors assembly/abi.ts', () => {
  const wasm = constants('assembly/abi.ts');
  const index = constants('assembly/index.ts');

  it('reads the assembly constants', () => {
    expect(wasm.size).toBeGreaterThan(60);
    expect(index.get('ABI_VERSION')).toBeGreaterThan(0);
  });

  it('every assembly constant has the same value on the host', () => {
    const differ = [...wasm]
      .filter(([name, v]) => hostValue(name) !== v)
      .map(([name, v]) => `${name}: wasm ${v}, host ${hostValue(name)}`);
    expect(differ).toEqual([]);
  });

  it('every host constant exists in the assembly sources, or is host-only', () => {
    const names = new Set(wasm.keys());
    const missing: string[] = [];
    for (const [k, v] of Object.entries(host)) {
      if (typeof v === 'number') {
        if (!names.has(k) && !HOST_ONLY.has(k) && k !== 'ABI_VERSION' && k !== 'QUERY_WORDS') missing.push(k);
      } else {
        for (const field of Object.keys(v)) if (!names.has(`${k}_${field}`)) missing.push(`${k}.${field}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('the ABI version and the batch record size match assembly/index.ts', () => {
    expect(host.ABI_VERSION).toBe(index.get('ABI_VERSION'));
    // checkBatch reads records of QUERY_WORDS u32 (`queries + i * 24`).
    expect(readFileSync('assembly/index.ts', 'utf8')).toContain(`* ${host.QUERY_WORDS * 4};`);
  });
});
