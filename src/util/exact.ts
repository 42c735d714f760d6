/** Exact decimal values as a scaled integer (`m × 10^-s`), formatted the way graph-node prints BigDecimal. */

/** graph-node normalizes BigDecimal to at most this many significant digits. */
export const MAX_SIGNIFICANT_DIGITS = 34;

/** An exact decimal: mantissa `m` times ten to the power `-s`. */
export interface Dec {
  readonly m: bigint;
  readonly s: number;
  /** The formatted text, kept by `normalize` so that formatting a normalized value costs nothing. */
  readonly t?: string;
}

const TEN = 10n;
const POW10: bigint[] = [1n];
function pow10(n: number): bigint {
  while (POW10.length <= n) POW10.push(POW10[POW10.length - 1]! * TEN);
  return POW10[n]!;
}

/** A decimal from a mantissa and a scale. */
export function dec(m: bigint | number, s = 0): Dec {
  return { m: BigInt(m), s };
}

/** Exact sum. */
export function add(a: Dec, b: Dec): Dec {
  if (a.s === b.s) return { m: a.m + b.m, s: a.s };
  return a.s > b.s ? { m: a.m + b.m * pow10(a.s - b.s), s: a.s } : { m: a.m * pow10(b.s - a.s) + b.m, s: b.s };
}

/** Exact difference. */
export function sub(a: Dec, b: Dec): Dec {
  return add(a, { m: -b.m, s: b.s });
}

/** Exact product. */
export function mul(a: Dec, b: Dec): Dec {
  return { m: a.m * b.m, s: a.s + b.s };
}

/** Quotient with `digits` fractional digits, truncated toward zero. */
export function div(a: Dec, b: Dec, digits = 40): Dec {
  if (b.m === 0n) return { m: 0n, s: 0 };
  // a/b = (a.m / b.m) * 10^(b.s - a.s); scale the numerator so the result has `digits` fractional digits.
  const shift = digits + b.s - a.s;
  const num = shift >= 0 ? a.m * pow10(shift) : a.m / pow10(-shift);
  return { m: num / b.m, s: digits };
}

/** Rounds half away from zero to at most 34 significant digits and strips trailing zeros. */
export function normalize(d: Dec): Dec {
  if (d.t !== undefined) return d;
  const { digits, s, neg } = normalDigits(d);
  if (digits === '0') return { m: 0n, s: 0, t: '0' };
  // Nothing rounded or stripped: the mantissa is already the digits (this is the common case, and BigInt parsing is slow).
  if (s === d.s) return { m: d.m, s, t: text(digits, s, neg) };
  const m = BigInt(digits);
  return { m: neg ? -m : m, s, t: text(digits, s, neg) };
}

function text(digits: string, s: number, neg: boolean): string {
  let out: string;
  if (s <= 0) out = digits + '0'.repeat(-s);
  else if (digits.length > s) out = `${digits.slice(0, digits.length - s)}.${digits.slice(digits.length - s)}`;
  else out = `0.${'0'.repeat(s - digits.length)}${digits}`;
  return neg ? `-${out}` : out;
}

/** The normalized digit string of a decimal, computed on text (no BigInt division in the common case). */
function normalDigits(d: Dec): { digits: string; s: number; neg: boolean } {
  const neg = d.m < 0n;
  let digits = (neg ? -d.m : d.m).toString();
  let s = d.s;
  if (digits === '0') return { digits, s: 0, neg: false };
  if (digits.length > MAX_SIGNIFICANT_DIGITS) {
    const drop = digits.length - MAX_SIGNIFICANT_DIGITS;
    const roundUp = digits.charCodeAt(MAX_SIGNIFICANT_DIGITS) >= 53; // '5'
    let kept = BigInt(digits.slice(0, MAX_SIGNIFICANT_DIGITS));
    if (roundUp) kept += 1n;
    digits = kept.toString();
    s -= drop;
  }
  let end = digits.length;
  while (end > 1 && digits.charCodeAt(end - 1) === 48) end--;
  s -= digits.length - end;
  return { digits: digits.slice(0, end), s, neg };
}

/** The graph-node wire text of a BigDecimal: normalized, plain notation, no exponent. */
export function format(d: Dec): string {
  if (d.t !== undefined) return d.t;
  const { digits, s, neg } = normalDigits(d);
  return digits === '0' ? '0' : text(digits, s, neg);
}

/** Parses a plain decimal text (optionally signed, optional exponent) exactly. */
export function parse(text: string): Dec {
  const match = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text.trim());
  if (!match || (match[2] === '' && (match[3] ?? '') === '')) throw new Error(`not a decimal number: ${text}`);
  const [, sign, int = '', frac = '', exp = '0'] = match;
  const m = BigInt(int + frac || '0');
  return { m: sign === '-' ? -m : m, s: frac.length - Number(exp) };
}

/** Compares two decimals: -1, 0 or 1. */
export function compare(a: Dec, b: Dec): number {
  const d = sub(a, b).m;
  return d < 0n ? -1 : d > 0n ? 1 : 0;
}
