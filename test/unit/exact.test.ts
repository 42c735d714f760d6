import { Decimal } from 'decimal.js';
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

/**
 * The same operations checked against decimal.js, an independent implementation, on random values: the sum,
 * difference and product exactly, the quotient truncated to its digits, graph-node's normalization (34 significant
 * digits, half away from zero, no trailing zeros) and the order.
 */
describe('exact decimals against decimal.js', () => {
  const D = Decimal.clone({ precision: 400, toExpNeg: -9e15, toExpPos: 9e15 });
  const big = fc.bigInt({ min: -(10n ** 45n), max: 10n ** 45n });
  const scale = fc.integer({ min: -25, max: 45 });
  const value = fc.tuple(big, scale).map(([m, s]) => X.dec(m, s));
  const oracle = (d: X.Dec) => new D(d.m.toString()).div(new D(10).pow(d.s));
  // Plain text of a decimal.js value, with the negative zero it can carry written as 0.
  const plain = (d: InstanceType<typeof D>) => (d.isZero() ? '0' : d.toFixed());
  const exactText = (d: X.Dec) => plain(oracle(d));

  it('adds, subtracts and multiplies exactly', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(exactText(X.add(a, b))).toBe(plain(oracle(a).plus(oracle(b))));
        expect(exactText(X.sub(a, b))).toBe(plain(oracle(a).minus(oracle(b))));
        expect(exactText(X.mul(a, b))).toBe(plain(oracle(a).times(oracle(b))));
      }),
      { numRuns: 300 },
    );
  });

  it('divides, truncating toward zero to the digits asked for; by zero gives zero', () => {
    fc.assert(
      fc.property(value, value, fc.integer({ min: 0, max: 50 }), (a, b, digits) => {
        const q = X.div(a, b, digits);
        const want = b.m === 0n ? new D(0) : oracle(a).div(oracle(b)).toDecimalPlaces(digits, D.ROUND_DOWN);
        expect(exactText(q)).toBe(plain(want));
      }),
      { numRuns: 300 },
    );
    // 40 digits truncated, then printed as graph-node does: rounded to 34 significant digits.
    expect(X.format(X.div(X.parse('2'), X.parse('3')))).toBe(`0.${'6'.repeat(33)}7`);
    expect(X.div(X.parse('2'), X.parse('3')).m).toBe(BigInt('6'.repeat(40)));
  });

  it('normalizes and formats as graph-node prints a BigDecimal', () => {
    fc.assert(
      fc.property(value, (d) => {
        const want = plain(oracle(d).toSignificantDigits(X.MAX_SIGNIFICANT_DIGITS, D.ROUND_HALF_UP));
        expect(X.format(d)).toBe(want);
        const n = X.normalize(d);
        expect(n.t).toBe(want);
        expect(exactText(n)).toBe(want);
        expect(X.normalize(n)).toBe(n);
        expect(X.format(n)).toBe(want);
      }),
      { numRuns: 500 },
    );
  });

  it('parses signs, fractions and exponents exactly, and refuses what is not a number', () => {
    const text = fc
      .tuple(
        fc.constantFrom('', '+', '-'),
        fc.stringMatching(/^\d{0,30}$/),
        fc.option(fc.stringMatching(/^\d{0,30}$/)),
        fc.option(fc.integer({ min: -40, max: 40 })),
      )
      .filter(([, int, frac]) => int !== '' || (frac ?? '') !== '')
      .map(
        ([sign, int, frac, exp]) => `${sign}${int}${frac === null ? '' : `.${frac}`}${exp === null ? '' : `e${exp}`}`,
      );
    fc.assert(
      fc.property(text, (t) => {
        expect(exactText(X.parse(t))).toBe(
          plain(new D(t.startsWith('.') || /^[+-]\./.test(t) ? t.replace('.', '0.') : t)),
        );
      }),
      { numRuns: 500 },
    );
    expect(exactText(X.parse('  -12.5e2 '))).toBe('-1250');
    for (const bad of ['', '.', '-', '+.', 'e5', '1e', '1.2.3', '--1', '0x10', '1 2', 'abc'])
      expect(() => X.parse(bad), bad).toThrow(`not a decimal number: ${bad}`);
  });

  it('orders as decimal.js does', () => {
    fc.assert(
      fc.property(value, value, (a, b) => {
        expect(X.compare(a, b)).toBe(oracle(a).cmp(oracle(b)));
        expect(X.compare(a, a)).toBe(0);
      }),
      { numRuns: 300 },
    );
  });
});
