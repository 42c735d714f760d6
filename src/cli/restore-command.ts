/**
 * `pool-export restore`: rebuilds the data folder's warehouse from its bucket lake (the lake's objects and the
 * exporter's state that the last publish left in `_state/`), so that a lost machine loses nothing. Any run on a data
 * folder without a warehouse does the same first.
 */
import { UsageError } from '../errors.ts';
import { withBucket } from '../pipeline/lake-step.ts';
import type { CommandBody } from './command-body.ts';
import { type MaintenanceArgs, maintenanceOptions, withDataLock } from './write-options.ts';

/** The yargs module of the `restore` command. */
export const restoreCommand: CommandBody<MaintenanceArgs> = {
  builder: (y) => maintenanceOptions(y),
  handler: (a) =>
    withDataLock(a, 'restore', async (config) => {
      if (!config.lake.bucket)
        throw new UsageError(
          'restore rebuilds a warehouse from a bucket lake, and none is configured: set lake.url in the config file, or POOL_EXPORT_LAKE_URL, to s3://bucket/prefix',
        );
      await withBucket(config, async (bucket) => {
        const { restore } = await import('../bucket/fetch.ts');
        const started = performance.now();
        const r = await restore(bucket, config.dataDir);
        const secs = ((performance.now() - started) / 1000).toFixed(1);
        process.stdout.write(
          `restored the warehouse of ${config.dataDir} from ${bucket.show()} in ${secs} s: ${r.rows} rows; ${r.objects} objects fetched (${(r.bytes / 1e6).toFixed(1)} MB), ${r.kept} already here; state of run ${r.runId}\n`,
        );
      });
    }),
};
