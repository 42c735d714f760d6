/** `pool-export migrate`: brings a warehouse written by an earlier version to this one's schema, and rebuilds the lake. */
import type { CommandModule } from 'yargs';
import { loadConfig, trackedSettings } from '../config/config.ts';
import { writeLake } from '../lake/lake-writer.ts';
import { writeViewsFile } from '../lake/lake-db.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { SCHEMA_VERSION } from '../store/migrations.ts';
import { StatusKeeper } from '../store/status-file.ts';
import { Warehouse } from '../store/warehouse.ts';

interface Args {
  'data-dir'?: string;
  config?: string;
  'wait-lock': number;
}

/** The yargs module of the `migrate` command. */
export const migrateCommand: CommandModule<object, Args> = {
  command: 'migrate',
  describe: `Upgrade a warehouse written by an earlier version to schema version ${SCHEMA_VERSION}, and rewrite the lake files that change (any run does this too)`,
  builder: (y) =>
    y
      .option('data-dir', { type: 'string', describe: 'data folder' })
      .option('config', { type: 'string', describe: 'JSON config file' })
      .option('wait-lock', { type: 'number', default: 60, describe: 'seconds to wait while a run holds the data folder' }),
  handler: async (a) => {
    const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
    const lock = await lockDataDir(config.dataDir, 'migrate', a['wait-lock'], () => undefined);
    try {
      // Opening for writing migrates, in one transaction; the lake files it marked are then rewritten.
      const w = await Warehouse.open(config.dataDir);
      try {
        const files = await writeLake(w, config.dataDir);
        await writeViewsFile(config.dataDir, trackedSettings(config));
        await (await StatusKeeper.start(w, config.dataDir, 'migrate')).end();
        process.stdout.write(`the warehouse in ${config.dataDir} is at schema version ${SCHEMA_VERSION}; ${files} lake files rewritten\n`);
      } finally {
        await w.close();
      }
    } finally {
      await lock.release();
    }
  },
};
