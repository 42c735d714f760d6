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
import type { Dataset } from '../catalog/catalog.ts';
import type { TaskResult } from '../export/task.ts';
import { lit, qt } from '../store/ddl.ts';
import type { Warehouse } from '../store/warehouse.ts';
import { chainDir, dayExpr, LAKE_DIR } from './layout.ts';

/** Rows per Parquet row group: large enough for good compression, small enough for readers to skip groups. */
const ROW_GROUP_SIZE = 122_880;

const COPY_OPTS = `FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE ${ROW_GROUP_SIZE}`;

/** Moves every file of a temporary partitioned tree into place, one atomic rename per file. */
function moveTree(tmp: string, dest: string, fileName: (file: string) => string): number {
  let n = 0;
  if (!existsSync(tmp)) return 0;
  for (const part of readdirSync(tmp)) {
    for (const file of readdirSync(join(tmp, part))) {
      const target = join(dest, part, fileName(file));
      mkdirSync(dirname(target), { recursive: true });
      renameSync(join(tmp, part, file), target);
      n++;
    }
  }
  return n;
}

/** The statement that writes `select` partitioned by day into `tmp`. */
function partitioned(ds: Dataset, where: string, tmp: string): string {
  return `COPY (SELECT *, ${dayExpr(ds)} AS day FROM ${qt(ds.table)} WHERE ${where}) TO ${lit(tmp)} (${COPY_OPTS}, PARTITION_BY (day), FILENAME_PATTERN 'data')`;
}

/** Writes the lake files of one task's new data; returns the files written. */
async function writeTask(w: Warehouse, lake: string, r: TaskResult, runId: string): Promise<number> {
  const ds = r.task.ds;
  const chain = r.task.chainId;
  const tmp = join(lake, '.tmp', `${runId}-${ds.name}-${chain}`);
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(dirname(tmp), { recursive: true });
  try {
    if (ds.kind === 'event' || ds.kind === 'bucket') {
      // Rewrite the days from the start of this run's re-read window on; they were replaced in the warehouse too.
      const from = r.stats.rewriteFrom ?? 0;
      const day = Math.floor(from / 86_400) * 86_400;
      const seq = ds.columns.find((c) => c.field === ds.seq)!.column;
      await w.exec(partitioned(ds, `chain_id = ${chain} AND "${seq}" >= ${day}`, tmp));
      return moveTree(tmp, chainDir(lake, ds, chain, 'data'), () => 'data.parquet');
    }
    const thisRun = `chain_id = ${chain} AND _run_id = ${lit(runId)}`;
    if (ds.kind === 'mutable') {
      const current = join(chainDir(lake, ds, chain, 'current'), 'data.parquet');
      mkdirSync(dirname(current), { recursive: true });
      await w.exec(`COPY (SELECT * FROM ${qt(ds.table)} WHERE chain_id = ${chain}) TO ${lit(`${current}.tmp`)} (${COPY_OPTS})`);
      renameSync(`${current}.tmp`, current);
      await w.exec(partitioned(ds, thisRun, tmp));
      return 1 + moveTree(tmp, chainDir(lake, ds, chain, 'history'), () => `part-${runId}.parquet`);
    }
    await w.exec(partitioned(ds, thisRun, tmp));
    return moveTree(tmp, chainDir(lake, ds, chain, 'data'), () => `part-${runId}.parquet`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

/** Writes the lake files of every successful task of a run that read rows; returns the files written. */
export async function writeLake(w: Warehouse, dataDir: string, runId: string, results: readonly TaskResult[]): Promise<number> {
  const lake = join(dataDir, LAKE_DIR);
  let files = 0;
  for (const r of results) if (r.status === 'ok' && r.stats.rows > 0) files += await writeTask(w, lake, r, runId);
  return files;
}
