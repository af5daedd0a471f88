// The uWS loader: the native binary loads on this machine, and a missing binary is refused with a
// message naming what was tried (never the JS fallback of the trufflesuite wrapper).

import { describe, expect, test } from 'vitest';
import { loadUws, loadUwsFrom } from '../../src/http/uws.js';

describe('uWS loader', () => {
  test('loads a native binary for this Node ABI', () => {
    const uws = loadUws();
    expect(typeof uws.App).toBe('function');
    expect(typeof uws.SSLApp).toBe('function');
    expect(typeof uws.getParts).toBe('function');
  });

  test('refuses to start without one, naming every path tried', () => {
    expect(() => loadUwsFrom(['uWebSockets.js/uws_nowhere_000.node', '@trufflesuite/uws-js-unofficial/binaries/uws_nowhere_000.node']))
      .toThrow(/needs a native uWebSockets\.js binary[\s\S]*uws_nowhere_000\.node: not installed[\s\S]*uws_nowhere_000\.node/);
  });

  test('the wrapper\'s JS fallback and other modules are refused', () => {
    expect(() => loadUwsFrom(['@trufflesuite/uws-js-unofficial/dist/index.js'])).toThrow(/not a native uWS binary/);
    expect(() => loadUwsFrom(['msgpackr'])).toThrow(/not a native uWS binary/);
  });
});
