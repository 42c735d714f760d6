/** `pool-export datasets` and `pool-export jobs`: what can be exported, and how it is grouped. */

import { DATASETS } from '../catalog/catalog.ts';
import type { Job } from '../catalog/job.ts';
import { asideSubject, setAsideSubgraphs, subgraphOf } from '../catalog/subgraphs.ts';
import { folderSources } from '../pipeline/sources.ts';
import { tableLines } from '../util/display.ts';
import { inert } from '../util/inert.ts';
import type { CommandBody } from './command-body.ts';
import { configFor, type FolderArgs, folderOptions } from './options.ts';

/**
 * Lists the folder's datasets with their cursor kind, key and entity: DODO's where DODO is the folder's (or with
 * `--all`), then those of the subgraphs added.
 */
export const datasetsCommand: CommandBody<FolderArgs & { all: boolean }> = {
  builder: (y) =>
    folderOptions(y).option('all', {
      type: 'boolean',
      default: false,
      describe: "every dataset, DODO's too in a folder of subgraphs alone",
    }),
  handler: (a) => {
    const sources = folderSources(configFor(a), []);
    const shown = DATASETS.filter((d) => a.all || sources.dodo || subgraphOf(d.schema) !== undefined);
    const cells = shown.map((d) => [d.name, d.kind, d.seq ?? 'id', inert(d.entity)]);
    const lines = tableLines(['dataset', 'kind', 'key', 'entity'], cells, { right: [false, false, false, false] });
    process.stdout.write(`${lines.join('\n')}\n`);
    if (shown.length < DATASETS.length)
      process.stdout.write(
        `DODO's ${DATASETS.length - shown.length} datasets are not this folder's (${sources.why}): --all lists them\n`,
      );
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
    // A line per job, laid out as every table of the command line is (`util/display.ts`).
    const [first, ...rest] = sources.jobs.map((j) => [
      j.name,
      j.schedule,
      `${j.description} (${j.datasets.length} datasets)`,
    ]);
    if (first) for (const line of tableLines(first, rest, { right: [] })) process.stdout.write(`${line}\n`);
    if (!sources.dodo)
      process.stdout.write(
        `DODO's jobs (${jobs.map((j) => j.name).join(', ')}) are not this folder's: ${sources.why}; \`--jobs NAME\` runs one all the same\n`,
      );
  },
});
