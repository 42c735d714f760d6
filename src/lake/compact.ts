/** Compaction: merges the per-run part files of each lake partition into one file (temp name, rename, then delete). */

import { existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { duckdb } from '../store/warehouse.ts';
import { lit } from '../util/sql.ts';
import { LAKE_DIR } from './layout.ts';

/** Folders holding more than one part file. */
function partitions(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const names = readdirSync(dir);
  const parts = names.filter((n) => n.startsWith('part-') && n.endsWith('.parquet'));
  const here = parts.length > 1 ? [dir] : [];
  return [
    ...here,
    ...names
      .filter((n) => n !== '.tmp' && statSync(join(dir, n)).isDirectory())
      .flatMap((n) => partitions(join(dir, n))),
  ];
}

/** Compacts the lake of a data folder; the caller holds the data-folder lock. Returns partitions and files merged. */
export async function compactLake(dataDir: string): Promise<{ partitions: number; files: number }> {
  const instance = await (await duckdb()).DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  let files = 0;
  const dirs = partitions(join(dataDir, LAKE_DIR));
  try {
    for (const dir of dirs) {
      const parts = readdirSync(dir)
        .filter((n) => n.startsWith('part-') && n.endsWith('.parquet'))
        .sort()
        .map((n) => join(dir, n));
      const target = join(dir, `part-compacted-${Date.now()}.parquet`);
      await conn.run(
        `COPY (SELECT * FROM read_parquet([${parts.map(lit).join(', ')}], union_by_name = true)) TO ${lit(`${target}.tmp`)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      renameSync(`${target}.tmp`, target);
      for (const p of parts) rmSync(p);
      files += parts.length;
    }
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  return { partitions: dirs.length, files };
}
