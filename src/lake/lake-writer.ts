/**
 * Writes each run's new data to the Parquet lake (zstd, Hive partitions), every file under a temporary name first.
 * - events and buckets: `<schema>/<table>/chain=<name>/day=<day>/data.parquet`; a run replaces only the day files it
 *   touched (its re-read window and the open day); older days are never rewritten;
 * - mutable entities: `current/chain=<name>/data.parquet` (the state now) and
 *   `history/chain=<name>/day=<day>/part-<run>.parquet` (the rows this run read);
 * - snapshots and the liquidity list: `chain=<name>/day=<day>/part-<run>.parquet`, appended per run.
 * The day partition is named `day` because bucket datasets already have a `date` column.
 */
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { DATASETS, type Dataset } from '../catalog/catalog.ts';
import type { Warehouse } from '../store/warehouse.ts';
import { lit, qt } from '../util/sql.ts';
import { chainDir, dayExpr, LAKE_DIR } from './layout.ts';

/** Rows per Parquet row group: large enough for good compression, small enough for readers to skip groups. */
const ROW_GROUP_SIZE = 122_880;

/** Seconds per day partition. */
const DAY = 86_400;

/**
 * Rows a partitioned COPY buffers before it flushes its open day files: memory stays flat whatever the backfill's size.
 * A flush starts another file in a partition, so a day can hold several files (`compact` merges them).
 */
const FLUSH_THRESHOLD_ROWS = 100_000;

/**
 * Day files a partitioned COPY keeps open at once (DuckDB's default, set here so that the bound is ours): past it,
 * DuckDB closes them and opens new ones, which starts another file in a partition, as a flush does. It bounds the
 * memory of one COPY however many days it writes, so a rewrite is one COPY, one scan of the table.
 */
const MAX_OPEN_FILES = 100;

/**
 * zstd at level 1 rather than DuckDB's 3: on 102,101 swaps (61 day files) the COPY took 454–467 ms against 589–655 ms,
 * and the files came out at 22.2 MB against 22.5 MB (three runs each, alternated).
 */
const ZSTD_LEVEL = 1;

const COPY_OPTS = `FORMAT parquet, COMPRESSION zstd, COMPRESSION_LEVEL ${ZSTD_LEVEL}, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}`;

/**
 * Moves every file of a temporary partitioned tree into place, one atomic rename per file. A partition's files are
 * named `<base>.parquet`, `<base>-1.parquet`, …; with `replace`, files of an earlier write under the same base that
 * this write did not renew are removed, so a rewritten day never keeps stale rows.
 */
export function moveTree(
  tmp: string,
  dest: string,
  files: { readonly base: string; readonly replace: boolean },
): number {
  const { base, replace } = files;
  let n = 0;
  if (!existsSync(tmp)) return 0;
  for (const part of readdirSync(tmp)) {
    const target = join(dest, part);
    mkdirSync(target, { recursive: true });
    const names = readdirSync(join(tmp, part))
      .sort()
      .map((file, i) => [file, i === 0 ? `${base}.parquet` : `${base}-${i}.parquet`] as const);
    for (const [file, name] of names) renameSync(join(tmp, part, file), join(target, name));
    if (replace) {
      const kept = new Set(names.map(([, name]) => name));
      for (const old of readdirSync(target))
        if (!kept.has(old) && (old === `${base}.parquet` || (old.startsWith(`${base}-`) && old.endsWith('.parquet'))))
          rmSync(join(target, old));
    }
    n += names.length;
  }
  return n;
}

/** The statement that writes a dataset's rows (those `where` selects) partitioned by day into `tmp`. */
export function partitioned(ds: Dataset, where: string, tmp: string): string {
  return `COPY (SELECT *, ${dayExpr(ds)} AS day FROM ${qt(ds.table)} WHERE ${where}) TO ${lit(tmp)} (${COPY_OPTS}, PARTITION_BY (day), FILENAME_PATTERN 'data')`;
}

/** What the lake lacks for one dataset and chain (a row of `_pool_export.lake_pending`). */
interface Pending {
  readonly ds: Dataset;
  readonly chainId: number;
  readonly fromSeq: number | null;
  readonly runs: readonly string[];
  /** Rewrite every file of the dataset and chain, replacing its folders whole. */
  readonly rebuild: boolean;
}

/** The folders of one dataset and chain in the lake. */
const PARTS = ['data', 'current', 'history'] as const;

/**
 * Rebuilds every file of one dataset and chain: written into a staging lake, then each of its folders replaces the
 * live one by rename (the old one moved aside first, then removed), so readers never see a mix of old and new types.
 */
async function rebuildPending(w: Warehouse, lake: string, p: Pending): Promise<number> {
  const staging = join(lake, '.tmp', `rebuild-${p.ds.name}-${p.chainId}`);
  rmSync(staging, { recursive: true, force: true });
  try {
    const files = await writePending(w, { ...p, rebuild: false }, { root: staging, lake });
    for (const part of PARTS) {
      const live = chainDir(lake, p, part);
      const staged = chainDir(staging, p, part);
      const aside = `${live}.old`;
      rmSync(aside, { recursive: true, force: true });
      if (existsSync(live)) renameSync(live, aside);
      if (existsSync(staged)) {
        mkdirSync(dirname(live), { recursive: true });
        renameSync(staged, live);
      }
      rmSync(aside, { recursive: true, force: true });
    }
    return files;
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

/**
 * Writes the lake files one dataset and chain lacks into `root` (the lake, or a staging copy of it; temporary files
 * go under `lake`); returns the files written. Rewriting the same files is harmless.
 */
async function writePending(
  w: Warehouse,
  p: Pending,
  dirs: { readonly root: string; readonly lake: string },
): Promise<number> {
  const { root, lake } = dirs;
  const { ds, chainId: chain } = p;
  const tmp = join(lake, '.tmp', `${p.runs[0]}-${ds.name}-${chain}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(tmp), { recursive: true });
  try {
    if (ds.kind === 'event' || ds.kind === 'bucket') {
      // Rewrite the days from the start of the re-read window on; they were replaced in the warehouse too.
      const from = Math.floor((p.fromSeq ?? 0) / DAY) * DAY;
      const seq = ds.columns.find((c) => c.field === ds.seq)!.column;
      // One COPY for every day: the rows of a backfill lie in the table in the order their shards committed them,
      // so the zone maps of a time range cover most of the table, and a COPY per few days would scan it whole each time
      // (measured at 5,000,100 swaps over 61 days: 45 s and 551 MB peak in chunks of 10 days, 26 s and 479 MB at once).
      await w.exec(partitioned(ds, `chain_id = ${chain} AND "${seq}" >= ${from}`, tmp));
      return moveTree(tmp, chainDir(root, { ds, chainId: chain }, 'data'), { base: 'data', replace: true });
    }
    let files = 0;
    if (ds.kind === 'mutable') {
      const current = join(chainDir(root, { ds, chainId: chain }, 'current'), 'data.parquet');
      mkdirSync(dirname(current), { recursive: true });
      await w.exec(
        `COPY (SELECT * FROM ${qt(ds.table)} WHERE chain_id = ${chain}) TO ${lit(`${current}.tmp`)} (${COPY_OPTS})`,
      );
      renameSync(`${current}.tmp`, current);
      files++;
    }
    // Mutable history and snapshots: one part file per run, so a run's rows can be found (and rewritten) by its id.
    for (const runId of p.runs) {
      rmSync(tmp, { recursive: true, force: true });
      await w.exec(partitioned(ds, `chain_id = ${chain} AND _run_id = ${lit(runId)}`, tmp));
      files += moveTree(tmp, chainDir(root, { ds, chainId: chain }, ds.kind === 'mutable' ? 'history' : 'data'), {
        base: `part-${runId}`,
        replace: true,
      });
    }
    return files;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * Brings the lake up to the warehouse: writes what `_pool_export.lake_pending` lists (this run's commits, and those of
 * earlier runs that were killed or failed before their lake write), then clears each entry once its files are in place.
 * Returns the files written.
 */
export async function writeLake(w: Warehouse, dataDir: string): Promise<number> {
  const lake = join(dataDir, LAKE_DIR);
  const byName = new Map(DATASETS.map((d) => [d.name, d]));
  await w.exec(`SET partitioned_write_flush_threshold = ${FLUSH_THRESHOLD_ROWS}`);
  await w.exec(`SET partitioned_write_max_open_files = ${MAX_OPEN_FILES}`);
  const rows = await w.all(
    'SELECT chain_id, dataset, from_seq, runs, coalesce(rebuild, false) AS rebuild FROM _pool_export.lake_pending ORDER BY dataset, chain_id',
  );
  let files = 0;
  for (const r of rows) {
    const ds = byName.get(String(r.dataset));
    const chainId = Number(r.chain_id);
    const p: Pending | undefined = ds && {
      ds,
      chainId,
      fromSeq: r.from_seq === null ? null : Number(r.from_seq),
      runs: (r.runs as unknown[]).map(String),
      rebuild: r.rebuild === true,
    };
    if (p) files += p.rebuild ? await rebuildPending(w, lake, p) : await writePending(w, p, { root: lake, lake });
    await w.exec('DELETE FROM _pool_export.lake_pending WHERE chain_id = $1 AND dataset = $2', [
      chainId,
      String(r.dataset),
    ]);
  }
  return files;
}
