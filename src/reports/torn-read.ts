/**
 * A read of the lake torn by a run: DuckDB reads a Parquet file's footer and its row groups through separate opens, so
 * a query under way when a run replaces one of its files can fail (`bench/reader-race.ts`; `docs/bucket.md`). The
 * readers of this project (`query`, `report`, the dashboard) ask such a read again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { DuckDBConnection } from '@duckdb/node-api';

/**
 * What DuckDB says when a query read a Parquet file's footer and its row groups through separate opens, and a run
 * replaced the file in between (`bench/reader-race.ts`; `docs/bucket.md`): asked again, the query reads the new file.
 * A file written in zstd can be replaced by one in snappy and back (`lake-files.ts` `SMALL_FILE_BYTES`): the old
 * footer's codec over the new bytes fails as "ZSTD Decompression failure" or "Snappy decompression failure".
 */
export const TORN_READ =
  /TProtocolException|Could not read enough bytes|No magic bytes found|don't know what type|invalid TType|Variable-length int|[Dd]ecompression failure|data size mismatch/;

/**
 * Times a result is asked for in all while its read is torn. Two readers of a file replaced without pause failed 7.7%
 * of their reads (`bench/reader-race.ts`); a run replaces a file once, and each try waits a little longer (`untorn`).
 */
export const TORN_TRIES = 5;

/**
 * `read`, asked again while it fails with a torn read (`TORN_READ`), up to `TORN_TRIES` times in all, each time after a
 * pause of a few milliseconds more (at most 0.1 s in all): a try made at once can meet the same replacement again.
 */
export async function untorn<T>(read: () => Promise<T>): Promise<T> {
  for (let tries = 1; ; tries++)
    try {
      return await read();
    } catch (e) {
      if (tries >= TORN_TRIES || !TORN_READ.test(String(e))) throw e;
      await sleep(tries * (2 + Math.random() * 8));
    }
}

/** A query's rows as JSON-safe objects, asked again while a run's replacement of a file tears its read (`untorn`). */
export function untornRows<Row>(conn: DuckDBConnection, sql: string): Promise<Row[]> {
  return untorn(async () => (await conn.runAndReadAll(sql)).getRowObjectsJson() as Row[]);
}
