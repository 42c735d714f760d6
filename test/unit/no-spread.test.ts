/**
 * No list that grows with the data is spread into `Math.max` or `Math.min`: each element becomes an argument on the
 * stack, and past about 100,000 of them the call throws "Maximum call stack size exceeded" (a report of 200,000 rows
 * drawn as a table did). `util/extremes.ts` loops instead. The sources are read as text.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maxOf, minOf } from '../../src/util/extremes.ts';

const SRC = resolve(import.meta.dirname, '../../src');

describe('no spread into Math.max or Math.min', () => {
  it('appears nowhere in src/', () => {
    const found: string[] = [];
    for (const f of readdirSync(SRC, { recursive: true }) as string[]) {
      if (!f.endsWith('.ts')) continue;
      readFileSync(join(SRC, f), 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (/Math\.(max|min)\(\s*\.\.\./.test(line)) found.push(`src/${f}:${i + 1}`);
        });
    }
    expect(found).toEqual([]);
  });

  it('maxOf and minOf take a list of any length, and agree with Math.max and Math.min where those work', () => {
    const big = Array.from({ length: 500_000 }, (_, i) => (i * 7919) % 500_003);
    // The largest and smallest, found by sorting: another way than a running comparison.
    const sorted = [...big].sort((a, b) => a - b);
    expect(maxOf(big)).toBe(sorted.at(-1));
    expect(minOf(big)).toBe(sorted[0]);
    expect(() => Math.max(...big)).toThrow(RangeError);
    for (const xs of [[], [3], [-1, 5, 2], [1, Number.NaN, 2], [-0, 0]]) {
      expect(maxOf(xs)).toBe(Math.max(...xs));
      expect(minOf(xs)).toBe(Math.min(...xs));
    }
  });
});
