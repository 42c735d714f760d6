/**
 * The dashboard's figures of a subgraph folder, over a lake of Parquet files written here (DuckDB's COPY, in the
 * lake's layout) for a subgraph registered from a schema with an event, a mutable entity with a `…Timestamp` field, an
 * entity with no time, a timeseries and an aggregation. Every expected count is worked out here from the rows listed,
 * never from the module's SQL.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { registerSubgraphs } from '../../src/catalog/subgraphs.ts';
import { defineDatasetViews } from '../../src/lake/lake-db.ts';
import { chainDir, writeLayoutFile } from '../../src/lake/layout.ts';
import { dashboardData } from '../../src/reports/dashboard-data.ts';
import { subgraphFigures } from '../../src/reports/dashboard-subgraphs.ts';
import type { StatusEntry } from '../../src/store/status-entries.ts';
import { writeStatusFile } from '../../src/store/status-file.ts';
import { lit } from '../../src/util/sql.ts';

const SCHEMA = `
type Swap @entity(immutable: true) { id: ID! timestamp: BigInt! amount: BigDecimal! }
type Pool @entity { id: ID! name: String! createdAtTimestamp: BigInt! }
type Note @entity { id: ID! text: String! }
type Tick @entity(timeseries: true) { id: Int8! timestamp: Timestamp! price: BigDecimal! }
type Stat @aggregation(intervals: ["hour", "day"], source: "Tick") {
  id: Int8! timestamp: Timestamp! total: BigDecimal! @aggregate(fn: "sum", arg: "price")
}`;

const NOW = new Date('2026-01-10T00:00:00Z');
const T0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
const H = 3600;
const DAY = 86_400;

/** Swaps: (chain, seconds). Day 1: 3 on ethereum, 1 on bsc; day 3: 2 on ethereum; one at 0 and one in 2030. */
const SWAPS: [number, number][] = [
  [1, T0 + 10],
  [1, T0 + 2 * H],
  [1, T0 + 23 * H],
  [56, T0 + 5 * H],
  [1, T0 + 2 * DAY + 1],
  [1, T0 + 2 * DAY + 7 * H],
  [1, 0],
  [1, Date.parse('2030-01-01T00:00:00Z') / 1000],
];
/** Pools: created on day 2 (two) and day 4 (one), all on ethereum. */
const POOLS: number[] = [T0 + DAY + 1, T0 + DAY + 2, T0 + 3 * DAY];
/** Hourly stats, microseconds: three hours of day 1 on ethereum. */
const STATS: number[] = [T0, T0 + H, T0 + 2 * H].map((s) => s * 1_000_000);

let dir: string;
let inst: DuckDBInstance;
let conn: DuckDBConnection;

async function writeFile(table: string, chainId: number, sql: string, month?: string) {
  const ds = findDataset(`dash.${table}`)!;
  const folder = join(chainDir(join(dir, 'lake'), { ds, chainId }, 'data'), ...(month ? [`month=${month}`] : []));
  mkdirSync(folder, { recursive: true });
  await conn.run(`COPY (${sql}) TO ${lit(join(folder, 'part-00000.parquet'))} (FORMAT parquet)`);
}

const values = (rows: string[]) => `SELECT * FROM (VALUES ${rows.join(', ')})`;

beforeAll(async () => {
  registerSubgraphs([
    {
      name: 'dash',
      schema: SCHEMA,
      deployments: [
        { chainId: 1, url: 'https://gateway.example/api/0123456789abcdef/subgraphs/id/Qm1' },
        { chainId: 56, url: 'http://127.0.0.1:9/subgraphs/name/dash' },
      ],
    },
  ]);
  dir = mkdtempSync(join(tmpdir(), 'pe-dash-sg-'));
  inst = await DuckDBInstance.create(':memory:');
  conn = await inst.connect();
  for (const chain of [1, 56]) {
    const mine = SWAPS.map(([c, s], i) => [c, s, i] as const).filter(([c]) => c === chain);
    await writeFile(
      'swaps',
      chain,
      `SELECT * FROM (${values(mine.map(([, s, i]) => `('s${i}', ${s}::BIGINT, 1.5::DOUBLE, ${chain})`))}) t(id, "timestamp", amount, chain_id)`,
      '2026-01',
    );
  }
  await writeFile(
    'pools',
    1,
    `SELECT * FROM (${values(POOLS.map((s, i) => `('p${i}', 'x', ${s}::DOUBLE, 1)`))}) t(id, name, created_at_timestamp, chain_id)`,
  );
  await writeFile('notes', 1, "SELECT 'n1' AS id, 'hi' AS text, 1 AS chain_id UNION ALL SELECT 'n2', 'yo', 1");
  await writeFile(
    'stats_hour',
    1,
    `SELECT * FROM (${values(STATS.map((us, i) => `('${i}', ${us}::BIGINT, 2.0::DOUBLE, 1)`))}) t(id, "timestamp", total, chain_id)`,
  );
  writeLayoutFile(join(dir, 'lake'));
  await defineDatasetViews(conn, dir);
});
afterAll(() => {
  conn?.closeSync();
  inst?.closeSync();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const entry = (dataset: string, chainId: number, over: Partial<StatusEntry>): StatusEntry => ({
  dataset,
  chainId,
  lastSuccess: '2026-01-09T00:00:00.000Z',
  lastStatus: 'ok',
  lastError: null,
  rows: 1,
  block: 100,
  blockTime: '2026-01-09T23:00:00.000Z',
  ...over,
});

describe('the subgraph figures of the dashboard', () => {
  it('counts rows per dataset and chain, with the range of its time field and the rows outside 2009 to now', async () => {
    const f = await subgraphFigures(conn, dir, { filter: {}, now: NOW, entries: [] });
    const by = new Map(f.datasets.map((d) => [d.dataset, d]));
    expect([...by.keys()].sort()).toEqual(['dash.notes', 'dash.pools', 'dash.stats_hour', 'dash.swaps']);
    expect(by.get('dash.swaps')).toEqual({
      dataset: 'dash.swaps',
      subgraph: 'dash',
      kind: 'event',
      chains: [
        { chain: 'ethereum', rows: 7 },
        { chain: 'bsc', rows: 1 },
      ],
      rows: 8,
      timeField: 'timestamp',
      first: '2026-01-01T00:00:10.000Z',
      last: '2026-01-03T07:00:00.000Z',
      outside: 2,
    });
    expect(by.get('dash.pools')).toMatchObject({ kind: 'mutable', rows: 3, timeField: 'createdAtTimestamp' });
    expect(by.get('dash.pools')?.last).toBe('2026-01-04T00:00:00.000Z');
    expect(by.get('dash.notes')).toMatchObject({ rows: 2, timeField: null, first: null, last: null, outside: 0 });
    // A Timestamp is microseconds.
    expect(by.get('dash.stats_hour')).toMatchObject({
      kind: 'aggregation (hour)',
      first: '2026-01-01T00:00:00.000Z',
      last: '2026-01-01T02:00:00.000Z',
    });
  });

  it('draws rows per day over every day from the first time to the last, each dataset with a time field', async () => {
    const { activity } = await subgraphFigures(conn, dir, { filter: {}, now: NOW, entries: [] });
    expect(activity.unit).toBe('day');
    expect(activity.buckets).toEqual(['2026-01-01', '2026-01-02', '2026-01-03', '2026-01-04']);
    const series = Object.fromEntries(activity.series.map((s) => [s.dataset, s.values]));
    // Oracle: the rows listed above, counted by day by hand.
    expect(series).toEqual({
      'dash.swaps': [4, 0, 2, 0],
      'dash.pools': [0, 2, 0, 1],
      'dash.stats_hour': [3, 0, 0, 0],
    });
    // The busiest first.
    expect(activity.series.map((s) => s.dataset)).toEqual(['dash.swaps', 'dash.pools', 'dash.stats_hour']);
  });

  it('draws rows per hour when the times shown span two days at most, and keeps the filter', async () => {
    const { activity, datasets } = await subgraphFigures(conn, dir, {
      filter: { chains: [1], to: '2026-01-01' },
      now: NOW,
      entries: [],
    });
    expect(activity.unit).toBe('hour');
    expect(activity.buckets[0]).toBe('2026-01-01 00:00');
    expect(activity.buckets.at(-1)).toBe('2026-01-01 23:00');
    const swaps = activity.series.find((s) => s.dataset === 'dash.swaps')!.values;
    expect(swaps.length).toBe(24);
    // Ethereum's day-1 swaps at 00:00:10, 02:00 and 23:00 (bsc's at 05:00 filtered out).
    expect(swaps.flatMap((n, h) => (n ? [[h, n]] : []))).toEqual([
      [0, 1],
      [2, 1],
      [23, 1],
    ]);
    // The one in 2030 is after the filter's last day; the one at second 0 has no first day to stop it: counted,
    // outside the range drawn.
    expect(datasets.find((d) => d.dataset === 'dash.swaps')).toMatchObject({ rows: 4, outside: 1 });
    // Pools were all created after the last day shown; notes have no time and the filter does not reach them.
    expect(datasets.find((d) => d.dataset === 'dash.pools')).toBeUndefined();
    expect(datasets.find((d) => d.dataset === 'dash.notes')?.rows).toBe(2);
  });

  it('gives each deployment the freshness of its most behind dataset, its endpoint without its key', async () => {
    const entries = [
      entry('dash.swaps', 1, { block: 120, blockTime: '2026-01-09T23:00:00.000Z' }),
      entry('dash.pools', 1, {
        block: 100,
        blockTime: '2026-01-09T22:00:00.000Z',
        lastSuccess: '2026-01-09T01:00:00.000Z',
      }),
      entry('dash.notes', 56, { blockTime: null, block: null, lastSuccess: null, lastStatus: 'failed' }),
      // Not served by the deployment at its last task: the others' freshness is the deployment's all the same.
      entry('dash.notes', 1, { blockTime: null, block: null, lastSuccess: null, lastStatus: 'unavailable' }),
      entry('dodoex.swaps', 1, {}),
    ];
    const { deployments } = await subgraphFigures(conn, dir, { filter: {}, now: NOW, entries });
    expect(deployments).toEqual([
      {
        subgraph: 'dash',
        chain: 'ethereum',
        chainId: 1,
        endpoint: 'https://gateway.example/api/***/subgraphs/id/Qm1',
        datasets: 3,
        failed: [],
        unavailable: ['dash.notes'],
        blocks: { min: 100, max: 120 },
        blockTime: '2026-01-09T22:00:00.000Z',
        lagSecs: 2 * H,
        lastSuccess: '2026-01-09T01:00:00.000Z',
      },
      {
        subgraph: 'dash',
        chain: 'bsc',
        chainId: 56,
        endpoint: 'http://127.0.0.1:9/subgraphs/name/dash',
        datasets: 1,
        failed: ['dash.notes'],
        unavailable: [],
        blocks: null,
        blockTime: null,
        lagSecs: null,
        lastSuccess: null,
      },
    ]);
    expect(JSON.stringify(deployments)).not.toContain('0123456789abcdef');
  });

  it('is data of the page, and DODO freshness leaves the subgraphs out', async () => {
    writeStatusFile(dir, {
      writtenAt: NOW.toISOString(),
      run: { id: 'r', pid: 1, startedAt: NOW.toISOString(), state: 'ended' },
      entries: [entry('dash.swaps', 1, {}), entry('dodoex.swaps', 56, {})],
    });
    await conn.run('CREATE SCHEMA IF NOT EXISTS reports');
    await conn.run(readFileSync(new URL('../../sql/helpers/02-plausible-apy.sql', import.meta.url), 'utf8'));
    for (const [t, cols] of [
      ['tvl_daily', 'chain_id INTEGER, pool VARCHAR, day DATE, tvl_usd DOUBLE'],
      ['volume_daily', 'chain_id INTEGER, pool VARCHAR, day DATE, volume_usd DOUBLE'],
      [
        'top_pools',
        'chain_id INTEGER, pool VARCHAR, pool_type VARCHAR, base_token_symbol VARCHAR, quote_token_symbol VARCHAR, tvl_usd DOUBLE, tvl_service_usd DOUBLE, transaction_base_apy DOUBLE',
      ],
      ['apy', 'chain_id INTEGER, pool VARCHAR, day DATE, fee_apy DOUBLE'],
      ['volume_by_token', 'chain_id INTEGER, token VARCHAR, symbol VARCHAR, day DATE, volume_usd DOUBLE'],
    ])
      await conn.run(`CREATE OR REPLACE TABLE reports.${t} (${cols})`);
    const d = await dashboardData(conn, dir, { filter: {}, now: NOW });
    expect(d.freshness.map((e) => e.dataset)).toEqual(['dodoex.swaps']);
    expect(d.subgraphs.deployments.map((e) => `${e.subgraph}/${e.chain}`)).toEqual(['dash/ethereum']);
    expect(d.subgraphs.datasets.length).toBe(4);
  });
});
