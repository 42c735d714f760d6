/**
 * Compaction: a month whose files are more than its rows need (`FILE_ROWS` each) is rewritten from its own files. Runs
 * keep months compact as they write (`lake-writer.ts`); what can leave a month with a small file in its middle is a
 * rewrite deep in the past, after the upstream reorganized blocks a whole file back.
 */

import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DATASETS } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { LakeLayoutError } from '../errors.ts';
import type { Warehouse } from '../store/warehouse.ts';
import { lit } from '../util/sql.ts';
import { monthFiles, monthsIn, recoverPublish } from './lake-files.ts';
import {
  byMonth,
  chainDir,
  chainOfFolder,
  FILE_ROWS,
  LAYOUT_VERSION,
  lakeLayout,
  type TablePart,
  tableDir,
} from './layout.ts';
import { writeMonths } from './month-writes.ts';

/** Compacts the lake of a data folder; the caller holds the data-folder lock. Returns the months and files merged. */
export async function compactLake(
  w: Warehouse,
  dataDir: string,
  fileRows = FILE_ROWS,
): Promise<{ partitions: number; files: number }> {
  const lake = dataFolder(dataDir).lake;
  const layout = lakeLayout(lake);
  if (layout === null) return { partitions: 0, files: 0 };
  if (layout !== LAYOUT_VERSION) throw new LakeLayoutError(lake, { found: layout, needed: LAYOUT_VERSION });
  recoverPublish(lake);
  let partitions = 0;
  let files = 0;
  for (const ds of DATASETS)
    for (const part of ['data', 'history'] as TablePart[]) {
      const dir = tableDir(lake, ds, part);
      if (!byMonth(ds, part) || !existsSync(dir)) continue;
      for (const chain of readdirSync(dir).filter((n) => n.startsWith('chain='))) {
        const chainId = chainOfFolder(chain);
        const base = chainDir(lake, { ds, chainId }, part);
        for (const month of monthsIn(base)) {
          const old = monthFiles(join(base, `month=${month}`));
          if (old.length < 2) continue;
          const list = `[${old.map((f) => lit(f.path)).join(', ')}]`;
          const rows = Number(
            (await w.all(`SELECT count(*) AS n FROM read_parquet(${list}, hive_partitioning = false)`))[0]!.n,
          );
          if (old.length <= Math.ceil(rows / fileRows)) continue;
          const target = { ds, chainId, part, root: lake, lake, fileRows };
          await writeMonths(w, target, {
            source: `SELECT * FROM read_parquet(${list}, hive_partitioning = false)`,
            plans: [{ month, from: 1, old }],
            recut: true,
          });
          partitions++;
          files += old.length;
        }
      }
    }
  return { partitions, files };
}
