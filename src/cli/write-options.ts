/** Command-line options of the commands that write a data folder, and how they become a config, jobs and a plan. */
import type { Argv } from 'yargs';
import { type Job, selectJobs } from '../catalog/job.ts';
import { setAsideSubgraphs, subgraphJob, subgraphOf } from '../catalog/subgraphs.ts';
import type { Config } from '../config/config.ts';
import { UsageError } from '../errors.ts';
import { buildPlan } from '../export/routing/plan.ts';
import type { Task } from '../export/task.ts';
import { folderSources } from '../pipeline/sources.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { createEventLog, type EventLog, LOG_FORMATS, LOG_LEVELS } from '../util/logger.ts';
import { chainsOption, configFor, type FolderArgs, folderOptions, list, parseChains } from './options.ts';

/** The arguments of a maintenance command that holds the data folder's lock (`compact`, `migrate`). */
export interface MaintenanceArgs extends FolderArgs {
  'wait-lock': number;
}

/** The options of a maintenance command: the folder's, and `--wait-lock` (a minute by default: a run may be under way). */
export function maintenanceOptions<T>(y: Argv<T>) {
  return folderOptions(y).option('wait-lock', {
    type: 'number',
    default: 60,
    describe: 'seconds to wait while a run holds the data folder',
  });
}

/** Runs `fn` with the config, holding the data folder's lock as `what`. */
export async function withDataLock(
  a: MaintenanceArgs,
  what: string,
  fn: (config: Config) => Promise<void>,
): Promise<void> {
  const config = configFor(a);
  const lock = await lockDataDir(config.dataDir, { what, waitSecs: a['wait-lock'], onLost: () => undefined });
  try {
    await fn(config);
  } finally {
    await lock.release();
  }
}

/** Options shared by `run` and `schedule`. */
export interface CommonArgs extends FolderArgs {
  jobs?: string | undefined;
  chains?: string | undefined;
  datasets?: string | undefined;
  subgraphs?: string | undefined;
  'wait-lock': number;
  'log-level'?: string | undefined;
  'log-format'?: (typeof LOG_FORMATS)[number] | undefined;
  verify: boolean;
}

/** Options shared by `run` and `schedule`. */
export function commonOptions<T>(y: Argv<T>) {
  return chainsOption(
    folderOptions(y).option('jobs', {
      type: 'string',
      describe: 'comma list of jobs (default: all; see `pool-export jobs`)',
    }),
    "comma list of chain names or ids (default: the config's chains)",
  )
    .option('datasets', {
      type: 'string',
      describe: "comma list of datasets, e.g. dodoex.swaps,list.liquidity (default: the jobs' datasets)",
    })
    .option('subgraphs', {
      type: 'string',
      describe:
        'comma list of subgraphs added by name (pool-export subgraph add) to run alone (default: every one, with the jobs)',
    })
    .option('wait-lock', {
      type: 'number',
      default: 0,
      describe: 'seconds to wait when another run holds the data folder (default: stop at once)',
    })
    .option('verify', {
      type: 'boolean',
      default: true,
      describe: "verify the days each run touched against the upstream's counters (--no-verify: don't)",
    })
    .option('log-level', {
      choices: LOG_LEVELS,
      describe: 'level of the log lines on stderr (default: info, or warn on a terminal where progress bars show)',
    })
    .option('log-format', {
      choices: LOG_FORMATS,
      describe:
        'json: one JSON object per line; pretty: one line per event for people (default: pretty on a terminal, json otherwise)',
    });
}

/** The config, jobs and plan that a `run` or `schedule` command line asks for. */
export function resolveRequest(
  a: CommonArgs,
  all: readonly Job[],
): { config: Config; jobs: Job[]; tasks: readonly Task[]; chains?: number[]; datasets?: string[] } {
  const config = configFor(a);
  // A subgraph added by name is a job of its own: a plain run takes the folder's sources (its subgraphs, and DODO's jobs
  // unless it is a subgraph folder: pipeline/sources.ts); --subgraphs takes those alone; --jobs names any job.
  const named = list(a.subgraphs);
  const jobs = named
    ? [...(a.jobs ? selectJobs(all, list(a.jobs)) : []), ...named.map(subgraphJob)]
    : a.jobs
      ? selectJobs([...all, ...config.subgraphs.map((s) => subgraphJob(s.name))], list(a.jobs))
      : [...folderSources(config, all).jobs];
  const chains = parseChains(a.chains);
  const datasets = list(a.datasets);
  // A folder whose every subgraph is set aside has nothing to run: the command says why (`setAsideSubgraphs`).
  if (!jobs.length && !datasets && setAsideSubgraphs().length) return { config, jobs, tasks: [] };
  const tasks = buildPlan(config, {
    jobs: a.datasets && !a.jobs ? [] : jobs,
    ...(chains ? { chains } : {}),
    ...(datasets ? { datasets } : {}),
  });
  if (!Number.isFinite(a['wait-lock']) || a['wait-lock'] < 0)
    throw new UsageError(`--wait-lock must be a number of seconds from 0, not ${a['wait-lock']}`);
  return { config, jobs, tasks, ...(chains ? { chains } : {}), ...(datasets ? { datasets } : {}) };
}

/**
 * Stops a run without the API key that its tasks need: DODO's service and gateway take it; a subgraph added by URL
 * (a graph-node of one's own, or a gateway's URL with its key in it) needs none.
 */
export function requireKey(config: Config, tasks: readonly Task[]): void {
  if (!config.apiKey && tasks.some((t) => subgraphOf(t.ds.schema) === undefined))
    throw new UsageError('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)');
}

/**
 * The event log for a command line. On a terminal its lines are for people by default (`pretty`, warnings and errors
 * only, wrapped to the terminal), and go above the progress bars when there are some (`print`), so that they never
 * tear the display; elsewhere they are JSON lines of every event from `info` up.
 */
export function logFor(a: CommonArgs, config: Config, print?: { log: (line: string) => void }): EventLog {
  const tty = process.stderr.isTTY === true;
  const level = a['log-level'] ?? (tty ? 'warn' : 'info');
  const format = a['log-format'] ?? (tty ? 'pretty' : 'json');
  return createEventLog({
    level,
    secrets: config.secrets,
    format,
    ...(print ? { destination: { write: (line: string) => print.log(line) } } : {}),
    ...(tty ? { width: process.stderr.columns || 80 } : {}),
  });
}
