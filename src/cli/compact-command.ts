/** `pool-export compact`: merges the lake's per-run part files, partition by partition. */
import type { CommandModule } from 'yargs';
import { loadConfig, trackedSettings } from '../config/config.ts';
import { compactLake } from '../lake/compact.ts';
import { writeViewsFile } from '../lake/lake-db.ts';
import { lockDataDir } from '../store/data-lock.ts';

interface Args {
  'data-dir'?: string;
  config?: string;
  'wait-lock': number;
}

/** The yargs module of the `compact` command. */
export const compactCommand: CommandModule<object, Args> = {
  command: 'compact',
  describe: 'Merge the Parquet lake\'s per-run part files into one file per partition',
  builder: (y) =>
    y
      .option('data-dir', { type: 'string', describe: 'data folder' })
      .option('config', { type: 'string', describe: 'JSON config file' })
      .option('wait-lock', { type: 'number', default: 60, describe: 'seconds to wait while a run holds the data folder' }),
  handler: async (a) => {
    const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
    const lock = await lockDataDir(config.dataDir, 'compact', a['wait-lock'], () => undefined);
    try {
      const r = await compactLake(config.dataDir);
      await writeViewsFile(config.dataDir, trackedSettings(config));
      process.stdout.write(`compacted ${r.files} files in ${r.partitions} partitions\n`);
    } finally {
      await lock.release();
    }
  },
};
