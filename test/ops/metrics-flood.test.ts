// The /metrics flood: anyone who reaches the API port may scrape it, and rendering on every
// request took Check's p50 from 2.6 to 54 ms. Fresh renders now come from a bucket; past it the
// last text is served again, so a flood renders a bounded number of times and never locks a
// scraper out.

import { describe, expect, it } from 'vitest';
import { boundedRender } from '../../src/http/listen.js';

describe('/metrics on the API port', () => {
  it('attack: 10,000 scrapes in one second render at most burst + rate times, each answered', () => {
    let clock = 0;
    let renders = 0;
    const scrape = boundedRender(
      () => `latch_renders ${++renders}\n`,
      { burst: 10, perSecond: 2 },
      () => clock,
    );
    const bodies = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      clock = i / 10; // 10,000 requests over one second
      bodies.add(scrape());
    }
    expect(renders).toBe(11); // the burst, then one more at 500 ms (2 per second)
    expect(bodies.size).toBe(11);
  });

  it('a scraper asking every 5 s after a flood gets fresh figures each time', () => {
    let clock = 0;
    let renders = 0;
    const scrape = boundedRender(
      () => `latch_renders ${++renders}\n`,
      { burst: 10, perSecond: 2 },
      () => clock,
    );
    for (let i = 0; i < 1000; i++) scrape(); // the flood, all at clock 0
    const seen: string[] = [];
    for (let k = 1; k <= 3; k++) {
      clock = k * 5000;
      seen.push(scrape());
    }
    expect(seen).toEqual(['latch_renders 11\n', 'latch_renders 12\n', 'latch_renders 13\n']);
  });
});
