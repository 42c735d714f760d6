/**
 * The figures of the dashboard, read from the lake through the report views (never the warehouse, so a run's lock is
 * never in the way) and from the status file (freshness). Every figure is a report's own number or a sum of them:
 *
 * - TVL per chain and day: `tvl_daily` (tracked) summed over the chain's pools, a pool without activity on a day
 *   counting with its last known TVL (`tvl_daily` has rows only for days with activity);
 * - volume per chain and day: `volume_daily.volume_usd` (tracked) summed over the chain's pools;
 * - top pools: `top_pools` (latest snapshot), with each pool's `tvl_daily` line;
 * - APY: the service's `transaction_base_apy` of `top_pools` beside the fee APY of the pool's latest `apy` row;
 * - volume by token: `volume_by_token.volume_usd` (tracked) summed over the days;
 * - freshness: the status file's last success and the block time of the committed data, per dataset and chain, with
 *   the last verification against the upstream's counters and the gaps it found.
 *
 * These are DODO's, drawn only where DODO is exported. The subgraphs added to the folder have their own part (rows per
 * dataset and per day or hour, freshness per deployment): `dashboard-subgraphs.ts`.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { subgraphOf } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import { lagSeconds } from '../store/freshness.ts';
import type { StatusEntry } from '../store/status-entries.ts';
import { readStatusFile } from '../store/status-file.ts';
import type { DashboardFilter } from './dashboard-filter.ts';
import { type SubgraphFigures, subgraphFigures } from './dashboard-subgraphs.ts';
import { untornRows } from './torn-read.ts';

/** One line or bar series per chain over a list of days. */
export interface ChainSeries {
  readonly days: string[];
  readonly series: { chain: string; chainId: number; values: (number | null)[] }[];
}

/** A pool of the top-pools table. */
export interface TopPool {
  readonly chain: string;
  readonly chainId: number;
  readonly pool: string;
  readonly type: string | null;
  readonly base: string | null;
  readonly quote: string | null;
  readonly tvlUsd: number | null;
  readonly tvlServiceUsd: number | null;
  /** The service's transaction APY (base side), a fraction. */
  readonly serviceApy: number | null;
  /** Tracked fees over tracked TVL, annualised, of the pool's latest day with activity; a fraction. */
  readonly feeApy: number | null;
  /**
   * Which of the two APYs the rule of `sql/helpers/02-plausible-apy.sql` flags (above 1,000% a year, or below 0): kept
   * in the table, marked, and left out of the chart so that they do not set its scale.
   */
  readonly implausible: { readonly service: boolean; readonly fee: boolean };
  /** Tracked TVL on each of `spark.days`. */
  readonly spark: { days: string[]; values: (number | null)[] };
}

/** Freshness of one dataset on one chain. */
export interface Freshness {
  readonly dataset: string;
  readonly chain: string;
  readonly chainId: number;
  readonly lastSuccess: string | null;
  readonly lastStatus: string | null;
  /** The time of the block the committed data were read at. */
  readonly blockTime: string | null;
  /** Seconds between that block and the dashboard's making. */
  readonly lagSecs: number | null;
  /** Its last verification against the upstream's counters: when, and how many groups differed (null: never). */
  readonly verification: { readonly at: string; readonly gaps: number } | null;
}

/** Every figure of the dashboard. */
export interface DashboardData {
  readonly generatedAt: string;
  readonly filter: DashboardFilter;
  readonly tvl: ChainSeries;
  readonly volume: ChainSeries;
  readonly topPools: TopPool[];
  readonly tokens: { symbol: string; token: string; chain: string; volumeUsd: number }[];
  /** DODO's datasets' freshness (the subgraphs' is per deployment, in `subgraphs`). */
  readonly freshness: Freshness[];
  /** The subgraphs added to the folder: rows per dataset and per day or hour, freshness per deployment. */
  readonly subgraphs: SubgraphFigures;
}

/** Pools in the table and the APY chart. */
export const TOP_POOLS = 10;
/** Tokens in the volume-by-token chart. */
export const TOP_TOKENS = 15;

type Row = Record<string, string | number | boolean | null>;

const rows = (conn: DuckDBConnection, sql: string) => untornRows<Row>(conn, sql);

const num = (v: unknown) => (v === null || v === undefined ? null : Number(v));
const str = (v: unknown) => (v === null || v === undefined ? null : String(v));

/** The filter's chains as a condition on `col`; chains are integers, so they are safe as literals. */
function chainCond(f: DashboardFilter, col = 'chain_id'): string[] {
  return f.chains?.length ? [`${col} IN (${f.chains.map((n) => String(Math.trunc(n))).join(', ')})`] : [];
}

/** The filter's days as conditions on `col`; days are checked to be YYYY-MM-DD first. */
function dayConds(f: DashboardFilter, col = 'day'): string[] {
  return [
    ...(f.from ? [`${col} >= DATE '${checkDay(f.from)}'`] : []),
    ...(f.to ? [`${col} <= DATE '${checkDay(f.to)}'`] : []),
  ];
}

/** A WHERE clause of conditions, or nothing. */
const where = (conds: string[]) => (conds.length ? `WHERE ${conds.join(' AND ')}` : '');
/** More conditions after a WHERE. */
const and = (conds: string[]) => conds.map((c) => ` AND ${c}`).join('');

function checkDay(d: string): string {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) throw new Error(`not a day: ${JSON.stringify(d)}`);
  return d;
}

/** Per chain and day series from rows of (chain_id, day, v), every chain over the same days. */
function chainSeries(rs: Row[]): ChainSeries {
  const days = [...new Set(rs.map((r) => String(r.day)))].sort();
  const chains = [...new Set(rs.map((r) => Number(r.chain_id)))].sort((a, b) => a - b);
  const at = new Map(rs.map((r) => [`${r.chain_id}/${r.day}`, num(r.v)]));
  return {
    days,
    series: chains.map((chainId) => ({
      chain: chainName(chainId),
      chainId,
      values: days.map((d) => at.get(`${chainId}/${d}`) ?? null),
    })),
  };
}

/**
 * Tracked TVL per chain and day: for each day the chain had activity on, the sum over the pools seen by then of each
 * pool's latest `tvl_daily` row on or before that day (an ASOF join).
 */
async function tvlByChain(conn: DuckDBConnection, f: DashboardFilter): Promise<ChainSeries> {
  const sql = `
    WITH t AS (SELECT chain_id, pool, day, tvl_usd FROM reports.tvl_daily ${where(chainCond(f))}),
    grid AS (
      SELECT d.chain_id, d.day, p.pool
      FROM (SELECT DISTINCT chain_id, day FROM t) d
      JOIN (SELECT chain_id, pool, min(day) AS first FROM t GROUP BY ALL) p ON p.chain_id = d.chain_id AND p.first <= d.day
    )
    SELECT grid.chain_id, grid.day::VARCHAR AS day, sum(t.tvl_usd) AS v
    FROM grid ASOF JOIN t ON grid.chain_id = t.chain_id AND grid.pool = t.pool AND grid.day >= t.day
    ${where(dayConds(f, 'grid.day'))}
    GROUP BY ALL ORDER BY ALL`;
  return chainSeries(await rows(conn, sql));
}

async function volumeByChain(conn: DuckDBConnection, f: DashboardFilter): Promise<ChainSeries> {
  return chainSeries(
    await rows(
      conn,
      `SELECT chain_id, day::VARCHAR AS day, sum(volume_usd) AS v FROM reports.volume_daily ${where([...chainCond(f), ...dayConds(f)])} GROUP BY ALL ORDER BY ALL`,
    ),
  );
}

async function topPools(conn: DuckDBConnection, f: DashboardFilter): Promise<TopPool[]> {
  const top = await rows(
    conn,
    `SELECT chain_id, pool, pool_type, base_token_symbol, quote_token_symbol, tvl_usd, tvl_service_usd, transaction_base_apy,
            coalesce(reports.implausible_apy(transaction_base_apy), false) AS service_implausible
     FROM reports.top_pools ${where(chainCond(f))}
     ORDER BY tvl_usd DESC NULLS LAST, chain_id, pool LIMIT ${TOP_POOLS}`,
  );
  if (!top.length) return [];
  // The pools' ids are upstream text: they reach SQL as bound values, never spliced.
  await conn.run('CREATE OR REPLACE TEMP TABLE dashboard_top (chain_id INTEGER, pool VARCHAR)');
  const insert = await conn.prepare('INSERT INTO dashboard_top VALUES ($1, $2)');
  for (const r of top) {
    insert.bindInteger(1, Number(r.chain_id));
    insert.bindVarchar(2, String(r.pool));
    await insert.run();
  }
  const keys = 'SELECT chain_id, pool FROM dashboard_top';
  const fee = new Map(
    (
      await rows(
        conn,
        `SELECT chain_id, pool, fee_apy, coalesce(reports.implausible_apy(fee_apy), false) AS fee_implausible
         FROM (SELECT chain_id, pool, arg_max(fee_apy, day) AS fee_apy FROM reports.apy
               WHERE (chain_id, pool) IN (${keys})${and(dayConds(f))}
               GROUP BY ALL)`,
      )
    ).map((r) => [`${r.chain_id}/${r.pool}`, { apy: num(r.fee_apy), implausible: r.fee_implausible === true }]),
  );
  const daily = await rows(
    conn,
    `SELECT chain_id, pool, day::VARCHAR AS day, tvl_usd FROM reports.tvl_daily
     WHERE (chain_id, pool) IN (${keys})${and(dayConds(f))}
     ORDER BY day`,
  );
  return top.map((r) => {
    const key = `${r.chain_id}/${r.pool}`;
    const mine = daily.filter((d) => `${d.chain_id}/${d.pool}` === key);
    return {
      chain: chainName(Number(r.chain_id)),
      chainId: Number(r.chain_id),
      pool: String(r.pool),
      type: str(r.pool_type),
      base: str(r.base_token_symbol),
      quote: str(r.quote_token_symbol),
      tvlUsd: num(r.tvl_usd),
      tvlServiceUsd: num(r.tvl_service_usd),
      serviceApy: num(r.transaction_base_apy),
      feeApy: fee.get(key)?.apy ?? null,
      implausible: { service: r.service_implausible === true, fee: fee.get(key)?.implausible === true },
      spark: { days: mine.map((d) => String(d.day)), values: mine.map((d) => num(d.tvl_usd)) },
    };
  });
}

async function tokenVolume(conn: DuckDBConnection, f: DashboardFilter): Promise<DashboardData['tokens']> {
  const rs = await rows(
    conn,
    `SELECT chain_id, token, any_value(symbol) AS symbol, sum(volume_usd) AS v FROM reports.volume_by_token ${where([...chainCond(f), ...dayConds(f)])}
     GROUP BY chain_id, token HAVING sum(volume_usd) > 0 ORDER BY v DESC, chain_id, token LIMIT ${TOP_TOKENS}`,
  );
  return rs.map((r) => ({
    symbol: str(r.symbol) ?? String(r.token),
    token: String(r.token),
    chain: chainName(Number(r.chain_id)),
    volumeUsd: Number(r.v),
  }));
}

function freshness(entries: readonly StatusEntry[], f: DashboardFilter, now: Date): Freshness[] {
  return entries
    .filter((e) => !subgraphOf(e.dataset.split('.')[0] ?? ''))
    .filter((e) => !f.chains?.length || f.chains.includes(e.chainId))
    .map((e) => ({
      dataset: e.dataset,
      chain: chainName(e.chainId),
      chainId: e.chainId,
      lastSuccess: e.lastSuccess,
      lastStatus: e.lastStatus,
      blockTime: e.blockTime,
      lagSecs: lagSeconds(e.blockTime, now.getTime() / 1000),
      verification: e.verification ? { at: e.verification.at, gaps: e.verification.gaps } : null,
    }));
}

/** Reads every figure of the dashboard from an open lake database and the data folder's status file. */
export async function dashboardData(
  conn: DuckDBConnection,
  dataDir: string,
  opts: { filter: DashboardFilter; now: Date },
): Promise<DashboardData> {
  const { filter: f, now } = opts;
  const entries = readStatusFile(dataDir)?.entries ?? [];
  return {
    generatedAt: now.toISOString(),
    filter: f,
    tvl: await tvlByChain(conn, f),
    volume: await volumeByChain(conn, f),
    topPools: await topPools(conn, f),
    tokens: await tokenVolume(conn, f),
    freshness: freshness(entries, f, now),
    subgraphs: await subgraphFigures(conn, dataDir, { filter: f, now, entries }),
  };
}

/** Whether DODO's figures have anything to show (its charts are drawn only then). */
export function hasDodoData(d: DashboardData): boolean {
  return d.tvl.days.length > 0 || d.volume.days.length > 0 || d.topPools.length > 0 || d.tokens.length > 0;
}

/** Whether the lake gave the dashboard anything to show. */
export function hasData(d: DashboardData): boolean {
  return hasDodoData(d) || d.subgraphs.datasets.length > 0;
}
