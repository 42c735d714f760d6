/**
 * The plan: which tasks a run has for the jobs, chains and datasets asked, in what order, and the mistakes it names.
 * Expected plans are written out by hand from the catalog's order and the jobs' lists, not built with the plan's code.
 */
import { describe, expect, it } from 'vitest';
import { JOBS } from '../../jobs/index.ts';
import { subgraphJob } from '../../src/catalog/subgraphs.ts';
import { loadConfig } from '../../src/config/config.ts';
import { UsageError } from '../../src/errors.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import { EVERY_TYPE_SCHEMA, everyTypeDatasets } from '../support/every-type.ts';

const job = (name: string) => JOBS.find((j) => j.name === name)!;
/** Nothing is asked of these addresses: the plan only names them. */
const config = (chains: string[]) =>
  loadConfig({
    env: {},
    overrides: {
      apiKey: 'a'.repeat(32),
      baseUrl: 'http://127.0.0.1:7',
      chains,
      subgraphs: {
        pools: {
          deployments: {
            ethereum: 'http://127.0.0.1:9/subgraphs/pools/1',
            bsc: 'http://127.0.0.1:9/subgraphs/pools/56',
          },
          schema: EVERY_TYPE_SCHEMA,
        },
      },
    },
  });
/** `chainId dataset` of each task, in plan order. */
const names = (tasks: ReturnType<typeof buildPlan>) => tasks.map((t) => `${t.chainId} ${t.ds.name}`);
const POOLS = everyTypeDatasets('pools');

describe('the plan of a run', () => {
  it('takes the named datasets alone when no job is given, in catalog order on each chain asked', () => {
    const tasks = buildPlan(config(['56', '1']), { jobs: [], datasets: ['dodoex.swaps', 'dodoex.pairs'] });
    expect(names(tasks)).toEqual(['56 dodoex.pairs', '56 dodoex.swaps', '1 dodoex.pairs', '1 dodoex.swaps']);
    // Each task starts on its first route, the self-hosted endpoint of its chain and schema.
    expect(tasks.map((t) => t.endpoint.label)).toEqual(
      ['56', '56', '1', '1'].map(
        (c) => `http://127.0.0.1:7/subgraph/graphql?chainId=${c}&schemaName=dodoex&apikey=***`,
      ),
    );
    expect(Object.isFrozen(tasks) && tasks.every((t) => Object.isFrozen(t))).toBe(true);
  });

  it('narrows the jobs to the named datasets, and adds none the jobs lack', () => {
    const tasks = buildPlan(config(['56']), {
      jobs: [job('liquidity'), job('events')],
      datasets: ['dodoex.swaps', 'list.liquidity'],
    });
    expect(names(tasks)).toEqual(['56 list.liquidity', '56 dodoex.swaps']);
    // dodoex.pairs is a state dataset, which the events job does not have.
    expect(() => buildPlan(config(['56']), { jobs: [job('events')], datasets: ['dodoex.pairs'] })).toThrow(
      new UsageError('the plan has no task: the selected jobs and --datasets have no dataset in common'),
    );
  });

  it('names a dataset it does not know, the nearest one it knows, and the command that lists them', () => {
    expect(() => buildPlan(config(['56']), { jobs: [], datasets: ['dodoex.swaps', 'dodoex.swap'] })).toThrow(
      new UsageError('unknown dataset "dodoex.swap"; did you mean dodoex.swaps? (`pool-export datasets` lists them)'),
    );
    expect(() => buildPlan(config(['56']), { jobs: [], datasets: ['weather.rain'] })).toThrow(
      new UsageError('unknown dataset "weather.rain" (`pool-export datasets` lists them)'),
    );
  });

  it("reads an added subgraph on its deployments' chains, and DODO's datasets on the config's chains", () => {
    // The config names Polygon only: the subgraph's chains (Ethereum, BNB Chain) follow it.
    const both = buildPlan(config(['137']), {
      jobs: [subgraphJob('pools')],
      datasets: ['pools.swaps', 'pools.accounts', 'dodoex.swaps'],
    });
    expect(names(both)).toEqual(['1 pools.swaps', '1 pools.accounts', '56 pools.swaps', '56 pools.accounts']);
    const mixed = buildPlan(config(['137']), { jobs: [], datasets: ['pools.swaps', 'dodoex.swaps'] });
    expect(names(mixed)).toEqual(['137 dodoex.swaps', '1 pools.swaps', '56 pools.swaps']);
    // A chain of the config that is also the subgraph's is not asked twice.
    const shared = buildPlan(config(['56']), { jobs: [subgraphJob('pools')] });
    expect(names(shared)).toEqual([...POOLS.map((d) => `56 ${d}`), ...POOLS.map((d) => `1 ${d}`)]);
  });

  it('keeps to the chains asked, those of a subgraph among them', () => {
    const one = buildPlan(config(['137']), { jobs: [], chains: [56], datasets: ['pools.swaps', 'dodoex.swaps'] });
    expect(names(one)).toEqual(['56 dodoex.swaps', '56 pools.swaps']);
    // Polygon has no deployment of the subgraph: its datasets have no task there.
    expect(() => buildPlan(config(['1']), { jobs: [], chains: [137], datasets: ['pools.swaps'] })).toThrow(
      /the plan has no task/,
    );
  });
});
