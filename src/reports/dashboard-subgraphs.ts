/**
 * The dashboard's figures of the subgraphs added to a data folder (any schema): what a subgraph user can look at without
 * DODO's reports.
 *
 * - Rows per dataset: the lake view's rows (a mutable entity's current state, one row per id), per chain, with the first
 *   and last time of its time field.
 * - Rows per day (or per hour, when the times shown span at most two days) of each dataset with a time field: its
 *   `timestamp` (an aggregation's bucket, an event's or a timeseries' time), else its first scalar field whose name
 *   ends in `timestamp` (`createdAtTimestamp`). A `Timestamp` is microseconds, an `Int`/`BigInt` seconds, as
 *   graph-node stores them. Times before 2009-01-03 (the first block of any chain) or after the page's making are
 *   counted apart (`outside`), so that a zero or a garbage time sets no scale.
 * - Freshness per deployment (subgraph and chain): from the status file, the oldest committed block time of its
 *   datasets (the deployment is as fresh as its most behind dataset), the endpoint's label (never a key), the last
 *   success and the datasets whose last task failed.
 */
import type { DuckDBConnection } from '@duckdb/node-api';
import { DATASETS, type Dataset } from '../catalog/catalog.ts';
import { deploymentUrl, subgraphEntity, subgraphOf } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import { viewsWithFiles } from '../lake/lake-db.ts';
import { lagSeconds } from '../store/freshness.ts';
import type { StatusEntry } from '../store/status-entries.ts';
import { urlEndpoint } from '../upstream/routes.ts';
import { maxOf, minOf } from '../util/extremes.ts';
import { qt } from '../util/sql.ts';
import type { DashboardFilter } from './dashboard-filter.ts';
import { untornRows } from './torn-read.ts';

/** One dataset of a subgraph in the lake. */
export interface SubgraphDataset {
  readonly dataset: string;
  readonly subgraph: string;
  readonly kind: string;
  /** Rows per chain (names), in chain id order. */
  readonly chains: { chain: string; rows: number }[];
  readonly rows: number;
  /** The field its times come from, or null when it has none. */
  readonly timeField: string | null;
  /** The first and last time (ISO) within the plausible range, and the rows whose time is outside it (or null). */
  readonly first: string | null;
  readonly last: string | null;
  readonly outside: number;
}

/** Rows per day or hour of the datasets with a time field, the busiest first. */
export interface Activity {
  readonly unit: 'day' | 'hour';
  /** The buckets' starts, `YYYY-MM-DD` or `YYYY-MM-DD HH:00` (UTC). */
  readonly buckets: string[];
  readonly series: { dataset: string; values: number[] }[];
}

/** The freshness of one deployment (a subgraph on a chain). */
export interface DeploymentFreshness {
  readonly subgraph: string;
  readonly chain: string;
  readonly chainId: number;
  /** Where it is read from: the endpoint's printable label (a key in its path shown as `***`). */
  readonly endpoint: string | null;
  readonly datasets: number;
  readonly failed: string[];
  /** Its datasets the deployment served no collection of at their last task (their freshness is not its). */
  readonly unavailable: string[];
  /** The oldest and newest block its datasets' committed rows were read at. */
  readonly blocks: { readonly min: number; readonly max: number } | null;
  readonly blockTime: string | null;
  readonly lagSecs: number | null;
  readonly lastSuccess: string | null;
}

/** The subgraphs' part of the dashboard. */
export interface SubgraphFigures {
  readonly datasets: SubgraphDataset[];
  readonly activity: Activity;
  readonly deployments: DeploymentFreshness[];
}

/** Datasets drawn in the activity chart (the others are in the table). */
export const ACTIVITY_SERIES = 12;
/** 2009-01-03: no chain has a block before it. */
const EARLIEST = 1_230_940_800;
const DAY = 86_400;
const HOUR = 3_600;

/** The field of a subgraph dataset's times and its GraphQL type, or undefined. */
function timeFieldOf(ds: Dataset): { field: string; type: string } | undefined {
  const e = subgraphEntity(ds.schema, ds.entity);
  if (!e) return undefined;
  const scalar = (t: string) => ['Int', 'Int8', 'BigInt', 'Timestamp'].includes(t);
  const f =
    [e.field.get('timestamp')].find((x) => x && !x.list && scalar(x.type)) ??
    e.fields.find((x) => /timestamp$/i.test(x.name) && !x.list && !x.ref && scalar(x.type));
  return f && ds.columns.some((c) => c.field === f.name) ? { field: f.name, type: f.type } : undefined;
}

type Row = Record<string, string | number | boolean | null>;

const rows = (conn: DuckDBConnection, sql: string) => untornRows<Row>(conn, sql);

/** The SQL of a row's time in Unix seconds, by the view column's own type (a later layout may type it as a time). */
async function secondsExpr(conn: DuckDBConnection, ds: Dataset, field: { field: string; type: string }) {
  const column = ds.columns.find((c) => c.field === field.field)!.column;
  const described = await rows(conn, `DESCRIBE ${qt(ds.table)}`);
  const type = String(described.find((r) => r.column_name === column)?.column_type ?? '');
  const col = qt(column);
  if (type.startsWith('TIMESTAMP')) return `CAST(epoch(${col}) AS BIGINT)`;
  const whole = `TRY_CAST(${col} AS BIGINT)`;
  return field.type === 'Timestamp' ? `(${whole} // 1000000)` : whole;
}

/** Conditions of the filter on a dataset's chains (integers, safe as literals). */
function chainConds(f: DashboardFilter): string[] {
  return f.chains?.length ? [`chain_id IN (${f.chains.map((n) => String(Math.trunc(n))).join(', ')})`] : [];
}

/** Conditions of the filter's days on a time in seconds. */
function dayConds(f: DashboardFilter, secs: string): string[] {
  const day = (d: string) => {
    if (!/^\d{4}-\d{2}-\d{2}$/.test(d)) throw new Error(`not a day: ${JSON.stringify(d)}`);
    return Date.parse(`${d}T00:00:00Z`) / 1000;
  };
  return [...(f.from ? [`${secs} >= ${day(f.from)}`] : []), ...(f.to ? [`${secs} < ${day(f.to) + DAY}`] : [])];
}

const where = (conds: string[]) => (conds.length ? `WHERE ${conds.join(' AND ')}` : '');
const iso = (secs: number | null) => (secs === null ? null : new Date(secs * 1000).toISOString());

/** A dataset's rows per chain, its time range and the rows outside the plausible range. */
async function datasetFigures(
  conn: DuckDBConnection,
  ds: Dataset,
  opts: { filter: DashboardFilter; nowSecs: number },
): Promise<{ figures: SubgraphDataset; secs?: string }> {
  const field = timeFieldOf(ds);
  const secs = field ? await secondsExpr(conn, ds, field) : undefined;
  const plausible = secs ? `${secs} BETWEEN ${EARLIEST} AND ${Math.ceil(opts.nowSecs)}` : 'false';
  const conds = [...chainConds(opts.filter), ...(secs ? dayConds(opts.filter, secs) : [])];
  const perChain = await rows(
    conn,
    `SELECT chain_id, count(*) AS n, count(*) FILTER (WHERE NOT coalesce(${plausible}, false)) AS outside,
            min(${secs ?? 'NULL'}) FILTER (WHERE ${plausible}) AS lo, max(${secs ?? 'NULL'}) FILTER (WHERE ${plausible}) AS hi
     FROM ${qt(ds.table)} ${where(conds)} GROUP BY chain_id ORDER BY chain_id`,
  );
  const los = perChain
    .map((r) => r.lo)
    .filter((v) => v !== null)
    .map(Number);
  const his = perChain
    .map((r) => r.hi)
    .filter((v) => v !== null)
    .map(Number);
  const figures: SubgraphDataset = {
    dataset: ds.name,
    subgraph: ds.schema,
    kind: ds.aggregation ? `aggregation (${ds.aggregation.interval})` : ds.kind,
    chains: perChain.map((r) => ({ chain: chainName(Number(r.chain_id)), rows: Number(r.n) })),
    rows: perChain.reduce((s, r) => s + Number(r.n), 0),
    timeField: field?.field ?? null,
    first: los.length ? iso(minOf(los)) : null,
    last: his.length ? iso(maxOf(his)) : null,
    outside: secs ? perChain.reduce((s, r) => s + Number(r.outside), 0) : 0,
  };
  return secs ? { figures, secs } : { figures };
}

/** Rows per bucket of the busiest datasets with times, every series over the same buckets. */
async function activity(
  conn: DuckDBConnection,
  timed: { ds: Dataset; secs: string; rows: number }[],
  opts: { filter: DashboardFilter; nowSecs: number; range: { lo: number; hi: number } | undefined },
): Promise<Activity> {
  const { range } = opts;
  const unit = range && range.hi - range.lo <= 2 * DAY ? 'hour' : 'day';
  if (!range) return { unit, buckets: [], series: [] };
  const size = unit === 'day' ? DAY : HOUR;
  const first = Math.floor(range.lo / size);
  const count = Math.floor(range.hi / size) - first + 1;
  const busiest = [...timed].sort((a, b) => b.rows - a.rows || (a.ds.name < b.ds.name ? -1 : 1));
  const series: Activity['series'] = [];
  for (const t of busiest.slice(0, ACTIVITY_SERIES)) {
    const values = new Array<number>(count).fill(0);
    const plausible = `${t.secs} BETWEEN ${EARLIEST} AND ${Math.ceil(opts.nowSecs)}`;
    const conds = [...chainConds(opts.filter), ...dayConds(opts.filter, t.secs), plausible];
    for (const r of await rows(
      conn,
      `SELECT ${t.secs} // ${size} AS b, count(*) AS n FROM ${qt(t.ds.table)} ${where(conds)} GROUP BY 1`,
    ))
      values[Number(r.b) - first] = Number(r.n);
    series.push({ dataset: t.ds.name, values });
  }
  const buckets = Array.from({ length: count }, (_, i) => {
    const text = new Date((first + i) * size * 1000).toISOString();
    return unit === 'day' ? text.slice(0, 10) : `${text.slice(0, 10)} ${text.slice(11, 13)}:00`;
  });
  return { unit, buckets, series };
}

/** Freshness per deployment from the status file's entries of subgraph datasets. */
function deploymentFreshness(
  entries: readonly StatusEntry[],
  opts: { filter: DashboardFilter; nowSecs: number },
): DeploymentFreshness[] {
  const groups = new Map<string, StatusEntry[]>();
  for (const e of entries) {
    const schema = e.dataset.split('.')[0] ?? '';
    if (!subgraphOf(schema)) continue;
    if (opts.filter.chains?.length && !opts.filter.chains.includes(e.chainId)) continue;
    const key = `${schema}/${e.chainId}`;
    const group = groups.get(key);
    if (group) group.push(e);
    else groups.set(key, [e]);
  }
  return [...groups.values()]
    .map((es): DeploymentFreshness => {
      const schema = es[0]!.dataset.split('.')[0]!;
      const chainId = es[0]!.chainId;
      const url = deploymentUrl(schema, chainId);
      const blocks = es.map((e) => e.block).filter((b): b is number => b !== null);
      // The oldest block time: a deployment is as fresh as its most behind dataset it serves (one it does not serve,
      // or one never exported yet, says nothing of its freshness: shown apart).
      const served = es.filter((e) => e.lastStatus !== 'unavailable');
      const times = served.map((e) => e.blockTime).filter((t): t is string => t !== null);
      const oldest = times.length ? times.sort()[0]! : null;
      const successes = es
        .map((e) => e.lastSuccess)
        .filter((s): s is string => s !== null)
        .sort();
      return {
        subgraph: schema,
        chain: chainName(chainId),
        chainId,
        endpoint: url === undefined ? null : urlEndpoint(url).label,
        datasets: es.length,
        failed: es
          .filter((e) => e.lastStatus === 'failed')
          .map((e) => e.dataset)
          .sort(),
        unavailable: es
          .filter((e) => e.lastStatus === 'unavailable')
          .map((e) => e.dataset)
          .sort(),
        blocks: blocks.length ? { min: minOf(blocks), max: maxOf(blocks) } : null,
        blockTime: oldest,
        lagSecs: lagSeconds(oldest, opts.nowSecs),
        lastSuccess: successes.at(-1) ?? null,
      };
    })
    .sort((a, b) => (a.subgraph < b.subgraph ? -1 : a.subgraph > b.subgraph ? 1 : a.chainId - b.chainId));
}

/** Every figure of the subgraphs' part, read from an open lake database and the status file's entries. */
export async function subgraphFigures(
  conn: DuckDBConnection,
  dataDir: string,
  opts: { filter: DashboardFilter; now: Date; entries: readonly StatusEntry[] },
): Promise<SubgraphFigures> {
  const nowSecs = opts.now.getTime() / 1000;
  const withFiles = new Set(viewsWithFiles(dataDir));
  const datasets: SubgraphDataset[] = [];
  const timed: { ds: Dataset; secs: string; rows: number }[] = [];
  for (const ds of DATASETS) {
    if (!subgraphOf(ds.schema) || !withFiles.has(ds.table)) continue;
    const { figures, secs } = await datasetFigures(conn, ds, { filter: opts.filter, nowSecs });
    if (figures.rows === 0) continue;
    datasets.push(figures);
    if (secs && figures.first !== null) timed.push({ ds, secs, rows: figures.rows });
  }
  const shown = datasets.filter((d) => d.first !== null && d.last !== null);
  const range = shown.length
    ? {
        lo: minOf(shown.map((d) => Date.parse(d.first!) / 1000)),
        hi: maxOf(shown.map((d) => Date.parse(d.last!) / 1000)),
      }
    : undefined;
  return {
    datasets,
    activity: await activity(conn, timed, { filter: opts.filter, nowSecs, range }),
    deployments: deploymentFreshness(opts.entries, { filter: opts.filter, nowSecs }),
  };
}
