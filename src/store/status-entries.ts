/**
 * Where each dataset stands on each chain, read from the warehouse (its checkpoints, tables and run ledger): the
 * entries of the status file (`status-file.ts`) and of `status`.
 */
import { DATASETS } from '../catalog/catalog.ts';
import { qt } from '../util/sql.ts';
import type { Warehouse } from './warehouse.ts';

/** Where one dataset stands on one chain. */
export interface StatusEntry {
  readonly dataset: string;
  readonly chainId: number;
  /** When a task of it last ended well (ISO), or null. */
  readonly lastSuccess: string | null;
  /** How its last task ended: ok, failed, unavailable (the upstream deployment has no such entity), or null. */
  readonly lastStatus: string | null;
  readonly lastError: string | null;
  readonly rows: number;
  /** The block its committed rows were read at, and that block's time (ISO). */
  readonly block: number | null;
  readonly blockTime: string | null;
  /** The route its last task read from (a label, never a key), when the ledger recorded one. */
  readonly route?: string | null;
  /**
   * Its last verification against the upstream's counters (`_pool_export.verifications`): when, how many groups
   * differed (gaps), and why it could not check, if it could not. Absent when it was never verified.
   */
  readonly verification?: { readonly at: string; readonly gaps: number; readonly error: string | null } | null;
}

const iso = (v: unknown) =>
  v === null || v === undefined ? null : new Date(String(v).replace(' ', 'T').replace(/\+00$/, 'Z')).toISOString();

/** What `ledgerShape` found of each warehouse opened: it does not change while one is open. */
const shapes = new WeakMap<Warehouse, { hasRoute: number; verified: number }>();

/**
 * Whether the run ledger has its route column and the verifications table exists: a warehouse last written by an
 * earlier version, opened read-only, has neither yet. Read once per warehouse opened (the catalog queries cost a run
 * 30 ms at each of its status reads).
 */
export async function ledgerShape(w: Warehouse): Promise<{ hasRoute: number; verified: number }> {
  const known = shapes.get(w);
  if (known) return known;
  const [shape] = await w.all(
    `SELECT (SELECT count(*) FROM duckdb_columns() WHERE schema_name = '_pool_export' AND table_name = 'run_tasks' AND column_name = 'route')::INTEGER AS "hasRoute",
            (SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_pool_export' AND table_name = 'verifications')::INTEGER AS verified`,
  );
  const found = { hasRoute: Number(shape!.hasRoute), verified: Number(shape!.verified) };
  shapes.set(w, found);
  return found;
}

/**
 * Every dataset and chain with a checkpoint or a task in the ledger (one that only ever failed, too), from the
 * warehouse (optionally only one dataset and chain).
 */
export async function readEntries(w: Warehouse, only?: { dataset: string; chainId: number }): Promise<StatusEntry[]> {
  const filter = only ? 'AND dataset = $1 AND chain_id = $2' : '';
  const params = only ? [only.dataset, only.chainId] : [];
  const { hasRoute, verified } = await ledgerShape(w);
  const v = lastVerifications(verified);
  const rows = await w.all(
    `
    WITH v AS (${v}), t AS (
      SELECT chain_id, dataset, max(ended_at) FILTER (WHERE status = 'ok')::VARCHAR AS last_success,
             -- The last task's error, null where it ended without one (arg_max alone passes over nulls).
             arg_max({'e': error}, ended_at).e AS last_error, arg_max(status, ended_at) AS last_status,
             ${hasRoute ? 'arg_max(route, ended_at)' : 'NULL'} AS route
      FROM _pool_export.run_tasks GROUP BY ALL
    )
    SELECT chain_id, dataset, c.block, c.block_time::VARCHAR AS block_time, t.last_success, t.last_error, t.last_status,
           t.route, v.verified_at, v.gaps, v.verify_error
    FROM _pool_export.checkpoints c FULL JOIN t USING (chain_id, dataset) LEFT JOIN v USING (chain_id, dataset)
    WHERE (c.cursor IS NOT NULL OR t.last_status IS NOT NULL) ${filter}
    ORDER BY dataset, chain_id`,
    params,
  );
  const tables = new Set(
    (await w.all("SELECT schema_name || '.' || table_name AS t FROM duckdb_tables()")).map((r) => String(r.t)),
  );
  const counts = new Map<string, number>();
  // The rows of every table per chain in one statement: one query per table cost the run 5 ms each, twice a run.
  const counted = DATASETS.filter((d) => tables.has(d.table) && (!only || d.name === only.dataset));
  if (counted.length)
    for (const x of await w.all(
      counted
        .map(
          (ds, i) =>
            `SELECT ${i} AS ds, chain_id, count(*) AS n FROM ${qt(ds.table)} ${only ? 'WHERE chain_id = $1' : ''} GROUP BY chain_id`,
        )
        .join(' UNION ALL '),
      only ? [only.chainId] : [],
    ))
      counts.set(`${counted[Number(x.ds)]!.name}/${x.chain_id}`, Number(x.n));
  return rows.map((r) => ({
    dataset: String(r.dataset),
    chainId: Number(r.chain_id),
    lastSuccess: iso(r.last_success),
    lastStatus: r.last_status === null ? null : String(r.last_status),
    lastError: r.last_error === null ? null : String(r.last_error),
    rows: counts.get(`${String(r.dataset)}/${Number(r.chain_id)}`) ?? 0,
    block: r.block === null ? null : Number(r.block),
    blockTime: iso(r.block_time),
    route: r.route === null || r.route === undefined ? null : String(r.route),
    verification: verificationOf(r),
  }));
}

/** The last verification of each dataset and chain that checked something: its run's rows, gaps summed. */
export function lastVerifications(verified: number): string {
  return verified
    ? `SELECT chain_id, dataset, max(checked_at)::VARCHAR AS verified_at, sum(gaps)::INTEGER AS gaps,
              string_agg(error, '; ') AS verify_error
       FROM _pool_export.verifications WHERE skipped IS NULL GROUP BY chain_id, dataset, run_id
       QUALIFY row_number() OVER (PARTITION BY chain_id, dataset ORDER BY max(checked_at) DESC) = 1`
    : 'SELECT NULL::INTEGER AS chain_id, NULL AS dataset, NULL AS verified_at, NULL AS gaps, NULL AS verify_error WHERE false';
}

/** An entry's verification from a row of `lastVerifications`. */
export function verificationOf(r: Record<string, unknown>): StatusEntry['verification'] {
  return r.verified_at === null || r.verified_at === undefined
    ? null
    : {
        at: iso(r.verified_at)!,
        gaps: Number(r.gaps),
        error: r.verify_error === null ? null : String(r.verify_error),
      };
}

/** An entry with its rows and block as the warehouse holds them now. */
export async function readProgress(w: Warehouse, e: StatusEntry): Promise<StatusEntry | undefined> {
  const ds = DATASETS.find((d) => d.name === e.dataset);
  if (!ds) return e;
  // A table the warehouse lacks (a dataset whose tasks all failed before it was made) leaves the entry as it was.
  const [r] = await w
    .all(
      `SELECT (SELECT count(*) FROM ${qt(ds.table)} WHERE chain_id = $1) AS n,
            c.block, c.block_time::VARCHAR AS block_time
     FROM (SELECT 1) LEFT JOIN _pool_export.checkpoints c ON c.chain_id = $1 AND c.dataset = $2`,
      [e.chainId, e.dataset],
    )
    .catch(() => [undefined]);
  if (!r) return e;
  return {
    ...e,
    rows: Number(r.n),
    block: r.block === null ? null : Number(r.block),
    blockTime: iso(r.block_time),
  };
}
