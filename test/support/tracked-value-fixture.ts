/**
 * The hand-written fixture of the tracked-value tests (test/unit/tracked-value*.test.ts; sql/helpers/01-tracked.sql):
 * a few pools and days typed in below, each expected figure of the tests worked out by hand from them. A
 * trusted/trusted pool, trusted/untrusted pools, an untrusted/untrusted pool, a scam token priced at 1e30 upstream but
 * backed by 50,000 USD, a token whose best backing pool changes from one day to the next, a price carried over quiet
 * days (and dropped past the limit), and a token backed below the threshold; loaded into a DuckDB file with the
 * reports' views, and read back with numbers compared within 1e-9 relative.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, expect } from 'vitest';
import { dataFolder } from '../../src/config/data-folder.ts';
import { writeViewsFile } from '../../src/reports/views.ts';

export const USDC = '0xusdc';
export const WETH = '0xweth';
export const SCAM = '0xscam';
export const GOOD = '0xgood';
export const THIN = '0xthin';
/** Unix seconds of a day of January 2026. */
export const jan = (d: number) => Date.UTC(2026, 0, d) / 1000;
export const day = (d: number) => `2026-01-${String(d).padStart(2, '0')}`;

// pool, day, base, quote, base reserve, quote reserve, base price, quote price, base volume, quote volume, quote fee
export type DayRow = [string, number, string, string, number, number, number, number, number, number, number];
export const POOL_DAYS: DayRow[] = [
  // Day 1. p1 trusted/trusted; p2 the scam token against 50,000 USDC, trading at 100/1000 = 0.1 USDC; p3 and p5 both
  // back GOOD (100,000 USD of WETH at 0.5/200 × 2000 = 5 USD, and 60,000 USDC at 480/100 = 4.8); p4 untrusted on both
  // sides; p6 backs THIN with 10,000 USDC, under the 50,000 threshold.
  ['p1', 1, WETH, USDC, 100, 300_000, 2000, 1, 10, 20_000, 60],
  ['p2', 1, SCAM, USDC, 1e6, 50_000, 1e30, 1, 1000, 100, 0.3],
  ['p3', 1, GOOD, WETH, 10_000, 50, 5, 2000, 200, 0.5, 0.0015],
  ['p4', 1, SCAM, GOOD, 9e6, 2000, 1e30, 5, 90_000, 10, 0.03],
  ['p5', 1, GOOD, USDC, 1000, 60_000, 5, 1, 100, 480, 1.44],
  ['p6', 1, THIN, USDC, 500, 10_000, 3, 1, 50, 150, 0.45],
  // Day 2. p3 holds 20 WETH (40,000 USD, under the threshold and under p5): GOOD's price comes from p5, 450/100 = 4.5.
  ['p3', 2, GOOD, WETH, 10_000, 20, 5, 2000, 100, 0.2, 0.0006],
  ['p5', 2, GOOD, USDC, 1000, 60_000, 5, 1, 100, 450, 1.35],
  // Days 3, 9 and 10: p5 has events but no trade. GOOD keeps day 2's 4.5 for 7 days (days 3 and 9), not on day 10.
  ['p5', 3, GOOD, USDC, 1000, 60_000, 4.6, 1, 0, 0, 0],
  ['p5', 9, GOOD, USDC, 1000, 60_000, 4.6, 1, 0, 0, 0],
  ['p5', 10, GOOD, USDC, 1000, 60_000, 4.6, 1, 0, 0, 0],
];

// token, day, volume, upstream price
export const TOKEN_DAYS: [string, number, number, number][] = [
  [SCAM, 1, 91_000, 1e30],
  [GOOD, 1, 310, 5],
  [USDC, 1, 20_730, 1],
  [THIN, 1, 50, 3],
  [GOOD, 2, 100, 4.6],
];

// day, source, from token, amount in, to token, amount out, trader, upstream USD volume
export const ORDERS: [number, string, string, number, string, number, string, number][] = [
  [1, 'SMART_ROUTE', SCAM, 500, USDC, 40, '0xa', 7],
  [1, 'SMART_ROUTE', SCAM, 1e6, GOOD, 100, '0xb', 1e35],
  [1, 'SMART_ROUTE', WETH, 1, GOOD, 400, '0xa', 2000],
  [1, 'SMART_ROUTE', THIN, 10, GOOD, 20, '0xc', 1],
  [1, 'DODO_POOL', SCAM, 1e9, USDC, 1, '0xd', 5],
  [2, 'SMART_ROUTE', GOOD, 10, THIN, 5, '0xa', 46],
];

// One liquidity-list snapshot (day 3, 12:00 UTC): pool, type, base, quote, reserves, prices, last trade price
// (quote per base), the service's TVL.
export type ListRow = [string, string, string, string, number, number, number, number, number, number];
export const SNAPSHOT: ListRow[] = [
  ['p1', 'DSP', WETH, USDC, 100, 300_000, 2000, 1, 2000, 500_000],
  ['p2', 'DVM', SCAM, USDC, 1e6, 50_000, 1e30, 1, 0.1, 1e36],
  // GOOD is the quote here: 500 GOOD per WETH, so 2000 / 500 = 4 USD.
  ['p7', 'DPP', WETH, GOOD, 50, 10_000, 2000, 5, 500, 150_000],
  ['p4', 'DVM', SCAM, GOOD, 9e6, 2000, 1e30, 5, 0.0002, 9e36],
];

export let dir: string;
export let instance: DuckDBInstance;
export let conn: DuckDBConnection;

export async function insert(table: string, columns: string[], rows: readonly unknown[][]): Promise<void> {
  for (const r of rows) {
    const values = r.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
    await conn.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values})`);
  }
}

/** The rows of a query as objects, numbers as JS numbers and dates as text. */
export async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const r = await conn.runAndReadAll(sql);
  return r.getRowObjectsJson() as Record<string, unknown>[];
}

/** Expected rows: each number within 1e-9 relative of the hand-worked figure, everything else equal. */
export function expectRows(actual: Record<string, unknown>[], expected: Record<string, unknown>[]): void {
  expect(actual.length, JSON.stringify(actual)).toBe(expected.length);
  expected.forEach((e, i) => {
    for (const [k, v] of Object.entries(e)) {
      const a = actual[i]![k];
      const what = `row ${i} ${k}: ${JSON.stringify(actual[i])}`;
      if (typeof v === 'number') {
        expect(typeof a === 'number' || typeof a === 'string', what).toBe(true);
        expect(Math.abs(Number(a) - v), what).toBeLessThanOrEqual(Math.abs(v) * 1e-9 + 1e-9);
      } else expect(a, what).toEqual(v);
    }
  });
}

/** The fixture's tables and the reports' views in a DuckDB file, before the calling file's tests; removed after. */
export function useTrackedValueFixture(): void {
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'pool-export-tracked-'));
    await writeViewsFile(dir, {
      tokens: [
        { chainId: 1, token: USDC, symbol: 'USDC' },
        { chainId: 1, token: WETH, symbol: 'WETH' },
      ],
      minLiquidityUsd: 50_000,
    });
    instance = await DuckDBInstance.create(dataFolder(dir).views);
    conn = await instance.connect();
    await insert(
      'dodoex.pair_day_datas',
      [
        'chain_id',
        'pair_address',
        'date',
        'base_token_id',
        'quote_token_id',
        'base_token_reserve',
        'quote_token_reserve',
        'base_usd_price',
        'quote_usd_price',
        'volume_base',
        'volume_quote',
        'fee_base',
        'fee_quote',
      ],
      POOL_DAYS.map(([p, d, ...rest]) => [1, p, jan(d), ...rest.slice(0, 8), 0, rest[8]]),
    );
    await insert(
      'dodoex.token_day_datas',
      ['chain_id', 'token_id', 'date', 'volume', 'usd_price'],
      TOKEN_DAYS.map(([t, d, v, p]) => [1, t, jan(d), v, p]),
    );
    await insert(
      'dodoex.order_histories',
      [
        'chain_id',
        'source',
        'from_token_id',
        'amount_in',
        'to_token_id',
        'amount_out',
        '"from"',
        'volume_usd',
        '"timestamp"',
      ],
      ORDERS.map(([d, ...o]) => [1, ...o, jan(d) + 3600]),
    );
    await insert(
      'dodoex.tokens',
      ['chain_id', 'id', 'symbol'],
      [USDC, WETH, SCAM, GOOD, THIN].map((t) => [1, t, t.slice(2).toUpperCase()]),
    );
    await insert(
      'list.liquidity',
      [
        'chain_id',
        '_taken_at',
        'id',
        'type',
        'base_token_id',
        'quote_token_id',
        'base_reserve',
        'quote_reserve',
        'base_token_usd_price',
        'quote_token_usd_price',
        'last_trade_price',
        'tvl',
      ],
      SNAPSHOT.map(([p, type, ...rest]) => [1, `${day(3)} 12:00:00+00`, p, type, ...rest]),
    );
  });
  afterAll(() => {
    conn?.closeSync();
    instance?.closeSync();
    rmSync(dir, { recursive: true, force: true });
  });
}
