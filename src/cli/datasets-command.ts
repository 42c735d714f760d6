/** `pool-export datasets` and `pool-export jobs`: what can be exported, and how it is grouped. */

import { DATASETS } from '../catalog/catalog.ts';
import type { Job } from '../catalog/job.ts';
import { asideSubject, setAsideSubgraphs } from '../catalog/subgraphs.ts';
import { folderSources } from '../pipeline/sources.ts';
import { inert } from '../util/inert.ts';
import type { CommandBody } from './commands.ts';
import { configFor, type FolderArgs, folderOptions } from './options.ts';

/** Lists every dataset with its cursor kind, root field and table: DODO's, then those of the subgraphs added. */
export const datasetsCommand: CommandBody<FolderArgs> = {
  builder: (y) => folderOptions(y),
  handler: (a) => {
    configFor(a);
    for (const d of DATASETS)
      process.stdout.write(`${d.name.padEnd(35)} ${d.kind.padEnd(9)} ${(d.seq ?? 'id').padEnd(10)} ${d.entity}\n`);
    for (const s of setAsideSubgraphs())
      process.stdout.write(`${asideSubject(s)} is set aside, its datasets not listed: ${inert(s.error)}\n`);
  },
};

/**
 * Lists the jobs a plain `run` or `schedule` of the data folder takes, with their schedules: DODO's, unless the folder
 * exports its subgraphs alone (a line then says why, and how to take DODO's), then a job per subgraph added.
 */
export const jobsCommand = (jobs: readonly Job[]): CommandBody<FolderArgs> => ({
  builder: (y) => folderOptions(y),
  handler: (a) => {
    const sources = folderSources(configFor(a), jobs);
    for (const j of sources.jobs)
      process.stdout.write(
        `${j.name.padEnd(14)} ${j.schedule.padEnd(14)} ${j.description} (${j.datasets.length} datasets)\n`,
      );
    if (!sources.dodo)
      process.stdout.write(
        `DODO's jobs (${jobs.map((j) => j.name).join(', ')}) are not this folder's: ${sources.why}; \`--jobs NAME\` runs one all the same\n`,
      );
  },
});
