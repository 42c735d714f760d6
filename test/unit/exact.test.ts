import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as X from '../../src/util/exact.ts';

describe('exact decimals', () => {
  it.each([
    [X.dec(1234500, 4), '123.45'],
    [X.dec(1, 18), '0.000000000000000001'],
    [X.dec(-5, 1), '-0.5'],
    [X.dec(10n ** 30n), '1000000000000000000000000000000'],
    [X.dec(0, 5), '0'],
  ])('formats %o as %s', (d, text) => expect(X.format(d)).toBe(text));

  it('rounds to 34 significant digits like graph-node', () => {
    expect(X.format(X.parse('1.23456789012345678901234567890123456789'))).toBe('1.234567890123456789012345678901235');
  });

  it('parses what it formats, exactly', () => {
    fc.assert(
      fc.property(fc.bigInt({ min: -(10n ** 33n), max: 10n ** 33n }), fc.integer({ min: -20, max: 40 }), (m, s) => {
        const d = X.dec(m, s);
        expect(X.compare(X.parse(X.format(d)), d)).toBe(0);
      }),
    );
  });

  it('adds and multiplies without loss', () => {
    expect(X.format(X.add(X.parse('0.1'), X.parse('0.2')))).toBe('0.3');
    expect(X.format(X.mul(X.parse('1e30'), X.parse('1e-18')))).toBe('1000000000000');
  });
});
