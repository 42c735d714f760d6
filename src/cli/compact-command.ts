/**
 * `pool-export compact`: rewrites each lake month whose files are more than its rows need. A bucket lake keeps each
 * month in one file (one object), merges any month of more, and publishes what changed. Then a warehouse file made in
 * blocks of another size than the current one is rewritten in it (`store/warehouse-blocks.ts`).
 */
import { randomUUID } from 'node:crypto';
import { trackedSettings } from '../config/config.ts';
import { compactLake } from '../lake/compact.ts';
import { updateLakeFor } from '../pipeline/lake-step.ts';
import { writeViewsFile } from '../reports/views.ts';
import { Warehouse } from '../store/warehouse.ts';
import { rewriteWarehouseBlocks } from '../store/warehouse-blocks.ts';
import type { CommandBody } from './command-body.ts';
import { type MaintenanceArgs, maintenanceOptions, withDataLock } from './write-options.ts';

/** The yargs module of the `compact` command. */
export const compactCommand: CommandBody<MaintenanceArgs> = {
  builder: (y) => maintenanceOptions(y),
  handler: (a) =>
    withDataLock(a, 'compact', async (config) => {
      const w = await Warehouse.open(config.dataDir);
      try {
        const r = await compactLake(w, config.dataDir);
        if (config.lake.bucket) await updateLakeFor(w, config, { runId: `compact-${randomUUID()}` });
        await writeViewsFile(config.dataDir, trackedSettings(config));
        process.stdout.write(`compacted ${r.files} files in ${r.partitions} partitions\n`);
      } finally {
        await w.close();
      }
      // Closed, its log folded in: a warehouse an earlier version made in larger blocks is rewritten in the current
      // size (a run's commits cost less in it).
      const blocks = await rewriteWarehouseBlocks(config.dataDir);
      if (blocks)
        process.stdout.write(
          `rewrote the warehouse in blocks of ${blocks.to / 1024} KiB (it was in ${blocks.from / 1024} KiB): ${blocks.rows} rows\n`,
        );
    }),
};
