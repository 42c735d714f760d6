/**
 * `verify`: every identity of `identities.ts` on every chain asked for, each over the rows its dataset's runs had
 * committed as of one block (`scope.ts`), with the upstream's counters read at that block (`counters.ts`); the row ids
 * of the subgraphs added by name (`subgraph-ids.ts`); then the lake against the warehouse (`lake-match.ts`).
 */
import pLimit from 'p-limit';
import { DATASETS, type Dataset, findDataset } from '../catalog/catalog.ts';
import { chainsOfSchema, subgraphOf } from '../catalog/subgraphs.ts';
import type { Config } from '../config/config.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { Endpoint, UpstreamClient } from '../upstream/client.ts';
import type { EndpointInfo } from '../upstream/endpoint-probe.ts';
import { headRoutesFor } from '../upstream/routes.ts';
import { prunedSkip } from '../upstream/upstream-error.ts';
import { redact } from '../util/redact.ts';
import type { Check } from './check.ts';
import { CounterReader, type DayRange } from './counters.ts';
import { IDENTITIES, type Identity } from './identities.ts';
import { lakeChecks } from './lake-match.ts';
import { type FoundValue, foundCountsOf, type Mismatch, reconcile } from './reconcile.ts';
import { valueChecks } from './row-values.ts';
import { readScopes, type Scopes } from './scope.ts';
import { subgraphIdChecks } from './subgraph-ids.ts';

/** What to verify. */
export interface VerifyRequest {
  readonly config: Config;
  readonly warehouse: Pick<Warehouse, 'all'>;
  readonly client: UpstreamClient;
  readonly chains: readonly number[];
  /** Datasets to check (all that an identity checks, when absent). */
  readonly datasets?: ReadonlySet<string>;
  /** The first and last day to check (Unix seconds of their starts), each open when absent. */
  readonly from?: number;
  readonly to?: number;
  /** Whether the lake is checked against the warehouse too (by default it is). */
  readonly lake?: boolean;
  /**
   * Whether every stored row's values are compared with the upstream's at the checked block (`row-values.ts`), and the
   * lake's rows with the warehouse's, value for value (`lake-match.ts`).
   */
  readonly values?: boolean;
  /**
   * What the run's probes found of its routes (head and root fields), by URL: a run's verification asks no probe of a
   * route its tasks probed moments before (16 requests after 100 new blocks on the demo's 8 chains).
   */
  readonly probed?: ReadonlyMap<string, EndpointInfo>;
}

/** The outcome of `verify`. */
export interface VerifyReport {
  readonly checks: readonly Check[];
  readonly mismatches: readonly Mismatch[];
  /** Requests sent to the upstream. */
  readonly requests: number;
}

/** The identities of the datasets asked for. */
export function identitiesFor(datasets?: ReadonlySet<string>): readonly Identity[] {
  return IDENTITIES.filter((i) => !datasets || datasets.has(i.dataset));
}

/** One identity on one chain, planned: what to read and compare, or the check it already is (skipped). */
type Planned =
  | { readonly check: Check }
  | {
      readonly identity: Identity;
      readonly chainId: number;
      /** The chain's routes of the counter's schema, in order of preference. */
      readonly routes: readonly Endpoint[];
      readonly at: { readonly block: number; readonly days?: DayRange };
    };

/** Plans one identity on one chain from the warehouse: the block and days its rows may be checked at. */
function plan(req: VerifyRequest, scopes: Scopes, at: { identity: Identity; chainId: number }): Planned {
  const { identity, chainId } = at;
  const ds = findDataset(identity.dataset)!;
  const base = {
    chainId,
    identity: identity.name,
    dataset: identity.dataset,
    block: null,
    days: null,
    groups: 0,
    mismatches: [],
  };
  const scope = scopes.of(chainId, ds);
  if ('skip' in scope) return { check: { ...base, skipped: scope.skip } };
  let days: DayRange | undefined;
  if (identity.counter.byDay) {
    const last = Math.min(req.to ?? Infinity, scope.lastDay ?? -1);
    const first = req.from ?? 0;
    if (last < first)
      return { check: { ...base, block: scope.block, skipped: 'no day in the range has all its rows stored yet' } };
    days = { first, last };
  } else if (!scope.complete) {
    // A count over the whole table has no day: it is checked whatever days were asked for, once the table is whole.
    const skipped = 'its last pass did not end; a run that ends well makes it checkable';
    return { check: { ...base, block: scope.block, skipped } };
  }
  const routes = headRoutesFor(req.config, ds, chainId);
  return { identity, chainId, routes, at: { block: scope.block, ...(days ? { days } : {}) } };
}

/**
 * The stored counts of every planned identity, one statement per identity for all its chains (`foundCountsOf`), by
 * identity name; each settles when its statement ends, and a failure fails the checks of that identity alone.
 */
function storedCounts(
  w: Pick<Warehouse, 'all'>,
  planned: readonly Planned[],
): ReadonlyMap<string, Promise<Map<number, FoundValue[]>>> {
  const byIdentity = new Map<string, { identity: Identity; chains: { chainId: number; days?: DayRange }[] }>();
  for (const p of planned) {
    if ('check' in p) continue;
    const g = byIdentity.get(p.identity.name) ?? { identity: p.identity, chains: [] };
    g.chains.push({ chainId: p.chainId, ...(p.at.days ? { days: p.at.days } : {}) });
    byIdentity.set(p.identity.name, g);
  }
  const found = new Map<string, Promise<Map<number, FoundValue[]>>>();
  for (const [name, { identity, chains }] of byIdentity) {
    const counts = foundCountsOf(w, { identity, ds: findDataset(identity.dataset)! }, chains);
    // Awaited by each check of the identity; unhandled until then is no failure of the process.
    counts.catch(() => undefined);
    found.set(name, counts);
  }
  return found;
}

/** Reads a planned identity's counters and compares them with its stored counts. */
async function checkOne(
  req: VerifyRequest,
  reader: CounterReader,
  p: Exclude<Planned, { check: Check }> & {
    readonly endpoint: Endpoint;
    readonly found: ReadonlyMap<string, Promise<Map<number, FoundValue[]>>>;
  },
): Promise<Check> {
  const { identity, chainId, at } = p;
  const base = { chainId, identity: identity.name, dataset: identity.dataset, block: at.block, days: at.days ?? null };
  try {
    const [counters, found] = await Promise.all([
      reader.read(p.endpoint, identity.counter, at),
      p.found.get(identity.name)!.then((m) => m.get(chainId)!),
    ]);
    return { ...base, ...reconcile(identity, { chainId, counters, found }) };
  } catch (e) {
    const skipped = prunedSkip(e, at.block);
    if (skipped) return { ...base, groups: 0, mismatches: [], skipped };
    return { ...base, groups: 0, mismatches: [], error: redact((e as Error).message, req.config.secrets) };
  }
}

/** Verifies the chains asked for. */
export async function verify(req: VerifyRequest): Promise<VerifyReport> {
  const reader = new CounterReader(req.client, req.config, req.probed);
  const limit = pLimit(Math.max(1, req.config.concurrency));
  const scopes = await readScopes(req.warehouse, req.chains);
  const planned = req.chains.flatMap((chainId) =>
    identitiesFor(req.datasets).map((identity) => plan(req, scopes, { identity, chainId })),
  );
  // Each counter from the first route that has indexed its block; the first page of every counter a route serves in
  // one request per route.
  const routed = await Promise.all(
    planned.map(async (p) => ('check' in p ? p : { ...p, endpoint: await reader.routeAt(p.routes, p.at.block) })),
  );
  const asks = routed.flatMap((p) =>
    'check' in p ? [] : [{ endpoint: p.endpoint, source: p.identity.counter, at: p.at }],
  );
  await reader.prefetch(asks);
  const found = storedCounts(req.warehouse, routed);
  const checks = await Promise.all(
    routed.map((p) => ('check' in p ? p.check : limit(() => checkOne(req, reader, { ...p, found })))),
  );
  // What reads rows upstream needs, for the row ids and the values.
  const reading = {
    warehouse: req.warehouse,
    client: req.client,
    chains: req.chains,
    datasets: req.datasets,
    pageSize: req.config.pageSize,
    secrets: req.config.secrets,
    probed: req.probed,
  };
  // A subgraph of any schema: its row ids against the upstream's (`subgraph-ids.ts`).
  const ids = await subgraphIdChecks(reading, scopes, DATASETS);
  checks.push(...ids.checks);
  // Every value of every row, DODO's datasets and any subgraph's (`row-values.ts`).
  const routes = (ds: Dataset, chainId: number) =>
    !subgraphOf(ds.schema) || chainsOfSchema(ds.schema)?.includes(chainId)
      ? headRoutesFor(req.config, ds, chainId)
      : [];
  const values = req.values ? await valueChecks({ ...reading, routes }, scopes, DATASETS) : { checks: [], requests: 0 };
  checks.push(...values.checks);
  // The lake against the warehouse: no request.
  for (const chainId of req.lake === false ? [] : req.chains)
    checks.push(
      ...(await lakeChecks(req.warehouse, {
        dataDir: req.config.dataDir,
        chainId,
        ...(req.datasets ? { datasets: req.datasets } : {}),
        values: req.values === true,
      })),
    );
  return {
    checks,
    mismatches: checks.flatMap((c) => c.mismatches),
    requests: reader.requests + ids.requests + values.requests,
  };
}
