import fc from 'fast-check';
import stringWidth from 'string-width';
import { describe, expect, it } from 'vitest';
import {
  cells,
  fit,
  fitGraphemes,
  humanDuration,
  humanNumber,
  humanTime,
  pad,
  tableLines,
} from '../../src/util/display.ts';
import { inert, jsonSafe } from '../../src/util/inert.ts';

describe('inert text', () => {
  it.each([
    ['\u001b[31mRED\u001b[0m', '\\x1b[31mRED\\x1b[0m'],
    ['a\rb\nc\td', 'a\\x0db\\x0ac\\x09d'],
    ['\u0007bell\u007f', '\\x07bell\\x7f'],
    ['\u009b2J', '\\x9b2J'],
    ['USD\u202eTKN', 'USD\\u202eTKN'],
    ['\u2066x\u2069', '\\u2066x\\u2069'],
    ['<b>WETH</b> & ünïcødé 🚀', '<b>WETH</b> & ünïcødé 🚀'],
  ])('%j → %j', (raw, shown) => expect(inert(raw)).toBe(shown));

  it('leaves no control character behind', () => {
    const all = Array.from({ length: 0x100 }, (_, i) => String.fromCharCode(i)).join('');
    // eslint-disable-next-line no-control-regex
    expect(inert(all)).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
  });
});

describe('JSON made terminal-safe', () => {
  it('escapes what JSON leaves raw, and every reader gets the same value back', () => {
    const all = Array.from({ length: 0x2070 }, (_, i) => String.fromCharCode(i)).join('');
    const value = { text: all, nested: ['\u202eabc', 'x\u0085y'], n: 1 };
    const json = jsonSafe(JSON.stringify(value));
    expect(json).not.toMatch(/[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/);
    expect(JSON.parse(json)).toEqual(value);
    expect(jsonSafe('"a\u202eb"')).toBe('"a\\u202eb"');
  });

  it('cuts a megabyte of text to a cell without measuring all of it', () => {
    const big = '名前🦄<i>'.repeat(80_000);
    expect(fit(big, 12)).toBe('名前🦄<i>名…');
  });
});

describe('fit to terminal cells', () => {
  it('counts wide characters and emoji as two cells', () => {
    expect(cells('abc')).toBe(3);
    expect(cells('日本')).toBe(4);
    expect(cells('🚀')).toBe(2);
  });

  it('cuts with an ellipsis, never inside a grapheme, never wider than asked', () => {
    expect(fit('abcdef', 6)).toBe('abcdef');
    expect(fit('abcdefg', 6)).toBe('abcde…');
    expect(fit('日本語テキスト', 6)).toBe('日本…');
    expect(fit('👨‍👩‍👧abc', 3)).toBe('👨‍👩‍👧…');
    for (const w of [1, 2, 5, 9]) expect(cells(fit('x🚀日y'.repeat(5), w))).toBeLessThanOrEqual(w);
  });

  it('pads to a width in cells, on the left for numbers, never cutting', () => {
    expect(pad('ab', 4)).toBe('ab  ');
    expect(pad('ab', 4, true)).toBe('  ab');
    expect(pad('日本', 5)).toBe('日本 ');
    expect(pad('日本', 3)).toBe('日本');
  });

  it('escapes before cutting, so an escape sequence is never half shown as a control', () => {
    expect(fit('\u001b[2Jabc', 5)).toBe('\\x1b…');
  });
});

describe('numbers, times and durations for reading', () => {
  it.each([
    [0, '0'],
    [42, '42'],
    [-7, '-7'],
    [1234.5678, '1,234.57'],
    [0.000123456, '0.0001235'],
    [2_500_000.5, '2.5M'],
    [3.21e12 + 0.5, '3.21T'],
    [9.58e35, '9.58e+35'],
    [1e-9, '1e-9'],
    [1e-6, '0.000001'],
    [9.99e-7, '9.99e-7'],
    [-2.5e-7, '-2.5e-7'],
    [999_999_999_999_999, '999999999999999'],
    [1e15, '1e+15'],
    [-1e15, '-1e+15'],
    [1e15 + 2, '1e+15'],
    [999_999.5, '1,000,000'],
    [1_000_000.5, '1M'],
    [-1_234_567.5, '-1.235M'],
    [1.5, '1.5'],
    [0.99, '0.99'],
    [Number.NaN, 'NaN'],
    [Number.NEGATIVE_INFINITY, '-Infinity'],
  ])('%d → %s', (n, shown) => expect(humanNumber(n)).toBe(shown));

  it('writes every time as UTC to the second', () => {
    expect(humanTime(new Date(Date.UTC(2026, 0, 2, 3, 4, 5, 678)))).toBe('2026-01-02 03:04:05Z');
    expect(humanTime('2026-01-02 03:04:05+00')).toBe('2026-01-02 03:04:05Z');
    expect(humanTime(0)).toBe('1970-01-01 00:00:00Z');
    expect(humanTime('not a time')).toBe('not a time');
    // DuckDB's text of a TIMESTAMPTZ, with microseconds or another offset: the instant it names, whatever the zone here.
    expect(humanTime('2026-01-02 03:04:05.123456+00')).toBe('2026-01-02 03:04:05Z');
    expect(humanTime('2026-01-02 03:04:05+05:30')).toBe('2026-01-01 21:34:05Z');
    expect(humanTime(Date.UTC(2026, 5, 30, 23, 59, 59, 999))).toBe('2026-06-30 23:59:59Z');
  });

  it.each([
    [0, '0s'],
    [59.4, '59s'],
    [59.6, '60s'],
    [60, '1m'],
    [125, '2m'],
    [3599, '60m'],
    [3600, '1.0h'],
    [5400, '1.5h'],
    [172_799, '48.0h'],
    [172_800, '2.0d'],
    [86_400 * 3, '3.0d'],
  ])('%d seconds → %s', (s, shown) => expect(humanDuration(s)).toBe(shown));
});

describe('the fast paths for plain text and UTC times', () => {
  /** Printable ASCII, now and then a character that is not (wide, combining, control, the ellipsis). */
  const texts = fc.array(
    fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
      { weight: 1, arbitrary: fc.constantFrom('…', '日', '🚀', 'é', '\u0301', '\u001b', '\u202e', '\u200b') },
    ),
    { maxLength: 60 },
  );

  it('cells agrees with string-width, the measure of any text', () => {
    fc.assert(
      fc.property(texts, (chars) => {
        expect(cells(chars.join(''))).toBe(stringWidth(chars.join('')));
      }),
    );
  });

  it('fit of plain text agrees with the walk by graphemes', () => {
    const plain = fc.string({ unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) });
    fc.assert(
      fc.property(plain, fc.integer({ min: 0, max: 50 }), (text, w) => {
        expect(fit(text, w)).toBe(fitGraphemes(text, w));
      }),
    );
  });

  it("humanTime reads DuckDB's text of a UTC time as it reads the instant", () => {
    const micros = fc.integer({ min: 0, max: 999_999 });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 253_402_300_799_000 }), micros, (ms, us) => {
        const iso = new Date(ms).toISOString();
        const text = `${iso.slice(0, 10)} ${iso.slice(11, 19)}${us ? `.${String(us).padStart(6, '0')}` : ''}+00`;
        expect(humanTime(text)).toBe(humanTime(new Date(ms)));
      }),
    );
  });
});

describe('tableLines', () => {
  it('draws 300,000 rows, each column as wide as its widest cell', () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => [`p${i}`, String(i % 1000)]);
    const lines = tableLines(['pool', 'n'], rows, { right: [false, true], rule: true });
    expect(lines).toHaveLength(300_002);
    expect(lines.slice(0, 3)).toEqual(['pool       n', '-------  ---', 'p0         0']);
    expect(lines.at(-1)).toBe('p299999  999');
  });
});
