/**
 * The lake against the warehouse: rows per dataset, chain and day (events and buckets by their time, snapshots and
 * the liquidity list by when they were taken; a mutable entity's state as a whole). What the lake is known to lack
 * (`lake_pending`: the next run writes it) is not compared. A repair has the dataset's files of the chain rewritten.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS, type Dataset } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { chainDir, lakeSelect, seqColumn } from '../lake/layout.ts';
import type { Warehouse } from '../store/warehouse.ts';
import { lit, q, qt } from '../util/sql.ts';
import type { Check } from './check.ts';
import type { Mismatch } from './reconcile.ts';

const DAY = 86_400;

/** The name of the lake's identity, per day or whole. */
export const LAKE_IDENTITY = 'lake rows';

/** The day of a row, as SQL over a relation with the warehouse's columns: its time, or when it was taken. */
function dayExpr(ds: Dataset): string | undefined {
  const seq = seqColumn(ds);
  if (seq) return `(CAST(${q(seq)} AS BIGINT) // ${DAY}) * ${DAY}`;
  return ds.kind === 'mutable' ? undefined : `(epoch(_taken_at)::BIGINT // ${DAY}) * ${DAY}`;
}

/** Rows of one day (or of a whole table) on each side, and with `values`, a digest of their values on each side. */
interface DayCount {
  readonly day: number | null;
  warehouse: number;
  lake: number;
  warehouseDigest: string;
  lakeDigest: string;
}

/**
 * Counts per day (or one count) of the warehouse's rows and the lake's files of one dataset on one chain; with
 * `values`, the sum of a hash of each whole row too, the warehouse's rows as the lake writer writes them
 * (`lakeSelect`): a value changed on either side changes its day's sum, whatever the order of the rows.
 */
async function counts(
  w: Pick<Warehouse, 'all'>,
  at: { ds: Dataset; chainId: number; dir: string; before: number | null; values: boolean },
): Promise<DayCount[]> {
  const day = dayExpr(at.ds) ?? 'NULL';
  const seq = seqColumn(at.ds);
  const before = at.before !== null && seq ? ` AND ${q(seq)} < ${Number(at.before)}` : '';
  const digest = at.values ? 'CAST(sum(hash(l)) AS VARCHAR)' : "''";
  const stored = await w.all(
    `SELECT ${day} AS day, count(*) AS n, ${digest} AS d FROM (SELECT ${lakeSelect(at.ds)} FROM ${qt(at.ds.table)} WHERE chain_id = $1) AS l WHERE true${before} GROUP BY ALL`,
    [at.chainId],
  );
  const glob = join(at.dir, at.ds.kind === 'mutable' ? '*.parquet' : join('*', '*.parquet'));
  const written = existsSync(at.dir)
    ? await w.all(
        `SELECT ${day} AS day, count(*) AS n, ${digest} AS d FROM read_parquet(${lit(glob)}, hive_partitioning = false) AS l WHERE true${before} GROUP BY ALL`,
      )
    : [];
  const out = new Map<string, DayCount>();
  const at_ = (d: unknown) => {
    const k = String(d);
    const e = out.get(k) ?? {
      day: d === null ? null : Number(d),
      warehouse: 0,
      lake: 0,
      warehouseDigest: '',
      lakeDigest: '',
    };
    out.set(k, e);
    return e;
  };
  for (const r of stored) Object.assign(at_(r.day), { warehouse: Number(r.n), warehouseDigest: String(r.d) });
  for (const r of written) Object.assign(at_(r.day), { lake: Number(r.n), lakeDigest: String(r.d) });
  return [...out.values()].sort((a, b) => (a.day ?? 0) - (b.day ?? 0));
}

/** The lake checks of the datasets asked for on one chain. */
export async function lakeChecks(
  w: Pick<Warehouse, 'all'>,
  at: {
    readonly dataDir: string;
    readonly chainId: number;
    readonly datasets?: ReadonlySet<string>;
    /** Compare each day's values too, not only its rows (`verify --values`). */
    readonly values?: boolean;
  },
): Promise<Check[]> {
  const tables = new Set(
    (await w.all("SELECT schema_name || '.' || table_name AS t FROM duckdb_tables() WHERE NOT internal")).map((r) =>
      String(r.t),
    ),
  );
  const pending = new Map(
    (
      await w.all(
        'SELECT dataset, from_seq, len(runs) AS runs, coalesce(rebuild, false) AS rebuild FROM _pool_export.lake_pending WHERE chain_id = $1',
        [at.chainId],
      )
    ).map((r) => [String(r.dataset), r]),
  );
  const out: Check[] = [];
  for (const ds of DATASETS.filter((d) => tables.has(d.table) && (!at.datasets || at.datasets.has(d.name)))) {
    const base = { chainId: at.chainId, identity: LAKE_IDENTITY, dataset: ds.name, block: null, days: null };
    const p = pending.get(ds.name);
    const events = seqColumn(ds) !== undefined;
    // What the next run writes: from a day on (events and buckets), or all of it.
    if (p && (p.rebuild === true || (!events && Number(p.runs) > 0) || (events && p.from_seq === null))) {
      out.push({ ...base, groups: 0, mismatches: [], skipped: 'the lake waits for the next run to write it' });
      continue;
    }
    const before = p && events ? Number(p.from_seq) : null;
    const dir = chainDir(dataFolder(at.dataDir).lake, { ds, chainId: at.chainId }, 'data');
    const rows = await counts(w, { ds, chainId: at.chainId, dir, before, values: at.values === true });
    if (!rows.some((r) => r.warehouse > 0 || r.lake > 0)) continue;
    const mismatches = rows
      .filter((r) => r.warehouse !== r.lake || r.warehouseDigest !== r.lakeDigest)
      .map(
        (r): Mismatch => ({
          chainId: at.chainId,
          dataset: ds.name,
          identity: LAKE_IDENTITY,
          day: r.day,
          key: null,
          keyKind: null,
          expected: r.warehouse,
          found: r.lake,
          ...(r.warehouse === r.lake ? { detail: 'values differ' } : {}),
        }),
      );
    out.push({ ...base, groups: rows.length, mismatches });
  }
  return out;
}
