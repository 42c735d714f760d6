/**
 * Where a rewrite of a month cuts its rows into files. A full file keeps its key range for good: a rewrite that
 * replaces it (a re-read window reaching back into it, a reorganisation) writes into it exactly the rows of its range,
 * however many they are now, so that no row ever moves from one file to another. Files are replaced one by one (a
 * rename each, an object each in a bucket), so a reader listing the folder or the bucket's prefix meanwhile sees each
 * row in one file, the old one or the new one, never in two and never in none. Rows past the last full file's range go
 * into the open file and, beyond `fileRows`, into new files after it.
 *
 * Cutting by count instead moved rows across files whenever a rewrite changed how many rows a full file held: between
 * the two renames such a row was in both files, or in neither.
 */
import type { Sql } from '../store/sql-port.ts';
import { lit } from '../util/sql.ts';

/** One file of a rewrite: its number, and its rows as a range of the staged rows' `file_row_number`. */
export interface Cut {
  readonly n: number;
  readonly first: number;
  readonly count: number;
}

/** A month's files, as `monthFiles` lists them, with their rows where the caller read them. */
type File = { readonly n: number; readonly path: string; readonly rows?: number | undefined };

/**
 * The full files among those a rewrite replaces (`replaced`, in order): every one but the last, and the last too when
 * it holds `fileRows` rows or more (a month written whole as one file, as bucket lakes of earlier versions were). The
 * last one's rows are read from its footer unless given.
 */
export async function fullFiles(w: Sql, replaced: readonly File[], fileRows: number): Promise<File[]> {
  const last = replaced.at(-1);
  if (!last) return [];
  const rows =
    last.rows ?? Number((await w.all(`SELECT num_rows AS n FROM parquet_file_metadata(${lit(last.path)})`))[0]?.n);
  return rows >= fileRows ? [...replaced] : replaced.slice(0, -1);
}

/**
 * The files of one month's rewrite: the month's staged rows (`first`, `n`: its run of `staged`, sorted by `key`) cut
 * at the upper key of each full file (`full`), then the rest `fileRows` a file, numbered from `next`.
 */
export async function cutMonth(
  w: Sql,
  m: {
    readonly staged: string;
    readonly month: string;
    readonly key: string;
    readonly first: number;
    readonly n: number;
    readonly full: readonly File[];
    readonly next: number;
    readonly fileRows: number;
  },
): Promise<Cut[]> {
  const cuts: Cut[] = [];
  let done = 0;
  if (m.full.length > 0) {
    // Rows up to each full file's last key (its greatest, the files being in key order); compared as one row value,
    // the order the staging sort wrote them in. The keys are read there by the statement, never written into it.
    const upTo = m.full.map(
      (f, i) =>
        `count(*) FILTER (WHERE row(${m.key}) <= (SELECT row(${m.key}) FROM read_parquet(${lit(f.path)}, hive_partitioning = false) ORDER BY row(${m.key}) DESC LIMIT 1)) AS c${i}`,
    );
    const [r] = await w.all(`SELECT ${upTo.join(', ')} FROM ${m.staged} WHERE "month" = ${lit(m.month)}`);
    for (const [i, f] of m.full.entries()) {
      const upto = Number(r?.[`c${i}`] ?? 0);
      cuts.push({ n: f.n, first: m.first + done, count: upto - done });
      done = upto;
    }
  }
  for (let i = 0; done + i * m.fileRows < m.n; i++) {
    const first = done + i * m.fileRows;
    cuts.push({ n: m.next + i, first: m.first + first, count: Math.min(m.fileRows, m.n - first) });
  }
  return cuts.filter((c) => c.count > 0);
}
