/** Freshness as `status` and the dashboard state it: lag from the committed block to a reference time, and staleness. */
import { describe, expect, it } from 'vitest';
import { isStale, lagSeconds } from '../../src/store/freshness.ts';

/** 2026-01-01T00:00:00Z in Unix seconds. */
const T = 1_767_225_600;

describe('freshness', () => {
  it('lag is whole seconds from the block to the reference, never below 0, null without a block', () => {
    expect(lagSeconds('2026-01-01T00:00:00.000Z', T + 90)).toBe(90);
    expect(lagSeconds('2026-01-01T00:00:00.600Z', T + 90)).toBe(89);
    // A head behind the committed block (another route, a clock off): no negative lag.
    expect(lagSeconds('2026-01-01T00:10:00Z', T)).toBe(0);
    expect(lagSeconds(null, T)).toBeNull();
  });

  it('stale: never succeeded, lag unknown, or over the limit; an unavailable dataset never', () => {
    const ok = { lastSuccess: '2026-01-01T00:00:00Z', lastStatus: 'ok' };
    expect(isStale(ok, 7200, 7200)).toBe(false);
    expect(isStale(ok, 7201, 7200)).toBe(true);
    expect(isStale(ok, null, 7200)).toBe(true);
    expect(isStale({ lastSuccess: null, lastStatus: 'failed' }, 0, 7200)).toBe(true);
    expect(isStale({ lastSuccess: null, lastStatus: 'unavailable' }, null, 7200)).toBe(false);
  });
});
