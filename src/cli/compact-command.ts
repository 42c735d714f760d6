/**
 * `pool-export compact`: rewrites each lake month whose files are more than its rows need. A bucket lake keeps each
 * month in one file (one object), merges any month of more, and publishes what changed.
 */
import { randomUUID } from 'node:crypto';
import { trackedSettings } from '../config/config.ts';
import { compactLake } from '../lake/compact.ts';
import { updateLakeFor } from '../pipeline/lake-step.ts';
import { writeViewsFile } from '../reports/views.ts';
import { Warehouse } from '../store/warehouse.ts';
import type { CommandBody } from './commands.ts';
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
    }),
};
