/**
 * The lake's files, as the writer and the other tools of the lake make them: their Parquet options, their names (a
 * month's `part-NNNNN.parquet` files, in order) and how a write is published: renames over the files it replaces,
 * then removals, listed first in a journal (`.tmp/publish.json`) that the next write finishes if a process died
 * halfway, so no file is ever left half-published.
 */
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Sql } from '../store/sql-port.ts';
import { replaceFiles, writeFileAtomic } from '../util/atomic-file.ts';
import { lakeTmp } from './layout.ts';

/** Rows per Parquet row group: large enough for good compression, small enough for readers to skip groups. */
const ROW_GROUP_SIZE = 122_880;

/**
 * zstd at level 1 rather than DuckDB's 3: on 102,101 swaps (61 day files) the COPY took 454–467 ms against 589–655 ms,
 * and the files came out at 22.2 MB against 22.5 MB (three runs each, alternated).
 */
const ZSTD_LEVEL = 1;

/**
 * A row group also ends at 16 MB of data, so that a writer holding one (per thread) stays small with wide rows: at
 * 122,880 rows a row group of swaps alone took more than DuckDB's 204 MiB in a 512 MiB container. DuckDB takes this
 * only where it need not preserve insertion order, as under a memory limit (`Warehouse.open`); elsewhere (no limit)
 * row groups end at their row count alone.
 */
const ROW_GROUP_BYTES = '16MB';

/** The codec of a lake file: zstd, or snappy for a small one (`SMALL_FILE_BYTES`). */
const CODEC = { zstd: `COMPRESSION zstd, COMPRESSION_LEVEL ${ZSTD_LEVEL}`, snappy: 'COMPRESSION snappy' } as const;

/**
 * A file that replaces files of less than this many bytes in all is written in snappy rather than zstd. zstd costs
 * DuckDB about 2.5 ms a file more whatever its rows (a state file of 15 rows of `pairs`, 100 leaf columns: 6.2 ms
 * against 8.7 ms; its history file: 12.0 ms against 14.8 ms; medians of 21), and such files are nearly all a run after
 * a few new blocks writes: 218 of the 224 after 100 blocks on the demo's 8 chains, 3.87 MB in all where zstd made 3.38
 * MB. A file that grows past this size is written in zstd again at its next rewrite, as is every file that replaces
 * none (a backfill's, a month's first): the large files, which readers and a bucket pay for, stay zstd.
 */
export const SMALL_FILE_BYTES = 64 * 1024;

/** The row group options of each connection's COPYs: its database's settings do not change while it is open. */
const rowGroupsOf = new WeakMap<Sql, Promise<string>>();

/**
 * The options of every COPY to the lake, for the settings of `w`'s database (read once per connection); with `small`,
 * those of a file that replaces files of less than `SMALL_FILE_BYTES` (`replacesSmall`).
 */
export async function copyOpts(w: Sql, opts: { readonly small?: boolean } = {}): Promise<string> {
  let rowGroups = rowGroupsOf.get(w);
  if (!rowGroups) {
    const rows = `ROW_GROUP_SIZE ${ROW_GROUP_SIZE}`;
    rowGroups = w
      .all("SELECT current_setting('preserve_insertion_order') AS keep")
      .then(([r]) => (r?.keep === false ? `${rows}, ROW_GROUP_SIZE_BYTES '${ROW_GROUP_BYTES}'` : rows));
    rowGroupsOf.set(w, rowGroups);
    rowGroups.catch(() => rowGroupsOf.delete(w));
  }
  return `FORMAT parquet, ${opts.small ? CODEC.snappy : CODEC.zstd}, ${await rowGroups}`;
}

/** Whether `files` (those a write replaces) are some, and of less than `SMALL_FILE_BYTES` in all. */
export function replacesSmall(files: readonly string[]): boolean {
  let bytes = 0;
  for (const f of files) bytes += statSync(f, { throwIfNoEntry: false })?.size ?? SMALL_FILE_BYTES;
  return files.length > 0 && bytes < SMALL_FILE_BYTES;
}

/** The name of a month's `n`-th file. */
export const partName = (n: number) => `part-${String(n).padStart(5, '0')}.parquet`;
const PART = /^part-(\d{5})\.parquet$/;

/** The steps that publish a write: renames of finished files into place, then removals. */
export interface Publish {
  readonly renames: [from: string, to: string][];
  readonly removes: string[];
}

const journalFile = (lake: string) => join(lakeTmp(lake), 'publish.json');

function replay(p: Publish): void {
  replaceFiles(p.renames.filter(([from]) => existsSync(from)));
  for (const f of p.removes) rmSync(f, { force: true });
  // A month left without files goes too, so that no empty partition folder stays behind.
  for (const f of p.removes) {
    const dir = dirname(f);
    if (existsSync(dir) && readdirSync(dir).length === 0) rmSync(dir, { recursive: true });
  }
}

/**
 * Publishes a write: the journal first, so that a crash in the middle is finished by `recoverPublish`. A write of one
 * file that removes none (nearly every run's, for each table path) is one rename, which a crash cannot leave halfway:
 * it needs no journal. The journal's two syncs were half of the lake write's (448 of 896 after 100 new blocks on the
 * demo's 8 chains, `strace -f -c -e trace=fsync`), and each held up every lane (their statements are sent from this
 * thread) while it waited for the disk: the lake write took 1.8 s without them, 2.2-2.3 s with them.
 */
export function publish(lake: string, p: Publish): void {
  if (p.removes.length === 0 && p.renames.length <= 1) return replay(p);
  const file = journalFile(lake);
  writeFileAtomic(file, JSON.stringify(p));
  replay(p);
  rmSync(file);
}

/** Finishes a publish that a dead process left halfway, then clears the temporary folder. */
export function recoverPublish(lake: string): void {
  const file = journalFile(lake);
  if (existsSync(file)) {
    replay(JSON.parse(readFileSync(file, 'utf8')) as Publish);
    rmSync(file);
  }
  rmSync(lakeTmp(lake), { recursive: true, force: true });
}

/** The `part-` files of a month folder, in order. */
export function monthFiles(dir: string): { n: number; path: string }[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .map((name) => PART.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ n: Number(m[1]), path: join(dir, m[0]) }))
    .sort((a, b) => a.n - b.n);
}

/** The month folders of a chain folder, by month. */
export function monthsIn(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((n) => /^month=\d{4}-\d{2}$/.test(n))
    .map((n) => n.slice(6))
    .sort();
}
