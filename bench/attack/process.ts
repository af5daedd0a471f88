// What the attack benches share about the server they start in its own process: a JSON caller
// for its API and its memory as the kernel reports it.

import { readFileSync } from 'node:fs';

/** A `/proc/<pid>/status` field in kB (VmRSS, VmHWM), as MB; 0 when absent. */
export function statusMb(pid: number | undefined, field: string): number {
  const line = readFileSync(`/proc/${pid}/status`, 'utf8')
    .split('\n')
    .find((l) => l.startsWith(field));
  return Number(/(\d+) kB/.exec(line ?? '')?.[1] ?? 0) / 1024;
}

/** A JSON call to `base` with `headers`; throws on any status of 300 or more; `{}` for an empty body. */
export function jsonCaller(
  base: string,
  headers: Record<string, string> = {},
): (method: string, path: string, body?: unknown) => Promise<Record<string, unknown>> {
  return async (method, path, body) => {
    const res = await fetch(base + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${text}`);
    return text === '' ? {} : (JSON.parse(text) as Record<string, unknown>);
  };
}
