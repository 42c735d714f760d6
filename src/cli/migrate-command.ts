/** `pool-export migrate`: brings a warehouse written by an earlier version to this one's schema, and rebuilds the lake. */

import { randomUUID } from 'node:crypto';
import { trackedSettings } from '../config/config.ts';
import { updateLakeFor } from '../pipeline/lake-step.ts';
import { writeViewsFile } from '../reports/views.ts';
import { SCHEMA_VERSION } from '../store/migrations.ts';
import { StatusKeeper } from '../store/status-file.ts';
import { Warehouse } from '../store/warehouse.ts';
import type { CommandBody } from './command-body.ts';
import { type MaintenanceArgs, maintenanceOptions, withDataLock } from './write-options.ts';

/** The yargs module of the `migrate` command. */
export const migrateCommand: CommandBody<MaintenanceArgs> = {
  builder: (y) => maintenanceOptions(y),
  handler: (a) =>
    withDataLock(a, 'migrate', async (config) => {
      // Opening for writing migrates, in one transaction; the lake files it marked are then rewritten.
      const w = await Warehouse.open(config.dataDir);
      try {
        const files = await updateLakeFor(w, config, { runId: `migrate-${randomUUID()}` });
        await writeViewsFile(config.dataDir, trackedSettings(config));
        await (await StatusKeeper.start(w, config.dataDir, 'migrate')).end();
        process.stdout.write(
          `the warehouse in ${config.dataDir} is at schema version ${SCHEMA_VERSION}; ${files} lake files rewritten\n`,
        );
      } finally {
        await w.close();
      }
    }),
};
