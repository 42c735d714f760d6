/**
 * Independent oracles for the report views: the same figures computed another way, in TypeScript with decimal.js
 * (exact), from the sandbox's own rows, never by running a view's SQL. Report values (DOUBLE arithmetic in DuckDB)
 * must agree within a relative tolerance of 1e-9.
 */
import { Decimal } from 'decimal.js';
import { expect } from 'vitest';
import { DEFAULT_TRUSTED, MIN_TRACKED_LIQUIDITY_USD } from '../../src/config/tracked.ts';

/** Precision of the oracle: every sandbox value has at most 34 significant digits, so products are exact. */
Decimal.set({ precision: 80 });

/** Relative tolerance of a DOUBLE result against the exact figure (plus an absolute one near zero). */
export const TOLERANCE = 1e-9;

/** An exact decimal from an upstream text (null as zero). */
export const D = (v: unknown): Decimal => new Decimal(v === null || v === undefined ? 0 : String(v));

/** Whether a token is in the shipped trusted set of a chain. */
export function trusted(chainId: number, token: string): boolean {
  return (DEFAULT_TRUSTED[String(chainId)] ?? []).includes(token);
}

/** Asserts that a report's number is the exact figure, within TOLERANCE. */
export function expectClose(actual: unknown, exact: Decimal, what: string): void {
  expect(typeof actual, `${what}: ${String(actual)}`).toBe('number');
  const a = new Decimal(actual as number);
  const bound = exact.abs().times(TOLERANCE).plus(1e-12);
  expect(a.minus(exact).abs().lte(bound), `${what}: report ${a.toString()}, exact ${exact.toString()}`).toBe(true);
}

/** Uniswap's tracked volume: both sides trusted, their average; one, that side; neither, zero. */
export function trackedVolume(base: Decimal, quote: Decimal, baseTrusted: boolean, quoteTrusted: boolean): Decimal {
  if (baseTrusted && quoteTrusted) return base.plus(quote).div(2);
  if (baseTrusted) return base;
  if (quoteTrusted) return quote;
  return new Decimal(0);
}

/** The UTC day (YYYY-MM-DD) of Unix seconds. */
export const dayOf = (secs: unknown) => new Date(Number(secs) * 1000).toISOString().slice(0, 10);

/** Days a derived price stays good without a new trade (sql/helpers/01-tracked.sql). */
export const CARRY_DAYS = 7;

/**
 * One side of a pool on a day (or at a snapshot), with the other side beside it. `tradePrice`: the side's token in
 * units of the other token where the pool traded, or null.
 */
export interface Side {
  readonly chainId: number;
  readonly day: string;
  readonly pool: string;
  readonly token: string;
  readonly reserve: Decimal;
  readonly price: Decimal;
  readonly volume: Decimal;
  readonly other: string;
  readonly otherReserve: Decimal;
  readonly otherPrice: Decimal;
  readonly otherVolume: Decimal;
  readonly tradePrice: Decimal | null;
}

/** Both sides of a pool from its two tokens' figures (base first). */
function twoSides(
  common: { chainId: number; day: string; pool: string },
  base: { token: string; reserve: Decimal; price: Decimal; volume: Decimal },
  quote: { token: string; reserve: Decimal; price: Decimal; volume: Decimal },
  quotePerBase: Decimal | null,
): Side[] {
  const side = (a: typeof base, b: typeof base, tradePrice: Decimal | null): Side => ({
    ...common,
    token: a.token,
    reserve: a.reserve,
    price: a.price,
    volume: a.volume,
    other: b.token,
    otherReserve: b.reserve,
    otherPrice: b.price,
    otherVolume: b.volume,
    tradePrice,
  });
  return [
    side(base, quote, quotePerBase),
    side(quote, base, quotePerBase === null ? null : new Decimal(1).div(quotePerBase)),
  ];
}

/** Both sides of every pool day of a chain, from raw PairDayData rows; the trade price from the day's volumes. */
export function daySides(chainId: number, days: readonly Record<string, any>[]): Side[] {
  return days.flatMap((d) => {
    const [vb, vq] = [D(d.volumeBase), D(d.volumeQuote)];
    return twoSides(
      { chainId, day: dayOf(d.date), pool: d.pairAddress },
      { token: d.baseToken, reserve: D(d.baseTokenReserve), price: D(d.baseUsdPrice), volume: vb },
      { token: d.quoteToken, reserve: D(d.quoteTokenReserve), price: D(d.quoteUsdPrice), volume: vq },
      vb.gt(0) && vq.gt(0) ? vq.div(vb) : null,
    );
  });
}

/** Both sides of every pool of a liquidity-list snapshot (items with `pair.lastTradePrice`), under the key `day`. */
export function listSides(chainId: number, day: string, items: readonly Record<string, any>[]): Side[] {
  return items.flatMap((i) => {
    const p = i.pair;
    const ltp = D(p.lastTradePrice);
    return twoSides(
      { chainId, day, pool: i.id },
      { token: p.baseToken.id, reserve: D(p.baseReserve), price: D(p.baseToken.usdPrice), volume: D(0) },
      { token: p.quoteToken.id, reserve: D(p.quoteReserve), price: D(p.quoteToken.usdPrice), volume: D(0) },
      ltp.gt(0) ? ltp : null,
    );
  });
}

/** A token on a day: its tracked price (null when it has none), its pools' sums, and its backing. */
export interface TokenDay {
  readonly trusted: boolean;
  readonly price: Decimal | null;
  /** The median of the prices the upstream recorded for it. */
  readonly upstream: Decimal;
  readonly reserve: Decimal;
  readonly untracked: Decimal;
  /** The trusted value and volume of the pools pairing it with a trusted token (zero for a trusted token). */
  readonly backing: Decimal;
  readonly backingVolume: Decimal;
}

/** Whole days from one YYYY-MM-DD to another. */
const daysBetween = (from: string, to: string) => (Date.parse(to) - Date.parse(from)) / 86_400_000;

/**
 * Every token's tracked price per day (`<day>/<token>`): a trusted token's median recorded price; another's through
 * the pool pairing it with a trusted token that holds the most trusted value (at least MIN_TRACKED_LIQUIDITY_USD) among
 * those that traded it, the last such price up to `carryDays` old.
 */
export function tokenDays(sides: readonly Side[], carryDays = CARRY_DAYS): Map<string, TokenDay> {
  const groups = groupBy(sides, (s) => `${s.day}/${s.token}`);
  // The day's own derived price per token, by day.
  const derived = new Map<string, Map<string, Decimal>>();
  for (const [key, list] of groups) {
    const [day, token] = key.split('/') as [string, string];
    if (trusted(list[0]!.chainId, token)) continue;
    let best: { backing: Decimal; pool: string; price: Decimal } | undefined;
    for (const s of list) {
      if (!trusted(s.chainId, s.other) || s.tradePrice === null) continue;
      const backing = s.otherReserve.times(s.otherPrice);
      const price = s.tradePrice.times(s.otherPrice);
      if (backing.lt(MIN_TRACKED_LIQUIDITY_USD) || !price.gt(0)) continue;
      if (!best || backing.gt(best.backing) || (backing.eq(best.backing) && s.pool < best.pool))
        best = { backing, pool: s.pool, price };
    }
    if (!best) continue;
    if (!derived.has(token)) derived.set(token, new Map());
    derived.get(token)!.set(day, best.price);
  }
  const out = new Map<string, TokenDay>();
  for (const [key, list] of groups) {
    const [day, token] = key.split('/') as [string, string];
    const isTrusted = trusted(list[0]!.chainId, token);
    const backed = list.filter((s) => !isTrusted && trusted(s.chainId, s.other));
    const upstream = median(list.map((s) => s.price));
    let price: Decimal | null = null;
    if (isTrusted) price = upstream;
    else {
      const last = [...(derived.get(token) ?? [])]
        .filter(([d]) => d <= day && daysBetween(d, day) <= carryDays)
        .sort(([a], [b]) => (a < b ? -1 : 1))
        .at(-1);
      price = last?.[1] ?? null;
    }
    out.set(key, {
      trusted: isTrusted,
      price,
      upstream,
      reserve: list.reduce((a, s) => a.plus(s.reserve), D(0)),
      untracked: list.reduce((a, s) => a.plus(s.reserve.times(s.price)), D(0)),
      backing: backed.reduce((a, s) => a.plus(s.otherReserve.times(s.otherPrice)), D(0)),
      backingVolume: backed.reduce((a, s) => a.plus(s.otherVolume.times(s.otherPrice)), D(0)),
    });
  }
  return out;
}

/** A token's tracked value: trusted, every pool at its recorded price; else at its price, at most its backing. */
export function tokenValue(t: TokenDay): Decimal {
  if (t.trusted) return t.untracked;
  if (t.price === null) return D(0);
  return Decimal.min(t.reserve.times(t.price), t.backing);
}

/**
 * A pool's tracked value (its two sides): a trusted side at its recorded price; an untrusted side beside a trusted one
 * at its token's tracked price, scaled so that the token's pools add up to at most its tracked value; else nothing.
 */
export function poolTracked(pair: readonly Side[], tokens: ReadonlyMap<string, TokenDay>): Decimal {
  let sum = D(0);
  for (const s of pair) {
    if (trusted(s.chainId, s.token)) sum = sum.plus(s.reserve.times(s.price));
    else if (trusted(s.chainId, s.other)) {
      const t = tokens.get(`${s.day}/${s.token}`)!;
      const whole = t.price === null ? D(0) : t.reserve.times(t.price);
      if (whole.gt(0)) sum = sum.plus(s.reserve.times(t.price!).times(tokenValue(t)).div(whole));
    }
  }
  return sum;
}

/** Items grouped by a key, in their order. */
function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const item of items) {
    const k = key(item);
    const list = m.get(k);
    if (list) list.push(item);
    else m.set(k, [item]);
  }
  return m;
}

/** The sides of each pool (`<day>/<pool>`). */
export function byPool(sides: readonly Side[]): Map<string, Side[]> {
  return groupBy(sides, (s) => `${s.day}/${s.pool}`);
}

/** The median, the mean of the two middle values for an even count (as DuckDB's `median` of numbers). */
export function median(list: readonly Decimal[]): Decimal {
  const sorted = [...list].sort((a, b) => a.comparedTo(b));
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : sorted[mid - 1]!.plus(sorted[mid]!).div(2);
}

/** Asserts that two keyed sets of rows cover the same keys, and returns the pairs. */
export function matchRows<R, E>(
  report: readonly R[],
  exact: ReadonlyMap<string, E>,
  key: (r: R) => string,
  what: string,
): [R, E][] {
  const keys = report.map(key);
  expect(new Set(keys).size, `${what}: repeated keys`).toBe(keys.length);
  expect([...keys].sort(), `${what}: rows`).toEqual([...exact.keys()].sort());
  return report.map((r) => [r, exact.get(key(r))!]);
}
