/**
 * Brings the Parquet lake (layout in `layout.ts`) up to the warehouse after each run, touching only what changed:
 * - events and buckets: the files of the months from the run's re-read window on, from the first file whose rows reach
 *   into it (usually the month's open file alone); the files before it are left as they are;
 * - snapshots, the liquidity list and mutable history: the month's open file takes the run's rows (keyed by `id` and
 *   `_run_id`, so that writing a run twice never doubles it);
 * - the state of mutable entities: one file per chain, replaced.
 * A month's rows are written in key order, `FILE_ROWS` per file: a run rewrites its open file until it is full, then
 * starts the next, so the file count grows with the data, not with the runs; a full file rewritten keeps its key range
 * (`key-ranges.ts`). Every file is written under `.tmp/` first, then published by the journal of `lake-files.ts`.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS } from '../catalog/catalog.ts';
import { chainName } from '../config/chains.ts';
import { dataFolder } from '../config/data-folder.ts';
import { LakeLayoutError, LakeWriteError, StopRequested } from '../errors.ts';
import type { Sql } from '../store/sql-port.ts';
import { stoppable, type Warehouse } from '../store/warehouse.ts';
import { listLit, q, qt } from '../util/sql.ts';
import { appendsTo, type ChainEntry, type ChainWrite, planChainWrites, writeChains } from './chain-writes.ts';
import { monthFiles, recoverPublish } from './lake-files.ts';
import {
  chainDir,
  FILE_ROWS,
  hasHistory,
  LAYOUT_VERSION,
  lakeLayout,
  lakeTmp,
  seqColumn,
  type TablePart,
  writeLayoutFile,
} from './layout.ts';
import { type Target, tmpName, writeRuns, writeSeq, writeState } from './month-writes.ts';
import { type Pending, readPending } from './pending.ts';
/** Writes what one pending entry lists into `root` (the lake, or a staging copy of it). Returns the files written. */
export async function writePending(
  w: Sql,
  p: Pending,
  dirs: {
    readonly root: string;
    readonly lake: string;
    readonly fileRows?: number;
    /** A run no file of the lake holds a row of yet (see `writeLake`'s `freshRun`). */
    readonly fresh?: string | undefined;
    /** Rows of open files, by path (`openFileRows`). */
    readonly openRows?: ReadonlyMap<string, number> | undefined;
    /** Files a COPY of several chains already wrote (`writeChains`): the state file, the runs' file. */
    readonly written?: { readonly state: boolean; readonly runs: boolean };
  },
): Promise<number> {
  const written = dirs.written ?? { state: false, runs: false };
  const t = (part: TablePart): Target => ({
    fileRows: dirs.fileRows ?? FILE_ROWS,
    root: dirs.root,
    lake: dirs.lake,
    ds: p.ds,
    chainId: p.chainId,
    part,
  });
  if (p.ds.kind === 'event' || p.ds.kind === 'bucket') {
    // Where the pending entries were read, so were the write's start and its months (`readPending`).
    if (!p.rebuild && p.seqFrom !== undefined)
      return p.seqFrom === null ? 0 : writeSeq(w, t('data'), { from: p.seqFrom, months: p.months });
    let from = p.rebuild ? null : p.fromSeq;
    if (from === null && !p.rebuild) {
      // Only added rows: the write starts at the first of them.
      const r = await w.all(
        `SELECT min(${q(seqColumn(p.ds)!)}) AS s FROM ${qt(p.ds.table)} WHERE chain_id = $1 AND _run_id IN (SELECT unnest($2::VARCHAR[]))`,
        [p.chainId, `[${p.runs.map((r) => JSON.stringify(r)).join(',')}]`],
      );
      if (r[0]?.s == null) return 0;
      from = Number(r[0].s);
    }
    return writeSeq(w, t('data'), { from });
  }
  const runs = {
    ids: p.runs,
    all: p.rebuild,
    dropped: p.dropped,
    fresh: dirs.fresh,
    openRows: dirs.openRows,
    ...(p.months ? { months: p.months } : {}),
  };
  if (p.ds.kind === 'mutable')
    return (
      (written.state ? 0 : await writeState(w, t('data'))) +
      (hasHistory(p.ds) && !written.runs ? await writeRuns(w, t('history'), runs) : 0)
    );
  return written.runs ? 0 : writeRuns(w, t('data'), runs);
}

/**
 * The rows of the open files (each month's last) that the entries of run `at.fresh` alone add to (`appendsTo`), from
 * their footers in one statement: one per entry cost the lake write of a run after 100 blocks 89 statements. Empty if
 * that statement fails: each entry then reads its own.
 */
async function openFileRows(
  w: Sql,
  entries: readonly ChainEntry[],
  at: { readonly lake: string; readonly fresh: string },
): Promise<Map<string, number>> {
  const open: string[] = [];
  for (const e of entries) {
    const part = appendsTo(e, at.fresh);
    if (!e.ds || !part || !e.months) continue;
    const dir = chainDir(at.lake, { ds: e.ds, chainId: e.chainId }, part);
    for (const m of e.months) {
      const last = monthFiles(join(dir, `month=${m}`)).at(-1);
      if (last) open.push(last.path);
    }
  }
  if (open.length === 0) return new Map();
  const rows = await w
    .all(`SELECT file_name AS f, num_rows AS n FROM parquet_file_metadata(${listLit(open)})`)
    .catch(() => []);
  return new Map(rows.map((r) => [String(r.f), Number(r.n)]));
}

/**
 * The lake write's work, in the order the lanes take it: each dataset with COPYs of several chains (`writeChains`)
 * first, with its entries (which write what those COPYs left), the largest first; then every other entry alone.
 */
function workItems<E extends { readonly name: string }>(
  entries: readonly E[],
  writes: readonly ChainWrite[],
): { readonly writes: readonly ChainWrite[]; readonly entries: readonly E[] }[] {
  const of = new Map<string, ChainWrite[]>();
  for (const c of writes) of.set(c.ds.name, [...(of.get(c.ds.name) ?? []), c]);
  const grouped = [...of.entries()]
    .map(([name, ws]) => ({ writes: ws, entries: entries.filter((e) => e.name === name) }))
    .sort((a, b) => b.entries.length - a.entries.length);
  const alone = entries.filter((e) => !of.has(e.name)).map((e) => ({ writes: [], entries: [e] }));
  return [...grouped, ...alone];
}

/** The runs of this process whose lake write has begun: from then on, files may hold their rows. */
const lakeWriteBegun = new Set<string>();

/**
 * Lanes of a lake write where memory allows: on 2 cores, the lake write of 328 entries took 4.1 s in two lanes and
 * 3.6 s in three; four did no better.
 */
export const LANES = 3;

/**
 * Brings the lake up to the warehouse: writes what `_pool_export.lake_pending` lists (this run's commits, and those of
 * earlier runs that were killed or failed before their lake write), then clears each entry once its files are in place.
 * An entry that fails stays listed and the others are written; the write then throws a `LakeWriteError` naming it.
 * The lake must be of this layout, or empty (`migrate-lake.ts` brings an older one). Returns the files written.
 * `fileRows`: the rows of a full file; `lanes`: entries written at once. Once `signal` is aborted (a stop request), each
 * lane ends after the entry it is writing: the others stay listed for the next write.
 */
export async function writeLake(
  w: Warehouse,
  dataDir: string,
  opts: {
    readonly fileRows?: number;
    readonly signal?: AbortSignal | undefined;
    readonly lanes?: number;
    /**
     * The run whose lake write this is, when it is the one that committed rows: no file holds a row of it before its
     * first lake write, so an entry of that run alone adds to its open files without searching them. A second write
     * in the same process for the same run (after a failure) searches them as any other.
     */
    readonly freshRun?: string | undefined;
  } = {},
): Promise<number> {
  const { fileRows = FILE_ROWS, signal, lanes: laneCount = LANES } = opts;
  const fresh = opts.freshRun !== undefined && !lakeWriteBegun.has(opts.freshRun) ? opts.freshRun : undefined;
  if (opts.freshRun !== undefined) {
    lakeWriteBegun.add(opts.freshRun);
    // A process that schedules runs for months keeps the last ones only (a run's writes follow one another).
    if (lakeWriteBegun.size > 64) lakeWriteBegun.delete(lakeWriteBegun.values().next().value!);
  }
  const lake = dataFolder(dataDir).lake;
  let files = 0;
  const layout = lakeLayout(lake);
  if (layout !== null && layout !== LAYOUT_VERSION)
    throw new LakeLayoutError(lake, { found: layout, needed: LAYOUT_VERSION });
  recoverPublish(lake);
  if (layout === null) writeLayoutFile(lake);
  const byName = new Map(DATASETS.map((d) => [d.name, d]));
  const rows = await readPending(w, byName);
  const openRows = fresh === undefined ? undefined : await openFileRows(w, rows, { lake, fresh });
  // Lanes (the warehouse's connection and more) write entries side by side: most are a few small statements, so one
  // lane leaves the cores idle between them. Each lane's sort takes what memory it can, so under a small memory limit
  // (`lakeLanes`) one lane writes alone.
  const lanes = await Promise.all(Array.from({ length: Math.max(0, laneCount - 1) }, () => w.lane()));
  // COPYs of several chains, where DuckDB writes their partitions in order (one thread) and memory allows lanes
  // (`chain-writes.ts`).
  const oneThread = laneCount > 1 && Number((await w.all("SELECT current_setting('threads') AS n"))[0]?.n) === 1;
  // Each table's rows, as DuckDB's catalog counts them (deleted ones not yet vacuumed too): a state's bound.
  const tables = oneThread
    ? new Map(
        (await w.all("SELECT schema_name || '.' || table_name AS t, estimated_size AS n FROM duckdb_tables()")).map(
          (r) => [String(r.t), Number(r.n)],
        ),
      )
    : new Map<string, number>();
  const chainWrites = oneThread
    ? planChainWrites(rows, { lake, fresh, openRows, fileRows, tableRows: (t) => tables.get(t) })
    : [];
  const done: string[] = [];
  const failed: { entry: string; error: unknown }[] = [];
  // A stop interrupts the statements under way: their entries fail before they publish anything (files are written
  // under .tmp first), and stay listed.
  const interrupt = () => {
    w.interrupt();
    for (const l of lanes) l.interrupt();
  };
  signal?.addEventListener('abort', interrupt);
  try {
    const next = workItems(rows, chainWrites)[Symbol.iterator]();
    const work = async (sql: Sql) => {
      for (let item = next.next(); !item.done && !signal?.aborted; item = next.next()) {
        // The COPYs of several chains first; what they leave, each entry writes.
        const byChains = { state: new Set<string>(), runs: new Set<string>() };
        for (const c of item.value.writes) {
          const tmp = join(lakeTmp(lake), tmpName('c'));
          try {
            const entries = await writeChains(sql, c, { lake, tmp, fileRows });
            for (const e of entries) byChains[c.run === undefined ? 'state' : 'runs'].add(e);
            files += entries.length;
          } catch (e) {
            // What a COPY of several chains failed to write, each entry writes (and fails alone if it must).
            if (signal?.aborted || e instanceof StopRequested) throw e;
          }
        }
        for (const r of item.value.entries) {
          const { ds, chainId, name } = r;
          const key = `${chainId}/${name}`;
          try {
            const p = ds && { ...r, ds };
            const written = { state: byChains.state.has(key), runs: byChains.runs.has(key) };
            // Added after the await: `files += await …` would read `files` before the other lane's additions.
            const n = p ? await writePending(sql, p, { root: lake, lake, fileRows, fresh, openRows, written }) : 0;
            files += n;
            done.push(key);
          } catch (e) {
            // A stop ends the write; any other failure (DuckDB's memory, a file) leaves this entry listed, and the
            // others are written all the same.
            if (signal?.aborted || e instanceof StopRequested) throw e;
            failed.push({ entry: `${name} on ${chainName(chainId)}`, error: e });
          }
        }
      }
    };
    await Promise.all([w, ...lanes].map((sql) => work(signal ? stoppable(sql, signal) : sql)));
  } finally {
    signal?.removeEventListener('abort', interrupt);
    for (const l of lanes) await l.close();
    // The entries whose files are in place, cleared in one statement (one per entry cost more than some writes).
    await w.exec(
      `DELETE FROM _pool_export.lake_pending WHERE CAST(chain_id AS VARCHAR) || '/' || dataset IN (SELECT unnest(from_json($1, '["VARCHAR"]')))`,
      [JSON.stringify(done)],
    );
  }
  rmSync(lakeTmp(lake), { recursive: true, force: true });
  if (failed.length > 0) throw new LakeWriteError(failed, files);
  return files;
}
