/**
 * The writes of one dataset's lake files on one chain (`lake-writer.ts` decides which to make): the months of events
 * and buckets from a key on (`writeSeq`), the runs of snapshots, lists and history (`writeRuns`), the one file of
 * mutable entities' state (`writeState`), each staged under `.tmp/` and published month by month (`writeMonths`).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Dataset } from '../catalog/catalog.ts';
import type { Sql } from '../store/sql-port.ts';
import { listLit, lit, q, qt } from '../util/sql.ts';
import { appendsTo } from './chain-writes.ts';
import { cutMonth, fullFiles } from './key-ranges.ts';
import { copyOpts, monthFiles, monthsIn, type Publish, partName, publish, replacesSmall } from './lake-files.ts';
import {
  chainDir,
  lakeSelect,
  lakeTmp,
  monthExpr,
  monthOf,
  monthStart,
  orderKey,
  STATE_KEY,
  seqColumn,
  type TablePart,
} from './layout.ts';

/** Where one write goes: a dataset's table path of one chain, under a lake root (the lake, or a staging copy). */
export interface Target {
  readonly ds: Dataset;
  readonly chainId: number;
  readonly part: TablePart;
  /** The lake or staging root the files go to. */
  readonly root: string;
  /** The lake, whose `.tmp/` holds the files being written. */
  readonly lake: string;
  /** Rows per file (`FILE_ROWS`; tests set fewer). */
  readonly fileRows: number;
}

/** What to rewrite in one month: its files from number `from` on are replaced by the rows of the write. */
export interface MonthPlan {
  readonly month: string;
  readonly from: number;
  readonly old: readonly { n: number; path: string; rows?: number }[];
}

/** Names of this process' staging files and folders under `.tmp/`, each new. */
let tmpSeq = 0;

/** A new name for a staging file or folder of this process (`prefix` tells what it is). */
export function tmpName(prefix: string, ext = ''): string {
  return `${prefix}${process.pid}-${++tmpSeq}${ext}`;
}

/** The files of a month that its plan's write replaces: those from its `from` on. */
const replaced = (plan: MonthPlan) => plan.old.filter((f) => f.n >= plan.from);

/**
 * Writes `source` (a query with the lake's columns) into the months of `plans`, in key order and `FILE_ROWS` per file,
 * numbered from each plan's `from`; then publishes them over the files they replace. A full file replaced keeps its key
 * range (`key-ranges.ts`), unless `recut` (a compaction) cuts the rows anew. Returns the files written.
 */
export async function writeMonths(
  w: Sql,
  t: Target,
  write: { readonly source: string; readonly plans: readonly MonthPlan[]; readonly recut?: boolean },
): Promise<number> {
  if (write.plans.length === 0) return 0;
  const tmp = join(lakeTmp(t.lake), tmpName('w'));
  mkdirSync(tmp, { recursive: true });
  try {
    return await stageAndPublish(w, { ...t, tmp }, write);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}

async function stageAndPublish(
  w: Sql,
  t: Target & { readonly tmp: string },
  write: { readonly source: string; readonly plans: readonly MonthPlan[]; readonly recut?: boolean },
): Promise<number> {
  const { tmp, fileRows } = t;
  const { source, plans } = write;
  const options = await copyOpts(w);
  const key = orderKey(t.ds, t.part);
  const dir = chainDir(t.root, t, t.part);
  const target = (plan: MonthPlan, n: number) => join(dir, `month=${plan.month}`, partName(n));
  const full = await Promise.all(plans.map((p) => (write.recut ? [] : fullFiles(w, replaced(p), fileRows))));
  // A write of one month into one file, replacing no full one (nearly every run's): one COPY, straight to its file.
  if (plans.length === 1 && full[0]!.length === 0) {
    const [file, plan] = [join(tmp, 'only.parquet'), plans[0]!];
    const only = await copyOpts(w, { small: replacesSmall(replaced(plan).map((f) => f.path)) });
    const rows = await w.exec(`COPY (SELECT * FROM (${source}) ORDER BY ${key}) TO ${lit(file)} (${only})`);
    if (rows <= fileRows) return publishMonths(t.lake, [{ plan, files: rows > 0 ? [[plan.from, file]] : [] }], target);
  }
  const stage = join(tmp, 'stage.parquet');
  // One sorted pass over the rows, into one file in (month, key) order; each month is then one run of that file's rows
  // (their `file_row_number`), and each part file one range of it. A plain sort spills to disk within DuckDB's memory
  // limit, where numbering the rows with a window over each month held whole months in memory (5,000,000 swaps did not
  // fit in 256 MiB).
  await w.exec(
    `COPY (SELECT *, ${monthExpr(t.ds, t.part)} AS "month" FROM (${source}) ORDER BY "month", ${key}) TO ${lit(stage)} (${options})`,
  );
  const staged = `read_parquet(${lit(stage)}, hive_partitioning = false, file_row_number = true)`;
  const runs = new Map(
    (
      await w.all(
        `SELECT "month", min(file_row_number) AS first, max(file_row_number) AS last, count(*) AS n FROM ${staged} GROUP BY ALL`,
      )
    ).map((r) => {
      const [first, last, n] = [Number(r.first), Number(r.last), Number(r.n)];
      // The rows of a month lie together, as the sort wrote them: anything else would split it wrongly.
      if (last - first + 1 !== n) throw new Error(`the lake's staged rows of ${String(r.month)} are not contiguous`);
      return [String(r.month), { first, n }];
    }),
  );
  const months: { plan: MonthPlan; files: [number, string][] }[] = [];
  for (const [p, plan] of plans.entries()) {
    const [files, run, kept] = [[] as [number, string][], runs.get(plan.month) ?? { first: 0, n: 0 }, full[p]!];
    const next = replaced(plan)[kept.length]?.n ?? (kept.length > 0 ? kept.at(-1)!.n + 1 : plan.from);
    for (const c of await cutMonth(w, { staged, month: plan.month, key, ...run, full: kept, next, fileRows })) {
      const file = join(tmp, `${plan.month}-${c.n}.parquet`);
      await w.exec(
        `COPY (SELECT * EXCLUDE ("month", file_row_number) FROM ${staged} WHERE file_row_number >= ${c.first} AND file_row_number < ${c.first + c.count} ORDER BY ${key}) TO ${lit(file)} (${options})`,
      );
      files.push([c.n, file]);
    }
    months.push({ plan, files });
  }
  return publishMonths(t.lake, months, target);
}

/** Publishes each month's files over those of their numbers, then removes its replaced files no new one took. */
function publishMonths(
  lake: string,
  months: readonly { readonly plan: MonthPlan; readonly files: readonly (readonly [number, string])[] }[],
  target: (plan: MonthPlan, n: number) => string,
): number {
  const steps: Publish = { renames: [], removes: [] };
  for (const { plan, files } of months) {
    const written = new Set(files.map(([n]) => n));
    for (const [n, f] of files) steps.renames.push([f, target(plan, n)]);
    for (const f of replaced(plan)) if (!written.has(f.n)) steps.removes.push(f.path);
  }
  publish(lake, steps);
  return months.reduce((n, m) => n + m.files.length, 0);
}

/**
 * Events and buckets of one chain from `from` (seconds; null: every row) on: each month from `from`'s is rewritten
 * from its first file whose rows reach `from` (or its open file, if that still has room), the rows before that file
 * kept as they are. `months`: those of the warehouse's rows from `from` on, where they were read already.
 */
export async function writeSeq(
  w: Sql,
  t: Target,
  at: { readonly from: number | null; readonly months?: readonly string[] | undefined },
): Promise<number> {
  const { from, months: rowMonths } = at;
  const { ds, chainId, fileRows } = t;
  const seq = q(seqColumn(ds)!);
  const dir = chainDir(t.root, t, t.part);
  const first = from === null ? null : monthOf(from);
  const months = new Set(monthsIn(dir).filter((m) => first === null || m >= first));
  // The months of rows from `from` on (the first month is planned anyway).
  const found =
    rowMonths ??
    (
      await w.all(
        `SELECT DISTINCT ${monthExpr(ds, t.part)} AS m FROM ${qt(ds.table)} WHERE chain_id = $1 AND ${seq} >= $2`,
        [chainId, from ?? 0],
      )
    ).map((r) => String(r.m));
  for (const m of found) months.add(m);
  if (first !== null) months.add(first);
  const plans: MonthPlan[] = [];
  // The rows the first month keeps: those up to the last row of the file before the first one rewritten.
  let keep = '';
  for (const month of [...months].sort()) {
    let old: MonthPlan['old'] = monthFiles(join(dir, `month=${month}`));
    let start = 0;
    if (month === first && old.length > 0) {
      const his = await w.all(
        `SELECT file_name AS f, max(TRY_CAST(stats_max_value AS BIGINT)) AS hi, sum(row_group_num_rows) AS n
         FROM parquet_metadata(${listLit(old.map((f) => f.path))}) WHERE path_in_schema = ${lit(seqColumn(ds)!)} GROUP BY ALL`,
      );
      const stat = new Map(his.map((r) => [String(r.f), { hi: Number(r.hi), rows: Number(r.n) }]));
      old = old.map((f) => ({ ...f, rows: stat.get(f.path)!.rows }));
      start = old.findIndex((f) => stat.get(f.path)!.hi >= from!);
      if (start < 0) start = stat.get(old.at(-1)!.path)!.rows < fileRows ? old.length - 1 : old.length;
      if (start > 0) {
        // The kept file ends at its greatest time and, in it, its greatest id; the id is read there by the statement,
        // never written into it (ids are upstream text).
        const prev = old[start - 1]!.path;
        const hi = stat.get(prev)!.hi;
        keep = ` AND (${seq} > ${hi} OR (${seq} = ${hi} AND id > (SELECT max(id) FROM read_parquet(${lit(prev)}, hive_partitioning = false) WHERE ${seq} = ${hi})))`;
      }
    }
    plans.push({ month, from: start < old.length ? old[start]!.n : (old.at(-1)?.n ?? 0) + 1, old });
  }
  const lo = first === null ? 0 : monthStart(first);
  return writeMonths(w, t, {
    source: `SELECT ${lakeSelect(ds)} FROM ${qt(ds.table)} WHERE chain_id = ${chainId} AND ${seq} >= ${lo}${keep}`,
    plans,
  });
}

/**
 * Snapshots, the liquidity list and mutable history of one chain: the rows of `runs` go into their months' files,
 * replacing any row of the same `id` and run already there (a run written twice is not doubled); a snapshot the
 * warehouse no longer holds (taken again at the same block) leaves the files. Each month is rewritten from its first
 * file holding a row of those runs or one to remove, or else from its open file if that still has room.
 * With `all`, every month is rewritten from its first file (after a change of the lake's column types); `ids` null
 * takes every row of the chain.
 */
export async function writeRuns(
  w: Sql,
  t: Target,
  runs: {
    readonly ids: readonly string[] | null;
    readonly all: boolean;
    readonly months?: readonly string[];
    /** A run no file of the lake holds a row of yet (the run whose lake write this is, writing it the first time). */
    readonly fresh?: string | undefined;
    /** Rows of open files, by path, as their footers said before this write (`openFileRows`). */
    readonly openRows?: ReadonlyMap<string, number> | undefined;
    /** Rows of other runs may have left the warehouse's table since the files were written (`lake_pending.dropped`). */
    readonly dropped?: boolean;
  },
): Promise<number> {
  const { ds, chainId, fileRows } = t;
  const dir = chainDir(t.root, t, t.part);
  const inRuns =
    runs.ids === null ? 'true' : `_run_id IN (${runs.ids.length > 0 ? runs.ids.map(lit).join(', ') : 'NULL'})`;
  const fresh = `SELECT ${lakeSelect(ds)} FROM ${qt(ds.table)} WHERE chain_id = ${chainId} AND ${inRuns}`;
  // Snapshots and the list: the warehouse holds every snapshot the lake must, and no other (a snapshot taken again at
  // the same block replaced the one before it there); a row of the files it no longer holds goes. A mutable entity's
  // history is the lake's alone: the warehouse keeps the state.
  const stored =
    t.part === 'data' && ds.kind !== 'mutable'
      ? (f: string) =>
          `EXISTS (SELECT 1 FROM ${qt(ds.table)} s WHERE s.chain_id = ${chainId} AND s.id = ${f}.id AND s._run_id IS NOT DISTINCT FROM ${f}._run_id)`
      : () => 'true';
  const months = new Set([...(runs.all ? monthsIn(dir) : []), ...(runs.months ?? [])]);
  if (!runs.months)
    for (const r of await w.all(
      `SELECT DISTINCT ${monthExpr(ds, t.part)} AS m FROM ${qt(ds.table)} WHERE chain_id = ${chainId} AND ${inRuns}`,
    ))
      months.add(String(r.m));
  const plans: MonthPlan[] = [];
  const kept: string[] = [];
  // Only rows of a run no file holds, into files whose rows all stay (a mutable entity's history keeps every row it
  // was given; a snapshot's files, while no row of another run left the warehouse): no file needs searching for rows
  // to replace or remove, and the write starts at the month's open file.
  const appendOnly =
    appendsTo({ ds, runs: runs.ids ?? [], rebuild: runs.all, dropped: runs.dropped ?? true }, runs.fresh) === t.part;
  for (const month of [...months].sort()) {
    let old: MonthPlan['old'] = monthFiles(join(dir, `month=${month}`));
    let start = runs.all ? 0 : old.length;
    if (appendOnly && old.length > 0) {
      const open = old.at(-1)!;
      const rows =
        runs.openRows?.get(open.path) ??
        Number((await w.all(`SELECT num_rows AS n FROM parquet_file_metadata(${lit(open.path)})`))[0]?.n ?? fileRows);
      old = [...old.slice(0, -1), { ...open, rows }];
      start = rows < fileRows ? old.length - 1 : old.length;
    } else if (!runs.all && old.length > 0) {
      // Per file: its rows, and those of the runs written (the first file holding any is where the rewrite starts).
      const per = await w.all(
        `SELECT _file AS f, count(*) AS n, count(*) FILTER (WHERE ${inRuns} OR NOT ${stored('o')}) AS hits FROM read_parquet(${listLit(old.map((f) => f.path))}, filename = '_file', hive_partitioning = false) o GROUP BY ALL`,
      );
      old = old.map((f) => ({ ...f, rows: Number(per.find((r) => r.f === f.path)?.n ?? 0) }));
      const at = old.findIndex((f) => per.some((r) => r.f === f.path && Number(r.hits) > 0));
      const open = old.at(-1)!.rows!;
      start = at >= 0 ? at : open < fileRows ? old.length - 1 : old.length;
    }
    kept.push(...old.slice(start).map((f) => f.path));
    plans.push({ month, from: start < old.length ? old[start]!.n : (old.at(-1)?.n ?? 0) + 1, old });
  }
  const source =
    kept.length === 0
      ? fresh
      : appendOnly
        ? `SELECT * FROM read_parquet(${listLit(kept)}, hive_partitioning = false) UNION ALL BY NAME ${fresh}`
        : `SELECT * FROM read_parquet(${listLit(kept)}, hive_partitioning = false) f WHERE NOT EXISTS (SELECT 1 FROM (${fresh}) n WHERE n.id = f.id AND n._run_id IS NOT DISTINCT FROM f._run_id) AND ${stored('f')}
         UNION ALL BY NAME ${fresh}`;
  return writeMonths(w, t, { source, plans });
}

/** The state of one chain's mutable entities: one file, replaced. */
export async function writeState(w: Sql, t: Target): Promise<number> {
  const { ds, chainId } = t;
  const file = join(chainDir(t.root, t, 'data'), 'data.parquet');
  const tmp = join(lakeTmp(t.lake), tmpName('s', '.parquet'));
  const options = await copyOpts(w, { small: replacesSmall([file]) });
  mkdirSync(dirname(tmp), { recursive: true });
  await w.exec(
    `COPY (SELECT ${lakeSelect(ds)} FROM ${qt(ds.table)} WHERE chain_id = ${chainId} ORDER BY ${STATE_KEY}) TO ${lit(tmp)} (${options})`,
  );
  try {
    publish(t.lake, { renames: [[tmp, file]], removes: [] });
  } finally {
    rmSync(tmp, { force: true });
  }
  return 1;
}
