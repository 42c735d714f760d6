/** Resolves jobs, chains and datasets against the config into a frozen plan of tasks with their endpoints. */
import { DATASETS, type Dataset, findDataset } from '../catalog/catalog.ts';
import type { Job } from '../catalog/job.ts';
import type { Config } from '../config/config.ts';
import { UsageError } from '../errors.ts';
import type { Endpoint } from '../upstream/client.ts';
import type { Task } from './task.ts';

/** The endpoint of a dataset on a chain: the liquidity list, the self-hosted subgraph route, or the gateway. */
export function endpointFor(config: Config, ds: Dataset, chainId: number): Endpoint {
  const key = encodeURIComponent(config.apiKey);
  const host = (u: string) => new URL(u).host;
  // The printable label shows where a key goes (never the key), and no key where none is set.
  const keyed = (base: string) => ({
    url: `${base}&apikey=${key}`,
    label: config.apiKey ? `${base}&apikey=***` : base,
    host: host(base),
  });
  if (ds.schema === 'list') return keyed(`${config.baseUrl}/graphql?opname=FetchLiquidityList`);
  const route = config.routes[`${chainId}/${ds.schema}`];
  if (route?.kind === 'gateway') {
    return {
      url: `${config.gatewayUrl}/api/${key}/subgraphs/id/${route.subgraphId}`,
      label: `${config.gatewayUrl}/api/${config.apiKey ? '***' : '(no key)'}/subgraphs/id/${route.subgraphId}`,
      host: host(config.gatewayUrl),
    };
  }
  return keyed(
    `${config.baseUrl}/subgraph/graphql?chainId=${chainId}&schemaName=${encodeURIComponent(config.schemaNames[ds.schema] ?? ds.schema)}`,
  );
}

/** A dataset of the exchange schema, whose endpoint gives a chain's head for the liquidity list. */
const DODOEX_DATASET = DATASETS.find((d) => d.schema === 'dodoex')!;

/**
 * The endpoint whose head a dataset's rows are read at: its own, except for the liquidity list, which has no block and
 * is stamped with the head of the same chain's exchange subgraph.
 */
export function headEndpointFor(config: Config, ds: Dataset, chainId: number): Endpoint {
  return endpointFor(config, ds.kind === 'list' ? DODOEX_DATASET : ds, chainId);
}

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
    const named = req.datasets.map((n) => {
      const d = findDataset(n);
      if (!d)
        throw new UsageError(
          `unknown dataset "${n}"; run \`pool-export datasets\` to list them (e.g. dodoex.swaps, list.liquidity)`,
        );
      return d.name;
    });
    for (const n of [...wanted]) if (!named.includes(n)) wanted.delete(n);
    if (req.jobs.length === 0) for (const n of named) wanted.add(n);
  }
  const chains = req.chains?.length ? req.chains : config.chains;
  const tasks: Task[] = [];
  for (const chainId of chains) {
    for (const ds of DATASETS)
      if (wanted.has(ds.name)) tasks.push(Object.freeze({ chainId, ds, endpoint: endpointFor(config, ds, chainId) }));
  }
  if (tasks.length === 0)
    throw new UsageError('the plan has no task: the selected jobs and --datasets have no dataset in common');
  return Object.freeze(tasks);
}
