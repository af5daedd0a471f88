// `expires_at` edge years: year 0000 is malformed (it was read as 1900), and years 1-99 are
// read as themselves, not as 1900-1999.

import { describe, expect, it } from 'vitest';
import { parseExpiry } from '../../src/domain/expiry.js';

describe('expires_at years', () => {
  it('attack: year 0000 in expires_at is refused as malformed', () => {
    expect(parseExpiry('0000-01-01T00:00:00Z')).toBeUndefined();
  });

  it('years 1-99 are those years', () => {
    expect(new Date(parseExpiry('0099-06-01T00:00:00Z') as number).getUTCFullYear()).toBe(99);
    expect(parseExpiry('2030-01-01T00:00:00Z')).toBe(Date.UTC(2030, 0, 1));
  });
});
