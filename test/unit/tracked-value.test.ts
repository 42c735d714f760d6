/**
 * Tracked value on a hand-written fixture (sql/helpers/01-tracked.sql): a few pools and days typed in below, and every
 * expected figure worked out by hand beside it (the arithmetic in the comments), never by running the views' SQL.
 * The fixture has a trusted/trusted pool, trusted/untrusted pools, an untrusted/untrusted pool, a scam token priced at
 * 1e30 upstream but backed by 50,000 USD, a token whose best backing pool changes from one day to the next, a price
 * carried over quiet days (and dropped past the limit), and a token backed below the threshold.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataFolder } from '../../src/config/data-folder.ts';
import { writeViewsFile } from '../../src/reports/views.ts';

const USDC = '0xusdc';
const WETH = '0xweth';
const SCAM = '0xscam';
const GOOD = '0xgood';
const THIN = '0xthin';
/** Unix seconds of a day of January 2026. */
const jan = (d: number) => Date.UTC(2026, 0, d) / 1000;
const day = (d: number) => `2026-01-${String(d).padStart(2, '0')}`;

// pool, day, base, quote, base reserve, quote reserve, base price, quote price, base volume, quote volume, quote fee
type DayRow = [string, number, string, string, number, number, number, number, number, number, number];
const POOL_DAYS: DayRow[] = [
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
const TOKEN_DAYS: [string, number, number, number][] = [
  [SCAM, 1, 91_000, 1e30],
  [GOOD, 1, 310, 5],
  [USDC, 1, 20_730, 1],
  [THIN, 1, 50, 3],
  [GOOD, 2, 100, 4.6],
];

// day, source, from token, amount in, to token, amount out, trader, upstream USD volume
const ORDERS: [number, string, string, number, string, number, string, number][] = [
  [1, 'SMART_ROUTE', SCAM, 500, USDC, 40, '0xa', 7],
  [1, 'SMART_ROUTE', SCAM, 1e6, GOOD, 100, '0xb', 1e35],
  [1, 'SMART_ROUTE', WETH, 1, GOOD, 400, '0xa', 2000],
  [1, 'SMART_ROUTE', THIN, 10, GOOD, 20, '0xc', 1],
  [1, 'DODO_POOL', SCAM, 1e9, USDC, 1, '0xd', 5],
  [2, 'SMART_ROUTE', GOOD, 10, THIN, 5, '0xa', 46],
];

// One liquidity-list snapshot (day 3, 12:00 UTC): pool, type, base, quote, reserves, prices, last trade price
// (quote per base), the service's TVL.
type ListRow = [string, string, string, string, number, number, number, number, number, number];
const SNAPSHOT: ListRow[] = [
  ['p1', 'DSP', WETH, USDC, 100, 300_000, 2000, 1, 2000, 500_000],
  ['p2', 'DVM', SCAM, USDC, 1e6, 50_000, 1e30, 1, 0.1, 1e36],
  // GOOD is the quote here: 500 GOOD per WETH, so 2000 / 500 = 4 USD.
  ['p7', 'DPP', WETH, GOOD, 50, 10_000, 2000, 5, 500, 150_000],
  ['p4', 'DVM', SCAM, GOOD, 9e6, 2000, 1e30, 5, 0.0002, 9e36],
];

let dir: string;
let instance: DuckDBInstance;
let conn: DuckDBConnection;

async function insert(table: string, columns: string[], rows: readonly unknown[][]): Promise<void> {
  for (const r of rows) {
    const values = r.map((v) => (typeof v === 'string' ? `'${v}'` : String(v))).join(', ');
    await conn.run(`INSERT INTO ${table} (${columns.join(', ')}) VALUES (${values})`);
  }
}

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

/** The rows of a query as objects, numbers as JS numbers and dates as text. */
async function rows(sql: string): Promise<Record<string, unknown>[]> {
  const r = await conn.runAndReadAll(sql);
  return r.getRowObjectsJson() as Record<string, unknown>[];
}

/** Expected rows: each number within 1e-9 relative of the hand-worked figure, everything else equal. */
function expectRows(actual: Record<string, unknown>[], expected: Record<string, unknown>[]): void {
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

describe('derived prices', () => {
  it('a trusted token keeps its upstream price; another takes the best-backed pool that traded it, carried up to 7 days', async () => {
    const r = await rows(
      `SELECT token, strftime(day, '%Y-%m-%d') AS day, price_usd, upstream_price_usd, price_source,
              strftime(price_day, '%Y-%m-%d') AS price_day, via_pool, via_token, via_backing_usd, backing_usd
       FROM reports.token_prices_daily WHERE token <> '${USDC}' ORDER BY token, day`,
    );
    expectRows(r, [
      // GOOD, day 1: p3 (100,000 USD of WETH) beats p5 (60,000 USDC): 0.5 / 200 × 2000 = 5. Backing 160,000.
      {
        token: GOOD,
        day: day(1),
        price_usd: 5,
        upstream_price_usd: 5,
        price_source: 'derived',
        via_pool: 'p3',
        via_token: WETH,
        via_backing_usd: 100_000,
        backing_usd: 160_000,
      },
      // Day 2: p3's 40,000 is under the threshold; p5: 450 / 100 = 4.5. Backing 40,000 + 60,000.
      {
        token: GOOD,
        day: day(2),
        price_usd: 4.5,
        price_source: 'derived',
        price_day: day(2),
        via_pool: 'p5',
        via_token: USDC,
        via_backing_usd: 60_000,
        backing_usd: 100_000,
      },
      // Days 3 and 9: no trade; day 2's price, 1 and 7 days old. Day 10: 8 days old, no price.
      {
        token: GOOD,
        day: day(3),
        price_usd: 4.5,
        upstream_price_usd: 4.6,
        price_source: 'carried',
        price_day: day(2),
        via_pool: 'p5',
        backing_usd: 60_000,
      },
      { token: GOOD, day: day(9), price_usd: 4.5, price_source: 'carried', price_day: day(2), backing_usd: 60_000 },
      {
        token: GOOD,
        day: day(10),
        price_usd: null,
        price_source: null,
        price_day: null,
        via_pool: null,
        backing_usd: 60_000,
      },
      // SCAM: 1e30 upstream, 100 / 1000 × 1 = 0.1 through p2's 50,000 USDC (the threshold itself counts).
      {
        token: SCAM,
        day: day(1),
        price_usd: 0.1,
        upstream_price_usd: 1e30,
        price_source: 'derived',
        via_pool: 'p2',
        via_backing_usd: 50_000,
        backing_usd: 50_000,
      },
      // THIN: backed by 10,000 USDC only.
      { token: THIN, day: day(1), price_usd: null, upstream_price_usd: 3, price_source: null, backing_usd: 10_000 },
      { token: WETH, day: day(1), price_usd: 2000, price_source: 'trusted', via_pool: null, backing_usd: null },
      { token: WETH, day: day(2), price_usd: 2000, price_source: 'trusted' },
    ]);
  });

  it('per snapshot, through the backing pool with the most trusted value, at its last trade price', async () => {
    const r = await rows(
      `SELECT token, price_usd, via_pool, backing_usd, value_usd FROM reports.token_prices_snapshot ORDER BY token`,
    );
    expectRows(r, [
      // GOOD: p7 trades 500 GOOD per WETH: 2000 / 500 = 4. 12,000 GOOD × 4 = 48,000, under p7's 100,000 of WETH.
      { token: GOOD, price_usd: 4, via_pool: 'p7', backing_usd: 100_000, value_usd: 48_000 },
      // SCAM: 0.1 USDC per SCAM; 1e7 SCAM × 0.1 = 1e6, bounded by p2's 50,000 USDC.
      { token: SCAM, price_usd: 0.1, via_pool: 'p2', backing_usd: 50_000, value_usd: 50_000 },
      { token: USDC, price_usd: 1, via_pool: null, backing_usd: null, value_usd: 350_000 },
      { token: WETH, price_usd: 2000, via_pool: null, backing_usd: null, value_usd: 300_000 },
    ]);
  });
});

describe('token-level tracked figures', () => {
  it('tvl_by_token: at the tracked price, at most the trusted backing', async () => {
    const r = await rows(
      `SELECT token, strftime(day, '%Y-%m-%d') AS day, reserve, tvl_usd, tvl_untracked_usd FROM reports.tvl_by_token ORDER BY day, token`,
    );
    expectRows(r, [
      // 13,000 GOOD × 5 = 65,000 (backing 160,000).
      { token: GOOD, day: day(1), reserve: 13_000, tvl_usd: 65_000, tvl_untracked_usd: 65_000 },
      // 1e7 SCAM × 0.1 = 1e6, bounded by 50,000; untracked 1e7 × 1e30.
      { token: SCAM, day: day(1), reserve: 1e7, tvl_usd: 50_000, tvl_untracked_usd: 1e37 },
      { token: THIN, day: day(1), reserve: 500, tvl_usd: 0, tvl_untracked_usd: 1500 },
      // 300,000 + 50,000 + 60,000 + 10,000.
      { token: USDC, day: day(1), reserve: 420_000, tvl_usd: 420_000, tvl_untracked_usd: 420_000 },
      // 100 + 50 WETH × 2000.
      { token: WETH, day: day(1), reserve: 150, tvl_usd: 300_000, tvl_untracked_usd: 300_000 },
      // 11,000 GOOD × 4.5 = 49,500 (backing 100,000).
      { token: GOOD, day: day(2), reserve: 11_000, tvl_usd: 49_500, tvl_untracked_usd: 55_000 },
      { token: USDC, day: day(2), tvl_usd: 60_000 },
      { token: WETH, day: day(2), tvl_usd: 40_000 },
      { token: GOOD, day: day(3), tvl_usd: 4500, tvl_untracked_usd: 4600 },
      { token: USDC, day: day(3), tvl_usd: 60_000 },
      { token: GOOD, day: day(9), tvl_usd: 4500 },
      { token: USDC, day: day(9), tvl_usd: 60_000 },
      { token: GOOD, day: day(10), tvl_usd: 0, tvl_untracked_usd: 4600 },
      { token: USDC, day: day(10), tvl_usd: 60_000 },
    ]);
  });

  it("volume_by_token: at the tracked price, at most the trusted volume of the token's trusted pools", async () => {
    const r = await rows(
      `SELECT token, strftime(day, '%Y-%m-%d') AS day, volume_usd FROM reports.volume_by_token ORDER BY day, token`,
    );
    expectRows(r, [
      // 310 GOOD × 5 = 1,550, over the 0.5 WETH × 2000 + 480 USDC = 1,480 paid for GOOD in p3 and p5.
      { token: GOOD, day: day(1), volume_usd: 1480 },
      // 91,000 SCAM × 0.1 = 9,100, over the 100 USDC of p2.
      { token: SCAM, day: day(1), volume_usd: 100 },
      { token: THIN, day: day(1), volume_usd: 0 },
      { token: USDC, day: day(1), volume_usd: 20_730 },
      // 100 × 4.5 = 450, under the 0.2 × 2000 + 450 = 850 paid in p3 and p5.
      { token: GOOD, day: day(2), volume_usd: 450 },
    ]);
  });

  it('smart_route_volume: a trusted side first, then a derived price, at most the trusted volume behind it', async () => {
    const r = await rows(
      `SELECT strftime(day, '%Y-%m-%d') AS day, orders, traders, volume_usd, volume_untracked_usd FROM reports.smart_route_volume ORDER BY day`,
    );
    expectRows(r, [
      // 40 USDC bought; 1e6 SCAM × 0.1 = 100,000 bounded by 100; 1 WETH × 2000 sold; THIN has no price, so the 20 GOOD
      // bought × 5 = 100. The DODO_POOL order is not a smart-route one.
      { day: day(1), orders: 4, traders: 3, volume_usd: 2240, volume_untracked_usd: 1e35 + 2008 },
      // 10 GOOD sold × 4.5 (THIN has no pool that day).
      { day: day(2), orders: 1, traders: 1, volume_usd: 45, volume_untracked_usd: 46 },
    ]);
  });

  it('suspicious_tokens: the scam token, its 1e30 upstream price beside the derived 0.1 and the pool behind it', async () => {
    const r = await rows(
      `SELECT token, strftime(day, '%Y-%m-%d') AS day, upstream_price_usd, derived_price_usd, times_derived, via_pool, via_symbol, via_backing_usd
       FROM reports.suspicious_tokens ORDER BY day, token`,
    );
    expectRows(r, [
      {
        token: SCAM,
        day: day(1),
        upstream_price_usd: 1e30,
        derived_price_usd: 0.1,
        times_derived: 1e31,
        via_pool: 'p2',
        via_symbol: 'USDC',
        via_backing_usd: 50_000,
      },
    ]);
  });
});

describe('pool-level tracked figures', () => {
  it('tvl_daily: trusted sides, and an untrusted side at its share of its tracked value; never doubled', async () => {
    const r = await rows(
      `SELECT pool, strftime(day, '%Y-%m-%d') AS day, tvl_usd, tvl_untracked_usd FROM reports.tvl_daily ORDER BY day, pool`,
    );
    expectRows(r, [
      { pool: 'p1', day: day(1), tvl_usd: 500_000, tvl_untracked_usd: 500_000 },
      // 50,000 USDC + 1e6 SCAM × 0.1 × (50,000 / 1e6, SCAM's bounded share) = 55,000 (×2 gave 100,000).
      { pool: 'p2', day: day(1), tvl_usd: 55_000, tvl_untracked_usd: 1e36 + 50_000 },
      // 100,000 of WETH + 10,000 GOOD × 5.
      { pool: 'p3', day: day(1), tvl_usd: 150_000, tvl_untracked_usd: 150_000 },
      // No trusted side.
      { pool: 'p4', day: day(1), tvl_usd: 0, tvl_untracked_usd: 9e36 + 10_000 },
      { pool: 'p5', day: day(1), tvl_usd: 65_000, tvl_untracked_usd: 65_000 },
      // THIN has no price: the trusted side alone (×2 gave 20,000).
      { pool: 'p6', day: day(1), tvl_usd: 10_000, tvl_untracked_usd: 11_500 },
      // 40,000 of WETH + 10,000 GOOD × 4.5.
      { pool: 'p3', day: day(2), tvl_usd: 85_000 },
      { pool: 'p5', day: day(2), tvl_usd: 64_500 },
      { pool: 'p5', day: day(3), tvl_usd: 64_500, tvl_untracked_usd: 64_600 },
      { pool: 'p5', day: day(9), tvl_usd: 64_500 },
      { pool: 'p5', day: day(10), tvl_usd: 60_000 },
    ]);
  });

  it('volume_daily and apy: volume and fees through trusted sides, fees over tracked TVL', async () => {
    const r = await rows(
      `SELECT v.pool, v.volume_usd, v.fees_usd, a.fee_apy FROM reports.volume_daily v
       JOIN reports.apy a ON a.chain_id = v.chain_id AND a.day = v.day AND a.pool = v.pool WHERE v.day = DATE '2026-01-01' ORDER BY v.pool`,
    );
    expectRows(r, [
      // Both trusted: (10 × 2000 + 20,000) / 2. Fee 60 USDC over 500,000, × 365.
      { pool: 'p1', volume_usd: 20_000, fees_usd: 60, fee_apy: (60 / 500_000) * 365 },
      { pool: 'p2', volume_usd: 100, fees_usd: 0.3, fee_apy: (0.3 / 55_000) * 365 },
      { pool: 'p3', volume_usd: 1000, fees_usd: 3, fee_apy: (3 / 150_000) * 365 },
      { pool: 'p4', volume_usd: 0, fees_usd: 0, fee_apy: null },
      { pool: 'p5', volume_usd: 480, fees_usd: 1.44, fee_apy: (1.44 / 65_000) * 365 },
      { pool: 'p6', volume_usd: 150, fees_usd: 0.45, fee_apy: (0.45 / 10_000) * 365 },
    ]);
  });

  it('tvl_list, top_pools, tvl_by_chain_type and suspicious_pools at the snapshot', async () => {
    expectRows(await rows('SELECT pool, rank, tvl_usd FROM reports.top_pools ORDER BY rank'), [
      { pool: 'p1', rank: 1, tvl_usd: 500_000 },
      // 100,000 of WETH + 10,000 GOOD × 4.
      { pool: 'p7', rank: 2, tvl_usd: 140_000 },
      // 50,000 USDC + 1e6 SCAM × 0.1 × 0.05.
      { pool: 'p2', rank: 3, tvl_usd: 55_000 },
      { pool: 'p4', rank: 4, tvl_usd: 0 },
    ]);
    expectRows(await rows('SELECT pool_type, pools, tvl_usd FROM reports.tvl_by_chain_type ORDER BY pool_type'), [
      { pool_type: 'DPP', pools: 1, tvl_usd: 140_000 },
      { pool_type: 'DSP', pools: 1, tvl_usd: 500_000 },
      { pool_type: 'DVM', pools: 2, tvl_usd: 55_000 },
    ]);
    expectRows(
      await rows('SELECT pool, tvl_usd, times_tracked, suspect_token FROM reports.suspicious_pools ORDER BY pool'),
      [
        { pool: 'p2', tvl_usd: 55_000, times_tracked: 1e36 / 55_000, suspect_token: SCAM },
        { pool: 'p4', tvl_usd: 0, times_tracked: null, suspect_token: SCAM },
      ],
    );
  });

  it('no pool counts more than its value at the tracked prices, and no token more than its backing', async () => {
    const over = await rows(
      `SELECT 'pool' AS what, pool AS id FROM reports.pool_day_tracked t
       WHERE t.tvl_usd > 1e-9 + (SELECT sum(s.reserve * coalesce(p.price_usd, 0)) FROM reports.pool_day_sides s
         JOIN reports.token_prices_daily p ON p.chain_id = s.chain_id AND p.day = s.day AND p.token = s.token
         WHERE s.chain_id = t.chain_id AND s.day = t.day AND s.pool = t.pool)
       UNION ALL SELECT 'token', token FROM reports.tvl_by_token WHERE tvl_usd > backing_usd`,
    );
    expect(over).toEqual([]);
  });
});
