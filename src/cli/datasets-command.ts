/** `pool-export datasets` and `pool-export jobs`: what can be exported, and how it is grouped. */

import { DATASETS } from '../catalog/catalog.ts';
import type { Job } from '../catalog/job.ts';
import type { CommandBody } from './commands.ts';
import { configFor, type FolderArgs, folderOptions } from './options.ts';

/** Lists every dataset with its cursor kind, root field and table: DODO's, then those of the subgraphs added. */
export const datasetsCommand: CommandBody<FolderArgs> = {
  builder: (y) => folderOptions(y),
  handler: (a) => {
    configFor(a);
    for (const d of DATASETS)
      process.stdout.write(`${d.name.padEnd(35)} ${d.kind.padEnd(9)} ${(d.seq ?? 'id').padEnd(10)} ${d.entity}\n`);
  },
};

/** Lists the jobs with their schedules. */
export const jobsCommand = (jobs: readonly Job[]): CommandBody => ({
  handler: () => {
    for (const j of jobs)
      process.stdout.write(
        `${j.name.padEnd(14)} ${j.schedule.padEnd(14)} ${j.description} (${j.datasets.length} datasets)\n`,
      );
  },
});
