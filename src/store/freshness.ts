/**
 * How fresh a dataset of a chain is, as `status`, the metrics endpoint and the dashboard's freshness panel all state
 * it: the lag is the time from the block its committed data were read at to a reference time, the freshest head of
 * its routes (read with the project's one head query) when one could be read, or the clock; and a dataset is stale
 * when it never succeeded or lags more than allowed. A dataset the upstream's deployment does not have
 * (`unavailable`) is never stale.
 */
import { findDataset } from '../catalog/catalog.ts';
import { subgraphOf } from '../catalog/subgraphs.ts';
import type { Config } from '../config/config.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { HEAD_QUERY, type HeadAnswer } from '../upstream/endpoint-probe.ts';
import { headRoutesFor } from '../upstream/routes.ts';
import type { StatusEntry } from './status-entries.ts';

/** Seconds from `blockTime` (ISO) to `referenceSecs` (Unix seconds), never negative; null without a block time. */
export function lagSeconds(blockTime: string | null, referenceSecs: number): number | null {
  if (blockTime === null) return null;
  return Math.max(0, Math.round(referenceSecs - Date.parse(blockTime) / 1000));
}

/** Whether a dataset is stale: never exported, of unknown lag, or lagging more than `staleAfterSecs`. */
export function isStale(
  e: { readonly lastSuccess: string | null; readonly lastStatus: string | null },
  lag: number | null,
  staleAfterSecs: number,
): boolean {
  if (e.lastStatus === 'unavailable') return false;
  return e.lastSuccess === null || lag === null || lag > staleAfterSecs;
}

/** A route's head: its block number and that block's time (Unix seconds). */
export interface Head {
  readonly number: number;
  readonly timestamp: number;
}

/** Heads by route URL. */
export type Heads = ReadonlyMap<string, Head>;

/** A dataset and a chain. */
export interface DatasetKey {
  readonly dataset: string;
  readonly chainId: number;
}

/**
 * The heads of every route of `keys`, by URL, one head query per route; `why` says why none could be read, when none
 * could (no key for DODO's routes, or every request failed: the first error, with the key removed by the client).
 * Without a key, the routes of subgraphs added by URL are still read: they need none.
 */
export async function readHeads(
  config: Config,
  keys: readonly DatasetKey[],
  opts: { readonly signal?: AbortSignal } = {},
): Promise<{ heads: Map<string, Head>; why?: string }> {
  const out = new Map<string, Head>();
  // A subgraph's own endpoint needs no key; DODO's service and gateway do.
  const askable = config.apiKey ? keys : keys.filter((k) => subgraphOf(findDataset(k.dataset)!.schema) !== undefined);
  if (keys.length && !askable.length)
    return { heads: out, why: 'no API key is set (POOL_EXPORT_API_KEY), so the upstream was not asked for its head' };
  const client = UpstreamClient.forConfig(config, {
    timeoutMs: Math.min(config.timeoutMs, 10_000),
    ...(opts.signal ? { signal: opts.signal } : {}),
  });
  const endpoints = new Map(
    askable.flatMap((k) => headRoutesFor(config, findDataset(k.dataset)!, k.chainId).map((e) => [e.url, e] as const)),
  );
  let error: string | undefined;
  await Promise.all(
    [...endpoints.values()].map(async (e) => {
      try {
        const m = (await client.request<HeadAnswer>(e, HEAD_QUERY, {})).data._meta.block;
        out.set(e.url, { number: m.number, timestamp: m.timestamp ?? 0 });
      } catch (err) {
        error ??= (err as Error).message;
      }
    }),
  );
  return out.size || !endpoints.size
    ? { heads: out }
    : { heads: out, why: `the upstream's head could not be read (${error})` };
}

/** The freshest of some heads (the ones that could be read). */
export function freshest(heads: readonly (Head | undefined)[]): Head | undefined {
  return heads.reduce<Head | undefined>((best, h) => (h && (!best || h.number > best.number) ? h : best), undefined);
}

/** Where one dataset of a chain stands against the upstream. */
export interface Freshness {
  /** The freshest head of its routes, when one was read. */
  readonly upstreamBlock: number | null;
  /** Blocks from its committed block to that head; null without either. */
  readonly lagBlocks: number | null;
  /** Seconds from its committed block's time to the head's time (or to `nowSecs`); null before its first success. */
  readonly lagSeconds: number | null;
  readonly stale: boolean;
}

/** The freshness of `entry` against the heads read (see `readHeads`), with several routes against the freshest. */
export function freshnessOf(
  config: Config,
  entry: StatusEntry,
  at: { readonly heads: Heads; readonly nowSecs: number; readonly staleAfterSecs: number },
): Freshness {
  // A dataset a later version no longer has (an older status file's) has no route to read a head from.
  const ds = findDataset(entry.dataset);
  const routes = ds ? headRoutesFor(config, ds, entry.chainId) : [];
  const head = freshest(routes.map((e) => at.heads.get(e.url)));
  const lag = lagSeconds(entry.blockTime, head?.timestamp ?? at.nowSecs);
  return {
    upstreamBlock: head?.number ?? null,
    lagBlocks: head && entry.block !== null ? Math.max(0, head.number - entry.block) : null,
    lagSeconds: lag,
    stale: isStale(entry, lag, at.staleAfterSecs),
  };
}
