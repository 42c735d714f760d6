/**
 * The sources a data folder exports when no job is named: the subgraphs added to it (the config file's `subgraphs` and
 * the folder's own list), and DODO's jobs, the preset. A folder is a subgraph folder, whose plain `run`, `schedule`,
 * `status` and `jobs` never meet DODO, when all three hold:
 *   - subgraphs are added to it (one set aside counts: `catalog/subgraphs.ts`);
 *   - no DODO API key is set (`POOL_EXPORT_API_KEY`, or `apiKey` in the config file): a subgraph's own endpoint needs
 *     none;
 *   - DODO has exported nothing into it (no table of DODO's in its lake): a DODO folder whose key went missing from a
 *     cron job's environment stops with "no API key" instead of quietly dropping DODO's datasets.
 * Every other folder takes DODO's jobs as it always has, with its subgraphs. Naming a job (`--jobs`) or a dataset
 * (`--datasets`) takes it in any folder.
 */
import { existsSync } from 'node:fs';
import { DATASETS } from '../catalog/catalog.ts';
import type { Job } from '../catalog/job.ts';
import { setAsideSubgraphs, subgraphJob, subgraphOf } from '../catalog/subgraphs.ts';
import type { Config } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { tableDir } from '../lake/layout.ts';

/** What a folder exports when no job is named, and why DODO's jobs are in it or not. */
export interface FolderSources {
  /** DODO's jobs, when they are part of the folder's sources, then a job per subgraph. */
  readonly jobs: readonly Job[];
  /** Whether DODO's jobs are among them. */
  readonly dodo: boolean;
  /** Why, in a few words (`pool-export jobs` says it). */
  readonly why: string;
}

/** Whether a dataset of DODO's (any dataset not of a subgraph added) has a table in the folder's lake. */
export function holdsDodoData(config: Config): boolean {
  const lake = dataFolder(config.dataDir).lake;
  return DATASETS.some((ds) => subgraphOf(ds.schema) === undefined && existsSync(tableDir(lake, ds)));
}

/** The sources of the folder `config` describes; `dodo` are DODO's jobs (from `jobs/`). */
export function folderSources(config: Config, dodo: readonly Job[]): FolderSources {
  const subgraphs = config.subgraphs.map((s) => subgraphJob(s.name));
  // A subgraph set aside (its list unreadable, or its schema refused) is added all the same: the folder is its.
  const why =
    !subgraphs.length && !setAsideSubgraphs().length
      ? 'no subgraph is added to this folder'
      : config.apiKey
        ? 'a DODO API key is set'
        : holdsDodoData(config)
          ? "this folder holds DODO's data"
          : undefined;
  if (why) return { jobs: [...dodo, ...subgraphs], dodo: true, why };
  return {
    jobs: subgraphs,
    dodo: false,
    why: 'no DODO API key is set, and this folder holds no DODO data',
  };
}
