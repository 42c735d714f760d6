/**
 * Tracked value on a hand-written fixture (test/support/tracked-value-fixture.ts, for sql/helpers/01-tracked.sql):
 * every expected figure worked out by hand beside the rows it comes from (the arithmetic in the comments), never by
 * running the views' SQL. This file: derived prices and token-level figures; pool-level figures are in
 * tracked-value-pools.test.ts.
 */

import { describe, it } from 'vitest';
import {
  day,
  expectRows,
  GOOD,
  rows,
  SCAM,
  THIN,
  USDC,
  useTrackedValueFixture,
  WETH,
} from '../support/tracked-value-fixture.ts';

useTrackedValueFixture();

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
