/**
 * Tracked value of pools on a hand-written fixture (test/support/tracked-value-fixture.ts, for
 * sql/helpers/01-tracked.sql): every expected figure worked out by hand (the arithmetic in the comments), never by
 * running the views' SQL.
 */

import { describe, expect, it } from 'vitest';
import { day, expectRows, rows, SCAM, useTrackedValueFixture } from '../support/tracked-value-fixture.ts';

useTrackedValueFixture();

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
