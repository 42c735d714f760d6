/**
 * The routes of a dataset on a chain: which URL of the service (or of a gateway) its requests go to, with the key where
 * the service wants it, and a label to print (never the key). Read by the plan of a run, by freshness and by verify.
 */
import { createHash } from 'node:crypto';
import { DATASETS, type Dataset } from '../catalog/catalog.ts';
import { deploymentUrl } from '../catalog/subgraphs.ts';
import type { Config, Route } from '../config/config.ts';
import type { Endpoint } from './client.ts';

/**
 * One route's endpoint. A rate limit is its key's: a route with its own key keeps its own request pace, named by the
 * key's fingerprint (never the key).
 */
function routeEndpoint(config: Config, route: Route, at: { ds: Dataset; chainId: number }): Endpoint {
  const e = keyedRoute(config, route, at);
  if (route.apiKey === undefined) return e;
  const print = createHash('sha256').update(route.apiKey).digest('hex').slice(0, 8);
  return { ...e, pace: `${e.host} (key ${print})` };
}

/** The URL (with the key where the service wants it) and the printable label of one route. */
function keyedRoute(config: Config, route: Route, at: { ds: Dataset; chainId: number }): Endpoint {
  const apiKey = route.apiKey ?? config.apiKey;
  const key = encodeURIComponent(apiKey);
  if (route.kind === 'gateway') {
    const gateway = route.gatewayUrl ?? config.gatewayUrl;
    return {
      url: `${gateway}/api/${key}/subgraphs/id/${route.subgraphId}`,
      label: `${gateway}/api/${apiKey ? '***' : '(no key)'}/subgraphs/id/${route.subgraphId}`,
      host: new URL(gateway).host,
    };
  }
  const schemaName = encodeURIComponent(config.schemaNames[at.ds.schema] ?? at.ds.schema);
  return keyed(
    `${route.baseUrl ?? config.baseUrl}/subgraph/graphql?chainId=${at.chainId}&schemaName=${schemaName}`,
    apiKey,
  );
}

/**
 * A subgraph's deployment, by its URL as given: a graph-node's own (no key), or a gateway's with the key in its path
 * (`/api/<key>/subgraphs/id/…`), which the label hides.
 */
export function urlEndpoint(url: string): Endpoint {
  return { url, label: url.replace(/\/api\/[^/]+\//, '/api/***/'), host: new URL(url).host };
}

/** An endpoint of the service, whose key goes in the query string; the printable label shows where (never the key). */
function keyed(base: string, apiKey: string): Endpoint {
  return {
    url: `${base}&apikey=${encodeURIComponent(apiKey)}`,
    label: apiKey ? `${base}&apikey=***` : base,
    host: new URL(base).host,
  };
}

/**
 * The routes of a dataset on a chain, in order of preference: the liquidity list's one endpoint, or the configured
 * routes of its chain and schema (the self-hosted route when none is configured).
 */
export function routesFor(config: Config, ds: Dataset, chainId: number): readonly Endpoint[] {
  const deployment = deploymentUrl(ds.schema, chainId);
  if (deployment !== undefined) return [urlEndpoint(deployment)];
  if (ds.schema === 'list') return [keyed(`${config.baseUrl}/graphql?opname=FetchLiquidityList`, config.apiKey)];
  const routes = config.routes[`${chainId}/${ds.schema}`] ?? [{ kind: 'self' }];
  return routes.map((r) => routeEndpoint(config, r, { ds, chainId }));
}

/** The first route of a dataset on a chain (the one a dry run shows). */
export function endpointFor(config: Config, ds: Dataset, chainId: number): Endpoint {
  return routesFor(config, ds, chainId)[0]!;
}

/** A dataset of the exchange schema, whose endpoint gives a chain's head for the liquidity list. */
const DODOEX_DATASET = DATASETS.find((d) => d.schema === 'dodoex')!;

/**
 * The routes whose head a dataset's rows are read at: its own, except for the liquidity list, which has no block and
 * is stamped with the head of the same chain's exchange subgraph.
 */
export function headRoutesFor(config: Config, ds: Dataset, chainId: number): readonly Endpoint[] {
  return routesFor(config, ds.kind === 'list' ? DODOEX_DATASET : ds, chainId);
}
