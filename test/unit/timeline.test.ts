import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { eventHash, indexOfHash } from '../../src/sandbox/table-kinds.ts';
import { chainSpec, EventStream, Timeline } from '../../src/sandbox/timeline.ts';

const tl = new Timeline(1, chainSpec(1), 60);

describe('event streams', () => {
  const stream = new EventStream(tl, 5000, 1100);

  it('places events in non-decreasing blocks, with the burst in one block', () => {
    const counts = new Map<number, number>();
    let prev = 0;
    for (let i = 0; i < 6100; i++) {
      const b = stream.blockOf(i);
      expect(b).toBeGreaterThanOrEqual(prev);
      prev = b;
      counts.set(b, (counts.get(b) ?? 0) + 1);
    }
    expect(Math.max(...counts.values())).toBeGreaterThan(1000);
  });

  it('firstIndexAt is the inverse of blockOf', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 20_000 }), (i) => {
        const b = stream.blockOf(i);
        const first = stream.firstIndexAt(b);
        expect(first).toBeLessThanOrEqual(i);
        expect(stream.blockOf(first)).toBe(b);
        if (first > 0) expect(stream.blockOf(first - 1)).toBeLessThan(b);
      }),
    );
  });
});

describe('hashes', () => {
  it('event hashes encode their index', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 40 }), fc.integer({ min: 0, max: 5 }), (i, salt) => {
        expect(indexOfHash(eventHash(tl, 3, i, salt))).toBe(i);
      }),
    );
  });

  it('block hashes resolve to their block until a reorg rewrites it', () => {
    const t = new Timeline(9, chainSpec(56), 1);
    const b = t.head - 3;
    const before = t.hash(b);
    expect(t.blockOfHash(before)).toBe(b);
    t.reorg(5);
    expect(t.blockOfHash(before)).toBeUndefined();
    expect(t.blockOfHash(t.hash(b))).toBe(b);
    expect(t.hash(t.head - 10)).toBe(new Timeline(9, chainSpec(56), 1).hash(t.head - 10));
  });
});
