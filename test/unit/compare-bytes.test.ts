import { describe, expect, it } from 'vitest';
import { compareBytes } from '../../src/sandbox/filter.ts';

/** Code points that meet at the edges where UTF-16 and UTF-8 orders differ. */
const POINTS = [0x30, 0x61, 0x7f, 0x80, 0x7ff, 0x800, 0xd7ff, 0xe000, 0xfeff, 0xffff, 0x10000, 0x1f984, 0x10ffff];

function randomString(rand: () => number): string {
  let s = '';
  const n = Math.floor(rand() * 5);
  for (let i = 0; i < n; i++) s += String.fromCodePoint(POINTS[Math.floor(rand() * POINTS.length)]!);
  return s;
}

describe('compareBytes', () => {
  it('orders strings as their UTF-8 bytes (Postgres C collation), across surrogates and U+E000..U+FFFF', () => {
    let seed = 12345;
    const rand = () => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 0x100000000;
    let checked = 0;
    for (let k = 0; k < 20_000; k++) {
      const a = randomString(rand);
      const b = k % 3 === 0 ? a + randomString(rand) : randomString(rand);
      const want = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
      expect([a, b, compareBytes(a, b)]).toEqual([a, b, want]);
      checked++;
    }
    expect(checked).toBe(20_000);
    // The case plain `<` gets wrong: U+FFFF is below U+1F984 in UTF-8, above its surrogate in UTF-16.
    expect(compareBytes('\uffff', '🦄')).toBe(-1);
    expect('\uffff' < '🦄').toBe(false);
  });
});
