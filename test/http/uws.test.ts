// The uWS loader: the native binary loads on this machine, and a missing binary is refused with a
// message naming what was tried (never the JS fallback of the trufflesuite wrapper).

import { describe, expect, test, vi } from 'vitest';
import { candidates, loadUws, loadUwsFrom } from '../../src/http/uws.js';

describe('uWS loader', () => {
  test('loads a native binary for this Node ABI', () => {
    const uws = loadUws();
    expect(typeof uws.App).toBe('function');
    expect(typeof uws.SSLApp).toBe('function');
    expect(typeof uws.getParts).toBe('function');
  });

  test('refuses to start without one, naming every path tried', () => {
    expect(() =>
      loadUwsFrom([
        'uWebSockets.js/uws_nowhere_000.node',
        '@trufflesuite/uws-js-unofficial/binaries/uws_nowhere_000.node',
      ]),
    ).toThrow(
      /needs a native uWebSockets\.js binary[\s\S]*uws_nowhere_000\.node: not installed[\s\S]*uws_nowhere_000\.node/,
    );
  });

  test("the wrapper's JS fallback and other modules are refused", () => {
    expect(() => loadUwsFrom(['@trufflesuite/uws-js-unofficial/dist/index.js'])).toThrow(/not a native uWS binary/);
    expect(() => loadUwsFrom(['msgpackr'])).toThrow(/not a native uWS binary/);
  });
});

describe('uWS candidates', () => {
  test('@btc-vision/uwebsockets.js comes before the trufflesuite build', () => {
    const ids = candidates();
    const btc = ids.findIndex((id) => id.startsWith('@btc-vision/uwebsockets.js/'));
    const truffle = ids.findIndex((id) => id.startsWith('@trufflesuite/'));
    expect(btc).toBeGreaterThanOrEqual(0);
    expect(btc).toBeLessThan(truffle);
  });

  test('a candidate that cannot load (here: a binary needing a newer glibc) falls back silently', () => {
    const written: string[] = [];
    const spy = vi
      .spyOn(process.stderr, 'write')
      .mockImplementation((chunk: string | Uint8Array) => (written.push(String(chunk)), true));
    const warn = vi.spyOn(console, 'warn').mockImplementation((...a: unknown[]) => void written.push(a.join(' ')));
    try {
      const uws = loadUwsFrom(candidates());
      expect(typeof uws.App).toBe('function');
    } finally {
      spy.mockRestore();
      warn.mockRestore();
    }
    expect(written).toEqual([]);
    // On this machine the btc-vision binary itself is refused (glibc 2.36 < 2.38), and says why.
    const btc = candidates().filter((id) => id.startsWith('@btc-vision/'));
    expect(() => loadUwsFrom(btc)).toThrow(
      process.platform === 'linux' && glibc() < 2.38 ? /GLIBC_2\.38' not found/ : /./,
    );
  });
});

/** The running glibc version (2.36 → 2.36), or Infinity off glibc. */
function glibc(): number {
  const v = (process.report?.getReport() as { header?: { glibcVersionRuntime?: string } } | undefined)?.header
    ?.glibcVersionRuntime;
  return v ? Number(v) : Infinity;
}
