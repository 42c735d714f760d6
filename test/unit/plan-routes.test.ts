/** The endpoints of a chain and schema's routes: addresses, labels without keys, and who shares a request pace. */
import { describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { headRoutesFor, routesFor } from '../../src/upstream/routes.ts';

const K1 = 'a'.repeat(32);
const K2 = 'b'.repeat(32);

describe('the routes of a plan', () => {
  const config = loadConfig({
    env: {},
    overrides: {
      apiKey: K1,
      baseUrl: 'http://127.0.0.1:7',
      gatewayUrl: 'http://127.0.0.1:8',
      routes: {
        '56/dodoex': [
          { kind: 'self' },
          { kind: 'gateway', subgraphId: 'Qm1' },
          { kind: 'gateway', subgraphId: 'Qm1', apiKey: K2 },
          { kind: 'self', baseUrl: 'http://127.0.0.1:9', apiKey: K2 },
        ],
      },
    },
  });
  const swaps = findDataset('dodoex.swaps')!;

  it('gives each route its address, a label without its key, and its own pace when it has its own key', () => {
    expect(routesFor(config, swaps, 56)).toEqual([
      {
        url: `http://127.0.0.1:7/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=${K1}`,
        label: 'http://127.0.0.1:7/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=***',
        host: '127.0.0.1:7',
      },
      {
        url: `http://127.0.0.1:8/api/${K1}/subgraphs/id/Qm1`,
        label: 'http://127.0.0.1:8/api/***/subgraphs/id/Qm1',
        host: '127.0.0.1:8',
      },
      {
        url: `http://127.0.0.1:8/api/${K2}/subgraphs/id/Qm1`,
        label: 'http://127.0.0.1:8/api/***/subgraphs/id/Qm1',
        host: '127.0.0.1:8',
        // sha256 of 32 "b"s, its first 8 hex digits.
        pace: '127.0.0.1:8 (key bdb33976)',
      },
      {
        url: `http://127.0.0.1:9/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=${K2}`,
        label: 'http://127.0.0.1:9/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=***',
        host: '127.0.0.1:9',
        pace: '127.0.0.1:9 (key bdb33976)',
      },
    ]);
  });

  it('asks each self-hosted route for the schema under the name the config gives it', () => {
    const renamed = loadConfig({
      env: {},
      overrides: {
        apiKey: K1,
        baseUrl: 'http://127.0.0.1:7',
        schemaNames: { mine: 'mine-v3' },
        routes: { '56/mine': [{ kind: 'self' }, { kind: 'self', baseUrl: 'http://127.0.0.1:9' }] },
      },
    });
    expect(routesFor(renamed, findDataset('mine.mine_pools')!, 56).map((e) => e.label)).toEqual([
      'http://127.0.0.1:7/subgraph/graphql?chainId=56&schemaName=mine-v3&apikey=***',
      'http://127.0.0.1:9/subgraph/graphql?chainId=56&schemaName=mine-v3&apikey=***',
    ]);
  });

  it('reads a chain without routes from the self-hosted route, and the list at the head of the exchange routes', () => {
    expect(routesFor(config, swaps, 1).map((e) => e.label)).toEqual([
      'http://127.0.0.1:7/subgraph/graphql?chainId=1&schemaName=dodoex&apikey=***',
    ]);
    const list = findDataset('list.liquidity')!;
    expect(routesFor(config, list, 56).map((e) => e.label)).toEqual([
      'http://127.0.0.1:7/graphql?opname=FetchLiquidityList&apikey=***',
    ]);
    expect(headRoutesFor(config, list, 56)).toEqual(routesFor(config, swaps, 56));
  });
});
