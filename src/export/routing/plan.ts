/** Resolves jobs, chains and datasets against the config into a frozen plan of tasks with their endpoints. */
import { DATASETS, type Dataset, datasetNamed } from '../../catalog/catalog.ts';
import type { Job } from '../../catalog/job.ts';
import { chainsOfSchema, servedOn } from '../../catalog/subgraphs.ts';
import type { Config } from '../../config/config.ts';
import { UsageError } from '../../errors.ts';
import { routesFor } from '../../upstream/routes.ts';
import type { Task } from '../task.ts';

/** What the user asked for. */
export interface PlanRequest {
  readonly jobs: readonly Job[];
  /** Chains to run (default: the config's). */
  readonly chains?: readonly number[];
  /** Dataset names that restrict the jobs' datasets. */
  readonly datasets?: readonly string[];
}

/** The tasks of a run, deduplicated across jobs, in catalog order per chain. */
export function buildPlan(config: Config, req: PlanRequest): readonly Task[] {
  const wanted = new Set(req.jobs.flatMap((j) => j.datasets));
  if (req.datasets?.length) {
    const named = req.datasets.map((n) => datasetNamed(n).name);
    for (const n of [...wanted]) if (!named.includes(n)) wanted.delete(n);
    if (req.jobs.length === 0) for (const n of named) wanted.add(n);
  }
  // A subgraph added by name is read on the chains of its deployments (those of --chains among them, when given).
  const base = req.chains?.length ? req.chains : config.chains;
  const own = [...new Set(DATASETS.filter((d) => wanted.has(d.name)).flatMap((d) => chainsOfSchema(d.schema) ?? []))];
  const chains = req.chains?.length ? req.chains : [...base, ...own.filter((c) => !base.includes(c))];
  // A subgraph's entity its deployment there does not serve (as `subgraph add` or `refresh` found) is not read there.
  const onChain = (ds: Dataset, chainId: number) =>
    (chainsOfSchema(ds.schema)?.includes(chainId) ?? base.includes(chainId)) && servedOn(ds.schema, chainId, ds.entity);
  const tasks: Task[] = [];
  for (const chainId of chains) {
    for (const ds of DATASETS)
      if (wanted.has(ds.name) && onChain(ds, chainId)) {
        const routes = routesFor(config, ds, chainId);
        tasks.push(Object.freeze({ chainId, ds, endpoint: routes[0]!, routes }));
      }
  }
  if (tasks.length === 0)
    throw new UsageError('the plan has no task: the selected jobs and --datasets have no dataset in common');
  return Object.freeze(tasks);
}
