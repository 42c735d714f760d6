/**
 * One COPY for the same file of several chains: a run after a few new blocks rewrites, for each dataset, the state file
 * and the open history (or snapshot) file of every chain, and DuckDB's cost per COPY at 50-200 columns (binding the
 * columns, and a Parquet writer per column) is far above its cost per row at these sizes. Written apart, the state and
 * history files of 5 datasets on the demo's 8 chains took 240 ms; one partitioned COPY per dataset and part, 114 ms.
 *
 * Such a COPY writes one folder per chain (`PARTITION_BY`), each file then renamed into place as the entry's own write
 * would have (one rename, which a crash cannot leave halfway), with the same rows, order and codec. It is made only
 * where that holds:
 * - DuckDB runs the statement on one thread: on more, a partitioned COPY writes rows out of their `ORDER BY` order
 *   (duckdb/duckdb#14349, open; on 4 threads, 3-5 of 600,000 rows landed out of order in each of four trials here,
 *   with or without a `LIMIT` over the sort);
 * - the lake write has lanes to spare (`lakeLanes` above one: no memory limit, or 1 GiB and more), since each chain's
 *   open file holds a row group of its own while the COPY runs;
 * - the file is one the entry's own write would write as a single file: the state file, or the rows of the run being
 *   written alone (`appendsTo`) into one month's open file (or that month's next or first file); a chain whose file
 *   would pass `fileRows` is left to its entry, which cuts it;
 * - its files hold at most `CHAIN_ROWS` rows in all: those of the open files kept (their footers) and of the entries'
 *   runs (`readPending`), or for states their table's on every chain (DuckDB's catalog): DuckDB holds a partitioned
 *   COPY's rows in memory until it writes them (in a 256 MB limit, 1,500,000 rows of 42 columns in 8 partitions ran
 *   out of memory).
 * Whatever a COPY of several chains does not write (a chain it left, a COPY that failed), the entry writes itself.
 */
import { mkdirSync, rmSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { Dataset } from '../catalog/catalog.ts';
import type { Sql } from '../store/sql-port.ts';
import { listLit, lit, q, qt } from '../util/sql.ts';
import { copyOpts, monthFiles, partName, publish, replacesSmall } from './lake-files.ts';
import { chainDir, hasHistory, lakeSelect, orderKey, STATE_KEY, type TablePart } from './layout.ts';

/** A pending entry, as the lake write reads it (`readPending`). */
export interface ChainEntry {
  readonly ds: Dataset | undefined;
  readonly chainId: number;
  readonly runs: readonly string[];
  readonly rebuild: boolean;
  readonly dropped: boolean;
  readonly months?: readonly string[] | undefined;
  /** The rows of `runs` on the chain (`readPending`). */
  readonly runRows?: number | undefined;
}

/** Whether an entry's runs are run `fresh` alone: rows no file of the lake holds yet (`writeLake`'s `freshRun`). */
const onlyRun = (ids: readonly string[] | null, fresh: string | undefined): boolean =>
  fresh !== undefined && ids?.length === 1 && ids[0] === fresh;

/**
 * The table path an entry only adds rows to, with no file to search: the rows of run `fresh` alone, into a mutable
 * entity's history (the lake's alone: every row stays), or into a snapshot's or the list's files when no row of
 * another run left the warehouse since they were written (`dropped`). Null otherwise.
 */
export function appendsTo(
  e: {
    readonly ds: Dataset | undefined;
    readonly runs: readonly string[];
    readonly rebuild: boolean;
    readonly dropped: boolean;
  },
  fresh: string | undefined,
): TablePart | null {
  if (!e.ds || e.rebuild || !onlyRun(e.runs, fresh)) return null;
  if (e.ds.kind === 'mutable') return hasHistory(e.ds) ? 'history' : null;
  return (e.ds.kind === 'snapshot' || e.ds.kind === 'list') && !e.dropped ? 'data' : null;
}

/** One chain's file in a COPY of several chains. */
interface ChainFile {
  /** The entry's key, `<chain id>/<dataset>`. */
  readonly entry: string;
  readonly chainId: number;
  /** Where the file goes. */
  readonly target: string;
  /** The open file whose rows the new file keeps (it replaces it); undefined where it replaces none or is a state file. */
  readonly kept: string | undefined;
  /** Appends: at most how many rows the file will hold (those of the file it keeps, and of the entry's runs). */
  readonly rows: number;
}

/** A COPY of several chains' files of one table path. */
export interface ChainWrite {
  readonly ds: Dataset;
  readonly part: TablePart;
  /** Appends: the run whose rows are added to the kept files. Undefined: the state, whole. */
  readonly run: string | undefined;
  /** Written in snappy: every file replaces one of less than `SMALL_FILE_BYTES` (`replacesSmall`). */
  readonly small: boolean;
  readonly files: readonly ChainFile[];
}

/**
 * The COPYs of several chains that the pending `entries` allow (see the module's header), each of two files or more.
 * `openRows`: rows of open files by path (`openFileRows`); an append whose open file is not in it is left to its entry,
 * as is one whose runs' rows are not known.
 */
export function planChainWrites(
  entries: readonly ChainEntry[],
  at: {
    readonly lake: string;
    readonly fresh: string | undefined;
    readonly openRows: ReadonlyMap<string, number> | undefined;
    readonly fileRows: number;
    /** A table's rows on every chain (DuckDB's estimate, deleted rows not yet vacuumed included); undefined: unknown. */
    readonly tableRows: (table: string) => number | undefined;
  },
): ChainWrite[] {
  const groups = new Map<string, Omit<ChainWrite, 'files'> & { files: ChainFile[] }>();
  const add = (g: Omit<ChainWrite, 'files'>, keeps: boolean, f: ChainFile) => {
    // Files that keep an open file's rows and files that start anew are written apart: each takes the column order of
    // what it is made from, as the entry's own write would.
    const key = JSON.stringify([g.ds.name, g.part, g.run ?? null, g.small, keeps]);
    const group = groups.get(key) ?? { ...g, files: [] };
    group.files.push(f);
    groups.set(key, group);
  };
  for (const e of entries) {
    const ds = e.ds;
    if (!ds || e.rebuild) continue;
    const entry = `${e.chainId}/${ds.name}`;
    if (ds.kind === 'mutable') {
      const target = join(chainDir(at.lake, { ds, chainId: e.chainId }, 'data'), 'data.parquet');
      add({ ds, part: 'data', run: undefined, small: replacesSmall([target]) }, false, {
        entry,
        chainId: e.chainId,
        target,
        kept: undefined,
        rows: 0,
      });
    }
    const part = appendsTo(e, at.fresh);
    // An append holds the rows of the file it keeps, and at most those of the entry's runs.
    if (!part || e.months?.length !== 1 || e.runRows === undefined) continue;
    const month = join(chainDir(at.lake, { ds, chainId: e.chainId }, part), `month=${e.months[0]!}`);
    const open = monthFiles(month).at(-1);
    const rows = open && at.openRows?.get(open.path);
    if (open && rows === undefined) continue;
    const kept = open && rows! < at.fileRows ? open.path : undefined;
    const target = kept ?? join(month, partName((open?.n ?? 0) + 1));
    add({ ds, part, run: at.fresh, small: kept !== undefined && replacesSmall([kept]) }, kept !== undefined, {
      entry,
      chainId: e.chainId,
      target,
      kept,
      rows: (kept === undefined ? 0 : rows!) + e.runRows,
    });
  }
  // A state holds its table's rows on its chain: the table's, on every chain, bound them.
  const rows = (g: Omit<ChainWrite, 'files'> & { files: ChainFile[] }) =>
    g.run === undefined ? (at.tableRows(g.ds.table) ?? Infinity) : g.files.reduce((n, f) => n + f.rows, 0);
  return [...groups.values()].filter((g) => g.files.length > 1 && rows(g) <= CHAIN_ROWS);
}

/**
 * The most rows a COPY of several chains writes: DuckDB holds the rows of a partitioned COPY until they pass its
 * `partitioned_write_flush_threshold` (524,288 rows), where the entry's own write holds a row group of one file (at most
 * 16 MB under a memory limit). A run after a few new blocks writes tens or hundreds of rows a dataset; a larger write (a
 * catch-up, a large state) is left to the entries.
 */
export const CHAIN_ROWS = 10_000;

/** The column a COPY of several chains partitions its rows by: named with a space, as no upstream field is. */
const CHAIN_COLUMN = 'pool-export chain';

/**
 * Writes `c` into `tmp` (a folder of the lake's `.tmp/` that does not exist yet) in one COPY, then publishes each
 * chain's file; returns the entries whose file is in place. A chain the COPY wrote no single file for, or (appends)
 * more rows than `fileRows`, is left out, its file never published: its entry writes it.
 */
export async function writeChains(
  w: Sql,
  c: ChainWrite,
  at: { readonly lake: string; readonly tmp: string; readonly fileRows: number },
): Promise<string[]> {
  const chains = c.files.map((f) => {
    if (!Number.isSafeInteger(f.chainId)) throw new Error(`not a chain id: ${f.chainId}`);
    return f.chainId;
  });
  const rows = `SELECT ${lakeSelect(c.ds)} FROM ${qt(c.ds.table)} WHERE chain_id IN (${chains.join(', ')})${
    c.run === undefined ? '' : ` AND _run_id = ${lit(c.run)}`
  }`;
  const kept = c.files.flatMap((f) => (f.kept ? [f.kept] : []));
  const source =
    kept.length > 0
      ? `SELECT * FROM read_parquet(${listLit(kept)}, hive_partitioning = false, union_by_name = true) UNION ALL BY NAME ${rows}`
      : rows;
  // The state in the order of `writeState`; appends in the key order of their table path.
  const key = c.run === undefined ? STATE_KEY : orderKey(c.ds, c.part);
  const options = await copyOpts(w, { small: c.small });
  // DuckDB makes the folder of a partitioned COPY, not its parents.
  mkdirSync(dirname(at.tmp), { recursive: true });
  const stats = await w.all(
    `COPY (SELECT *, "chain_id" AS ${q(CHAIN_COLUMN)} FROM (${source}) ORDER BY "chain_id", ${key}) TO ${lit(at.tmp)} (${options}, PARTITION_BY (${q(CHAIN_COLUMN)}), RETURN_STATS true)`,
  );
  // Each file's chain, from its partition folder (`<column>=<chain id>`).
  const byChain = new Map<number, { file: string; count: number }[]>();
  for (const s of stats) {
    const file = String(s.filename);
    const chain = Number(basename(dirname(file)).split('=').at(-1));
    byChain.set(chain, [...(byChain.get(chain) ?? []), { file, count: Number(s.count) }]);
  }
  const done: string[] = [];
  try {
    for (const f of c.files) {
      const got = byChain.get(f.chainId);
      if (got?.length !== 1 || (c.run !== undefined && got[0]!.count > at.fileRows)) continue;
      publish(at.lake, { renames: [[got[0]!.file, f.target]], removes: [] });
      done.push(f.entry);
    }
  } finally {
    rmSync(at.tmp, { recursive: true, force: true });
  }
  return done;
}
