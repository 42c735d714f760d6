/**
 * Which route a task reads from, when its chain and schema has several (`config.routes`). Every route is probed at
 * the run's start (its `_meta`: head block, hash, indexing errors). Then, in this order:
 *
 * 1. a route that did not answer, or reports indexing errors, is not healthy;
 * 2. a healthy route that does not share the first healthy route's chain is refused as being on another fork: both
 *    know the lower of their two heads by hash, or they are not on one chain (the message names both hashes);
 * 3. of the others, a route more than `maxLagBlocks` behind the freshest is too far behind;
 * 4. the task takes the first remaining route in the configured order (`first-healthy`), or the freshest of them
 *    (`freshest`, ties to the earlier).
 *
 * A task with no route left fails before reading a page, naming why each route was passed over.
 */
import { UpstreamError } from '../../errors.ts';
import type { Endpoint } from '../../upstream/client.ts';
import { BLOCK_BY_HASH_QUERY, type EndpointInfo } from '../../upstream/endpoint-probe.ts';
import { maxOf } from '../../util/extremes.ts';
import type { PageSource } from '../seams.ts';
import type { PinnedBlock, RouteView } from '../task.ts';

/** What a route's probe gave this run: its pinned block and what it serves, or why it cannot be used. */
export type Probed = { readonly block: PinnedBlock; readonly info: EndpointInfo } | Error;

/** One route of a task and its probe. */
export interface RouteProbe {
  readonly endpoint: Endpoint;
  readonly probe: Probed;
}

/** The route a task reads from (none when every route was passed over), and where each stood. */
export interface RouteChoice {
  readonly chosen: RouteProbe | undefined;
  readonly views: readonly RouteView[];
  /** The other usable routes, in the configured order: where the task may move if its route fails. */
  readonly standby: readonly (RouteProbe & { readonly probe: Exclude<Probed, Error> })[];
}

/**
 * Whether `endpoint` has a block with `hash` on its chain: true, false (graph-node answers `no block with that hash
 * found`), or undefined when the question could not be asked (the route failed to answer).
 */
export type HashLookup = (endpoint: Endpoint, hash: string) => Promise<boolean | undefined>;

/** The query that asks a route whether it has a block with a given hash (graph-node's `Block_height.hash`). */

/** Asks a route whether it has the block with `hash` on its chain (see `HashLookup` for the answers). */
export async function hasBlock(
  source: Pick<PageSource, 'request'>,
  endpoint: Endpoint,
  hash: string,
): Promise<boolean | undefined> {
  try {
    await source.request(endpoint, BLOCK_BY_HASH_QUERY, { hash });
    return true;
  } catch (e) {
    return e instanceof UpstreamError && /no block with that hash found/.test(e.message) ? false : undefined;
  }
}

type Healthy = RouteProbe & { readonly probe: Exclude<Probed, Error> };

const healthy = (r: RouteProbe): r is Healthy => !(r.probe instanceof Error);

/**
 * Why `other` is on another fork than `ref` (the first healthy route), or undefined when they share a chain or it
 * cannot be told (a route without block hashes, or a lookup that failed).
 */
async function forkOf(ref: Healthy, other: Healthy, lookup: HashLookup): Promise<string | undefined> {
  const a = ref.probe.info.head;
  const b = other.probe.info.head;
  if (!a.hash || !b.hash) return undefined;
  if (a.number === b.number)
    return a.hash === b.hash
      ? undefined
      : `on another fork than ${ref.endpoint.label}: at block ${a.number} its hash is ${b.hash}, there ${a.hash}`;
  const [low, high] = a.number < b.number ? [ref, other] : [other, ref];
  const lowHead = low.probe.info.head;
  const highHead = high.probe.info.head;
  if ((await lookup(high.endpoint, lowHead.hash!)) !== false) return undefined;
  return `on another fork than ${ref.endpoint.label}: block ${lowHead.number} has hash ${lowHead.hash} on ${low.endpoint.label}, which ${high.endpoint.label} does not have (its head ${highHead.number} has hash ${highHead.hash})`;
}

/** Chooses the route of a task among its probed routes (see the header for the rule). */
export async function chooseRoute(
  routes: readonly RouteProbe[],
  opts: { readonly maxLagBlocks: number; readonly mode: 'first-healthy' | 'freshest'; readonly lookup: HashLookup },
): Promise<RouteChoice> {
  const ok = routes.filter(healthy);
  const forked = new Map<RouteProbe, string>();
  const ref = ok[0];
  // One route: nothing to compare it with, and no request is spent on it.
  if (ref)
    for (const r of ok.slice(1)) {
      const why = await forkOf(ref, r, opts.lookup);
      if (why) forked.set(r, why);
    }
  const sane = ok.filter((r) => !forked.has(r));
  const freshest = maxOf(sane.map((r) => r.probe.info.head.number));
  const usable = sane.filter((r) => freshest - r.probe.info.head.number <= opts.maxLagBlocks);
  const chosen =
    opts.mode === 'freshest'
      ? usable.reduce<Healthy | undefined>(
          (best, r) => (!best || r.probe.info.head.number > best.probe.info.head.number ? r : best),
          undefined,
        )
      : usable[0];
  const views = routes.map((r): RouteView => {
    if (!healthy(r))
      return {
        label: r.endpoint.label,
        head: null,
        lagBlocks: null,
        state: 'unhealthy',
        note: (r.probe as Error).message,
      };
    const head = r.probe.info.head.number;
    const lagBlocks = sane.length ? Math.max(0, freshest - head) : null;
    const base = { label: r.endpoint.label, head, lagBlocks };
    const why = forked.get(r);
    if (why) return { ...base, state: 'forked', note: why };
    if (!usable.includes(r))
      return {
        ...base,
        state: 'behind',
        note: `${lagBlocks} blocks behind the freshest route (maxLagBlocks ${opts.maxLagBlocks})`,
      };
    return { ...base, state: r === chosen ? 'chosen' : 'standby', note: null };
  });
  return { chosen, views, standby: usable.filter((r) => r !== chosen) };
}

/** Why a task has no route: each route with the reason it was passed over. */
export function noRouteMessage(views: readonly RouteView[]): string {
  const each = views.map((v, i) => `route ${i + 1} (${v.label}): ${v.state}${v.note ? `, ${v.note}` : ''}`);
  return `no route can serve it: ${each.join('; ')}`;
}
