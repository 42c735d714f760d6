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

/** Uniswap's tracked liquidity: both sides trusted, their sum; one, twice that side; neither, zero. */
export function trackedTvl(base: Decimal, quote: Decimal, baseTrusted: boolean, quoteTrusted: boolean): Decimal {
  if (baseTrusted && quoteTrusted) return base.plus(quote);
  if (baseTrusted) return base.times(2);
  if (quoteTrusted) return quote.times(2);
  return new Decimal(0);
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

/** One side of a pool on a day: its token, reserve and price as the day data recorded them. */
export interface Side {
  readonly chainId: number;
  readonly day: string;
  readonly pool: string;
  readonly token: string;
  readonly reserve: Decimal;
  readonly price: Decimal;
}

/** Both sides of every pool day of a chain, from raw PairDayData rows. */
export function daySides(chainId: number, days: readonly Record<string, any>[]): Side[] {
  return days.flatMap((d) =>
    (['base', 'quote'] as const).map((s) => ({
      chainId,
      day: dayOf(d.date),
      pool: d.pairAddress as string,
      token: (s === 'base' ? d.baseToken : d.quoteToken) as string,
      reserve: D(s === 'base' ? d.baseTokenReserve : d.quoteTokenReserve),
      price: D(s === 'base' ? d.baseUsdPrice : d.quoteUsdPrice),
    })),
  );
}

/**
 * The tokens whose price counts on each day (`<day>/<token>`), with their median recorded price: trusted tokens, and
 * tokens paired in some pool that day with a trusted side worth at least MIN_TRACKED_LIQUIDITY_USD.
 */
export function pricedTokens(sides: readonly Side[]): Map<string, Decimal> {
  const byPoolDay = new Map<string, Side[]>();
  for (const s of sides) byPoolDay.set(`${s.day}/${s.pool}`, [...(byPoolDay.get(`${s.day}/${s.pool}`) ?? []), s]);
  const priced = new Set<string>();
  for (const pair of byPoolDay.values()) {
    for (const s of pair) {
      if (trusted(s.chainId, s.token)) priced.add(`${s.day}/${s.token}`);
      const other = pair.find((o) => o !== s);
      if (
        other &&
        trusted(s.chainId, other.token) &&
        !trusted(s.chainId, s.token) &&
        other.reserve.times(other.price).gte(MIN_TRACKED_LIQUIDITY_USD)
      )
        priced.add(`${s.day}/${s.token}`);
    }
  }
  const prices = new Map<string, Decimal[]>();
  for (const s of sides)
    if (priced.has(`${s.day}/${s.token}`))
      prices.set(`${s.day}/${s.token}`, [...(prices.get(`${s.day}/${s.token}`) ?? []), s.price]);
  return new Map([...prices].map(([k, list]) => [k, median(list)]));
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
