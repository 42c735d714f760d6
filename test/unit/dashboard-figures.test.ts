/**
 * The dashboard's figures from report tables written by hand (an in-memory DuckDB whose `reports` schema holds a few
 * rows each), so that every expected series is worked out here from the rules in `reports/dashboard-data.ts`'s header:
 * carried-forward TVL, sums per chain and day, the top pools with their latest fee APY and TVL line, token volume,
 * filters, and freshness from a status file.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dashboardData, hasData } from '../../src/reports/dashboard-data.ts';
import type { DashboardFilter } from '../../src/reports/dashboard-filter.ts';
import { writeStatusFile } from '../../src/store/status-file.ts';

let inst: DuckDBInstance;
let conn: DuckDBConnection;
let dir: string;
const NOW = new Date('2026-01-05T00:00:00Z');
const [D1, D2, D3] = ['2026-01-01', '2026-01-02', '2026-01-03'];

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-dash-'));
  inst = await DuckDBInstance.create(':memory:');
  conn = await inst.connect();
  await conn.run(`
    CREATE SCHEMA reports;
    ${readFileSync(new URL('../../sql/helpers/02-plausible-apy.sql', import.meta.url), 'utf8')}
    CREATE TABLE reports.tvl_daily (chain_id INTEGER, pool VARCHAR, day DATE, tvl_usd DOUBLE);
    INSERT INTO reports.tvl_daily VALUES
      (56, 'A', '${D1}', 100), (56, 'A', '${D3}', 150), (56, 'B', '${D2}', 50), (1, 'C', '${D1}', 7);
    CREATE TABLE reports.volume_daily (chain_id INTEGER, pool VARCHAR, day DATE, volume_usd DOUBLE);
    INSERT INTO reports.volume_daily VALUES
      (56, 'A', '${D1}', 10), (56, 'B', '${D1}', 5), (56, 'A', '${D2}', 1), (1, 'C', '${D3}', 2);
    CREATE TABLE reports.top_pools (chain_id INTEGER, pool VARCHAR, pool_type VARCHAR, base_token_symbol VARCHAR,
      quote_token_symbol VARCHAR, tvl_usd DOUBLE, tvl_service_usd DOUBLE, transaction_base_apy DOUBLE);
    INSERT INTO reports.top_pools VALUES
      (56, 'A', 'DVM', 'WBNB', 'USDT', 150, 160, 0.05),
      (56, 'B', NULL, NULL, NULL, NULL, NULL, NULL),
      (1, 'C', 'DSP', 'ETH', '<b>', 7, 8, 52.0);
    CREATE TABLE reports.apy (chain_id INTEGER, pool VARCHAR, day DATE, fee_apy DOUBLE);
    INSERT INTO reports.apy VALUES (56, 'A', '${D1}', 0.1), (56, 'A', '${D3}', 0.3), (56, 'B', '${D2}', NULL),
      (1, 'C', '${D3}', -0.2);
    CREATE TABLE reports.volume_by_token (chain_id INTEGER, token VARCHAR, symbol VARCHAR, day DATE, volume_usd DOUBLE);
    INSERT INTO reports.volume_by_token VALUES
      (56, 'T1', 'AAA', '${D1}', 5), (56, 'T1', 'AAA', '${D2}', 6), (56, 'T2', NULL, '${D1}', 20),
      (1, 'T3', 'Z', '${D1}', 0), (1, 'T4', 'W', '${D3}', 3);
  `);
  writeStatusFile(dir, {
    writtenAt: '2026-01-04T00:00:00.000Z',
    run: { id: 'r', pid: 1, startedAt: '2026-01-04T00:00:00.000Z', state: 'ended' },
    entries: [
      entry({ dataset: 'dodoex.swaps', chainId: 56, blockTime: '2026-01-04T23:00:00.000Z' }),
      entry({ dataset: 'dodoex.swaps', chainId: 1, blockTime: null, lastStatus: 'failed' }),
      // A block time after the dashboard's making (clocks differ): no negative age.
      entry({ dataset: 'dodoex.pairs', chainId: 56, blockTime: '2026-01-05T00:00:09.000Z' }),
    ],
  });
});
afterAll(() => {
  conn.closeSync();
  inst.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

function entry(e: { dataset: string; chainId: number; blockTime: string | null; lastStatus?: string }) {
  return {
    dataset: e.dataset,
    chainId: e.chainId,
    lastSuccess: '2026-01-04T00:00:00.000Z',
    lastStatus: e.lastStatus ?? 'ok',
    lastError: null,
    rows: 1,
    block: 1,
    blockTime: e.blockTime,
  };
}

const figures = (filter: DashboardFilter, data = dir) => dashboardData(conn, data, { filter, now: NOW });

describe('the dashboard figures from report tables', () => {
  it('TVL carries each pool\u2019s last known value forward over the chain\u2019s days; volume sums the pools', async () => {
    const d = await figures({});
    expect(d.generatedAt).toBe('2026-01-05T00:00:00.000Z');
    expect(d.tvl).toEqual({
      days: [D1, D2, D3],
      series: [
        { chain: 'ethereum', chainId: 1, values: [7, null, null] },
        { chain: 'bsc', chainId: 56, values: [100, 150, 200] },
      ],
    });
    expect(d.volume).toEqual({
      days: [D1, D2, D3],
      series: [
        { chain: 'ethereum', chainId: 1, values: [null, null, 2] },
        { chain: 'bsc', chainId: 56, values: [15, 1, null] },
      ],
    });
  });

  it('top pools by tracked TVL (unknown last), each with its latest fee APY and its TVL line', async () => {
    const d = await figures({});
    expect(d.topPools).toEqual([
      {
        chain: 'bsc',
        chainId: 56,
        pool: 'A',
        type: 'DVM',
        base: 'WBNB',
        quote: 'USDT',
        tvlUsd: 150,
        tvlServiceUsd: 160,
        serviceApy: 0.05,
        feeApy: 0.3,
        implausible: { service: false, fee: false },
        spark: { days: [D1, D3], values: [100, 150] },
      },
      {
        chain: 'ethereum',
        chainId: 1,
        pool: 'C',
        type: 'DSP',
        base: 'ETH',
        quote: '<b>',
        tvlUsd: 7,
        tvlServiceUsd: 8,
        // 5,200% a year from the service, a negative fee APY: both flagged, both kept.
        serviceApy: 52,
        feeApy: -0.2,
        implausible: { service: true, fee: true },
        spark: { days: [D1], values: [7] },
      },
      {
        chain: 'bsc',
        chainId: 56,
        pool: 'B',
        type: null,
        base: null,
        quote: null,
        tvlUsd: null,
        tvlServiceUsd: null,
        serviceApy: null,
        feeApy: null,
        implausible: { service: false, fee: false },
        spark: { days: [D2], values: [50] },
      },
    ]);
  });

  it('token volume sums the days, drops tokens without volume, and names a token without symbol by its id', async () => {
    expect((await figures({})).tokens).toEqual([
      { symbol: 'T2', token: 'T2', chain: 'bsc', volumeUsd: 20 },
      { symbol: 'AAA', token: 'T1', chain: 'bsc', volumeUsd: 11 },
      { symbol: 'W', token: 'T4', chain: 'ethereum', volumeUsd: 3 },
    ]);
  });

  it('a filter keeps its chains and days, the TVL carried in from before the first day shown', async () => {
    const d = await figures({ chains: [56], from: D2 });
    expect(d.filter).toEqual({ chains: [56], from: D2 });
    expect(d.tvl).toEqual({ days: [D2, D3], series: [{ chain: 'bsc', chainId: 56, values: [150, 200] }] });
    expect(d.volume).toEqual({ days: [D2], series: [{ chain: 'bsc', chainId: 56, values: [1] }] });
    expect(d.topPools.map((p) => [p.pool, p.feeApy, p.spark.days])).toEqual([
      ['A', 0.3, [D3]],
      ['B', null, [D2]],
    ]);
    expect(d.tokens).toEqual([{ symbol: 'AAA', token: 'T1', chain: 'bsc', volumeUsd: 6 }]);
    expect(d.freshness.map((f) => [f.dataset, f.chainId])).toEqual([
      ['dodoex.swaps', 56],
      ['dodoex.pairs', 56],
    ]);
    const until = await figures({ to: D2 });
    expect(until.tvl.days).toEqual([D1, D2]);
    expect(until.topPools.find((p) => p.pool === 'A')!.feeApy).toBe(0.1);
    expect(until.tokens.map((t) => [t.token, t.volumeUsd])).toEqual([
      ['T2', 20],
      ['T1', 11],
    ]);
  });

  it('freshness is the age of each entry\u2019s block time, never negative, with nothing when there is no status file', async () => {
    expect((await figures({})).freshness).toEqual([
      {
        dataset: 'dodoex.swaps',
        chain: 'bsc',
        chainId: 56,
        lastSuccess: '2026-01-04T00:00:00.000Z',
        lastStatus: 'ok',
        blockTime: '2026-01-04T23:00:00.000Z',
        lagSecs: 3600,
        verification: null,
      },
      {
        dataset: 'dodoex.swaps',
        chain: 'ethereum',
        chainId: 1,
        lastSuccess: '2026-01-04T00:00:00.000Z',
        lastStatus: 'failed',
        blockTime: null,
        lagSecs: null,
        verification: null,
      },
      {
        dataset: 'dodoex.pairs',
        chain: 'bsc',
        chainId: 56,
        lastSuccess: '2026-01-04T00:00:00.000Z',
        lastStatus: 'ok',
        blockTime: '2026-01-05T00:00:09.000Z',
        lagSecs: 0,
        verification: null,
      },
    ]);
    expect((await figures({}, join(dir, 'none'))).freshness).toEqual([]);
  });

  it('refuses a day that is not YYYY-MM-DD before it reaches SQL', async () => {
    await expect(figures({ from: "2026-01-01' OR 1=1 --" })).rejects.toThrow('not a day: "2026-01-01\' OR 1=1 --"');
    await expect(figures({ to: 'x2026-01-01' })).rejects.toThrow('not a day: "x2026-01-01"');
  });

  it('has data when any of its four figures, or a subgraph dataset, has something', () => {
    const none = { tvl: { days: [], series: [] }, volume: { days: [], series: [] }, topPools: [], tokens: [] };
    const subgraphs = { datasets: [], activity: { unit: 'day' as const, buckets: [], series: [] }, deployments: [] };
    const base = { generatedAt: '', filter: {}, freshness: [], subgraphs };
    expect(hasData({ ...base, ...none })).toBe(false);
    expect(hasData({ ...base, ...none, tvl: { days: [D1], series: [] } })).toBe(true);
    expect(hasData({ ...base, ...none, volume: { days: [D1], series: [] } })).toBe(true);
    expect(hasData({ ...base, ...none, topPools: [{} as never] })).toBe(true);
    expect(hasData({ ...base, ...none, tokens: [{ symbol: 's', token: 't', chain: 'bsc', volumeUsd: 1 }] })).toBe(true);
    expect(hasData({ ...base, ...none, subgraphs: { ...subgraphs, datasets: [{} as never] } })).toBe(true);
  });
});
