import { describe, expect, it } from 'vitest';
import { RateGovernor } from '../../src/upstream/rate-governor.ts';

/** A governor on a fake clock: `sleep` moves the clock. */
function fake(probeEveryMs = 4000) {
  let t = 0;
  const g = new RateGovernor({ now: () => t, sleep: async (ms) => void (t += ms), probeEveryMs });
  return { g, at: () => t, advance: (ms: number) => void (t += ms) };
}

describe('rate governor', () => {
  it('sends without pacing until the first 429', async () => {
    const { g, at } = fake();
    for (let i = 0; i < 100; i++) await g.acquire();
    expect(at()).toBe(0);
    expect(g.rate).toBe(Infinity);
  });

  it('after a 429 paces at the rate the upstream accepted in the last second, evenly spaced', async () => {
    const { g, at, advance } = fake();
    for (let i = 0; i < 20; i++) {
      g.onAccepted();
      advance(40);
    }
    g.onRateLimited();
    expect(g.rate).toBe(20);
    const start = at();
    for (let i = 0; i < 20; i++) await g.acquire();
    // 20 requests at 20 per second: the first at once after the 429's slot, then every 50 ms.
    expect(at() - start).toBeGreaterThanOrEqual(950);
    expect(at() - start).toBeLessThanOrEqual(1000);
  });

  it('lowers the pace at most once per second, and probes higher while no 429 comes', async () => {
    const { g, advance } = fake(1000);
    for (let i = 0; i < 30; i++) g.onAccepted();
    g.onRateLimited();
    expect(g.rate).toBe(30);
    g.onRateLimited();
    expect(g.rate).toBe(30);
    advance(1500);
    g.onRateLimited();
    expect(g.rate).toBeCloseTo(27, 5);
    advance(1000);
    await g.acquire();
    expect(g.rate).toBeCloseTo(27 * 1.03, 5);
    expect(g.limited).toBe(3);
  });
});
