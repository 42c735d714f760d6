/**
 * A warehouse file made in blocks of another size than `WAREHOUSE_BLOCK_SIZE` (by a version before it, in DuckDB's
 * 256 KiB) keeps that size: DuckDB sets it when it makes a file. `pool-export compact` rewrites such a file into a new
 * one of the current size beside it, checks that every table holds as many rows in both, and only then renames it over
 * the old one; a rewrite that fails or is killed leaves the old file as it was (and its leftover is removed by the next).
 * The caller holds the data folder's lock, and the warehouse is closed with its write-ahead log folded in.
 */
import { existsSync, rmSync } from 'node:fs';
import { dataFolder } from '../config/data-folder.ts';
import { replaceFile } from '../util/atomic-file.ts';
import { lit, q } from '../util/sql.ts';
import { duckdb, WAREHOUSE_BLOCK_SIZE, WAREHOUSE_THREADS } from './warehouse.ts';

/** What a rewrite did: the block size the file had and has, and the rows it copied. */
export interface BlockRewrite {
  readonly from: number;
  readonly to: number;
  readonly rows: number;
}

/** Rewrites the data folder's warehouse in blocks of `size` when it is in others; null when it already is, or absent. */
export async function rewriteWarehouseBlocks(
  dataDir: string,
  size: number = WAREHOUSE_BLOCK_SIZE,
): Promise<BlockRewrite | null> {
  const path = dataFolder(dataDir).warehouse;
  const next = `${path}.rewrite`;
  const removeNext = () => {
    for (const f of [next, `${next}.wal`]) rmSync(f, { force: true });
  };
  removeNext();
  if (!existsSync(path)) return null;
  if (existsSync(`${path}.wal`))
    throw new Error(
      `the warehouse ${path} has a write-ahead log beside it; run any pool-export command that writes (run, migrate) to fold it in, then compact again`,
    );
  const { DuckDBInstance } = await duckdb();
  const db = await DuckDBInstance.create(':memory:', { threads: String(WAREHOUSE_THREADS) });
  const c = await db.connect();
  let rewrite: BlockRewrite | null = null;
  try {
    await c.run(`ATTACH ${lit(path)} AS old_wh (READ_ONLY)`);
    const from = Number(
      (
        await c.runAndReadAll("SELECT block_size AS b FROM pragma_database_size() WHERE database_name = 'old_wh'")
      ).getRowObjects()[0]!.b,
    );
    if (from === size) return null;
    await c.run(`ATTACH ${lit(next)} AS new_wh (BLOCK_SIZE ${Number(size)})`);
    await c.run('COPY FROM DATABASE old_wh TO new_wh');
    // Every table, its rows counted in both files: the new one replaces the old only if they agree.
    const tables = (
      await c.runAndReadAll(
        "SELECT schema_name AS s, table_name AS t FROM duckdb_tables() WHERE database_name = 'old_wh' ORDER BY ALL",
      )
    ).getRowObjects();
    let rows = 0;
    for (const { s, t } of tables) {
      const name = `${q(String(s))}.${q(String(t))}`;
      const [n] = (
        await c.runAndReadAll(
          `SELECT (SELECT count(*) FROM old_wh.${name}) AS a, (SELECT count(*) FROM new_wh.${name}) AS b`,
        )
      ).getRowObjects();
      if (n!.a !== n!.b)
        throw new Error(
          `the rewrite of the warehouse copied ${n!.b} of the ${n!.a} rows of ${s}.${t}; the old file is kept`,
        );
      rows += Number(n!.a);
    }
    await c.run('DETACH new_wh');
    await c.run('DETACH old_wh');
    rewrite = { from, to: size, rows };
  } finally {
    c.closeSync();
    db.closeSync();
    if (!rewrite) removeNext();
  }
  // Detached, the new file holds everything: a log left beside it would be replayed on the wrong file.
  if (existsSync(`${next}.wal`)) {
    removeNext();
    throw new Error(`the rewrite of the warehouse ${path} left a write-ahead log; the old file is kept`);
  }
  replaceFile(next, path);
  return rewrite;
}
