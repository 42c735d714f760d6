/**
 * The routes of a run: one probe per route (the block its tasks are pinned to, the root fields it serves), then the
 * route each task reads from, with the routes it may fail over to (see `route-choice.ts` for the rule).
 */
import pLimit from 'p-limit';
import { recordedDeployment } from '../../catalog/subgraphs.ts';
import { chainName } from '../../config/chains.ts';
import { UpstreamError } from '../../errors.ts';
import type { Endpoint } from '../../upstream/client.ts';
import { endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../../upstream/endpoint-probe.ts';
import { withRetries } from '../../upstream/retry.ts';
import { headRoutesFor } from '../../upstream/routes.ts';
import { redact } from '../../upstream/upstream-error.ts';
import { inert } from '../../util/inert.ts';
import type { RunArgs } from '../run-args.ts';
import { pinnedAt, type RouteView, type StandbyRoute, type Task } from '../task.ts';
import {
  chooseRoute,
  type HashLookup,
  hasBlock,
  noRouteMessage,
  type Probed,
  type RouteChoice,
} from './route-choice.ts';

/** What finding the routes needs of a run. */
type RouteArgs = Pick<RunArgs, 'tasks' | 'config' | 'client' | 'log'>;

/**
 * Attempts a probe makes at a host that cannot be reached, or that takes connections and never answers: it is the first
 * request there, so a wrong or stalled address fails the run in three time limits (about 95 s with `timeoutMs` 30 s)
 * rather than eight, and its other routes are not asked at all.
 */
const PROBE_DOWN_ATTEMPTS = 3;

/** How long the first probe of a host may go unanswered before the run says what it waits for (on the terminal). */
const WAIT_FACE_MS = 5_000;

/** Failures of a host's first probe that its other routes would meet too. */
const HOST_DOWN = new Set(['unreachable', 'timeout']);

/**
 * One probe per route (see `endpoint-probe.ts`): the block every page of its tasks is pinned to, and the root field
 * of each entity there. Keyed by the route's URL; a list task's routes are its chain's exchange routes. Each host is
 * tried with one route first: a host that cannot be reached fails all of its routes with that one answer, within
 * seconds, instead of each going through its whole retry budget.
 */
export async function probeRoutes(args: RouteArgs): Promise<Map<string, Probed>> {
  const probed = new Map<string, Probed>();
  const now = Math.floor(Date.now() / 1000);
  const endpoints = new Map<string, { chainId: number; schema: string; endpoint: Endpoint }>();
  for (const t of args.tasks)
    for (const endpoint of headRoutesFor(args.config, t.ds, t.chainId))
      endpoints.set(endpoint.url, {
        chainId: t.chainId,
        schema: t.ds.kind === 'list' ? 'dodoex' : t.ds.schema,
        endpoint,
      });
  const attempts = Math.min(args.config.maxAttempts, PROBE_DOWN_ATTEMPTS);
  const probe = async (t: { chainId: number; schema: string; endpoint: Endpoint }): Promise<Probed> => {
    const host = t.endpoint.host;
    const what = `the head block of ${t.schema} on ${chainName(t.chainId)}`;
    // An attempt unanswered after a few seconds says what it waits for, at the level a terminal shows: the host, the
    // attempt and the time limit.
    let attempt = 1;
    const asking = (n: number) => {
      attempt = n;
      const face = setTimeout(
        () =>
          args.log(
            'waiting',
            { host, for: what, attempt: n, of: attempts, seconds: WAIT_FACE_MS / 1000, limitMs: args.config.timeoutMs },
            'warn',
          ),
        WAIT_FACE_MS,
      );
      face.unref();
      return args.client.request<ProbeAnswer>(t.endpoint, PROBE_QUERY, {}).finally(() => clearTimeout(face));
    };
    try {
      const r = await withRetries(asking, {
        maxAttempts: args.config.maxAttempts,
        maxAttemptsFor: (e) => (HOST_DOWN.has(e.kind) ? PROBE_DOWN_ATTEMPTS : Infinity),
        onRetry: (err, failed, delayMs) =>
          args.log('retry', {
            endpoint: t.endpoint.label,
            attempt: failed,
            delayMs,
            kind: err.kind,
            error: redact(err.message, args.config.secrets),
          }),
      });
      const info = endpointInfo(r.data);
      if (info.hasIndexingErrors) {
        throw new UpstreamError(
          `the ${t.schema} subgraph of ${chainName(t.chainId)} reports indexing errors, so its data may be incomplete; these datasets are skipped until it recovers`,
          { kind: 'graphql', retryable: false },
        );
      }
      const recorded = recordedDeployment(t.schema, t.chainId);
      if (recorded !== undefined && info.deployment && info.deployment !== recorded)
        throw new UpstreamError(
          `the subgraph ${t.schema} on ${chainName(t.chainId)} serves a new deployment, ${inert(info.deployment)} (added at ${recorded}): a new version may have changed any row, so none is read from it until \`pool-export subgraph refresh ${t.schema}\` takes it (every dataset there read again whole)`,
          { kind: 'graphql', retryable: false },
        );
      return { block: pinnedAt(info.head, args.config.confirmations, now), info };
    } catch (e) {
      // No answer at all (not one whose body trickled, whose own message says more): the host is named, with the fix.
      if (e instanceof UpstreamError && e.kind === 'timeout' && e.message.startsWith('no answer within'))
        return new UpstreamError(
          `the upstream host ${host} took the connection but sent no answer to ${what} within ${args.config.timeoutMs} ms, ${attempt === 1 ? 'once' : `${attempt} times`}: check that ${host} is the service's address and that the service is up (the time limit is timeoutMs)`,
          { kind: 'timeout', retryable: false },
        );
      return e as Error;
    }
  };
  const byHost = new Map<string, { chainId: number; schema: string; endpoint: Endpoint }[]>();
  for (const t of endpoints.values()) byHost.set(t.endpoint.host, [...(byHost.get(t.endpoint.host) ?? []), t]);
  const limit = pLimit(args.config.concurrency);
  await Promise.all(
    [...byHost.values()].map(async ([first, ...rest]) => {
      const answer = await limit(() => probe(first!));
      probed.set(first!.endpoint.url, answer);
      const down = answer instanceof UpstreamError && HOST_DOWN.has(answer.kind);
      if (down)
        args.log(
          answer.kind === 'timeout' ? 'host-stalled' : 'host-unreachable',
          {
            host: first!.endpoint.host,
            endpoints: rest.length + 1,
            error: redact(answer.message, args.config.secrets),
          },
          'error',
        );
      await Promise.all(rest.map(async (t) => probed.set(t.endpoint.url, down ? answer : await limit(() => probe(t)))));
    }),
  );
  return probed;
}

/**
 * The route of every task: with one route, its probe as it is; with several, the choice of `route-choice.ts` (made
 * once per chain and schema, so that its tasks read from one route).
 */
export async function chooseRoutes(args: RouteArgs, probed: Map<string, Probed>): Promise<Map<Task, TaskRoute>> {
  const lookup: HashLookup = (endpoint, hash) => hasBlock(args.client, endpoint, hash);
  const byRoutes = new Map<string, Promise<RouteChoice>>();
  const out = new Map<Task, TaskRoute>();
  for (const t of args.tasks) {
    const heads = headRoutesFor(args.config, t.ds, t.chainId);
    if (heads.length === 1) {
      out.set(t, { probe: probed.get(heads[0]!.url)!, endpoint: t.endpoint, route: heads[0]!.label });
      continue;
    }
    const key = heads.map((e) => e.url).join(' ');
    if (!byRoutes.has(key))
      byRoutes.set(
        key,
        chooseRoute(
          heads.map((endpoint) => ({ endpoint, probe: probed.get(endpoint.url)! })),
          { maxLagBlocks: args.config.maxLagBlocks, mode: args.config.routeChoice, lookup },
        ),
      );
    const choice = await byRoutes.get(key)!;
    const chosen = choice.chosen;
    const views = choice.views.map((v) => ({
      ...v,
      note: v.note === null ? null : redact(v.note, args.config.secrets),
    }));
    if (!chosen) {
      out.set(t, { probe: new NoRouteError(noRouteMessage(views)), endpoint: t.endpoint, views });
      continue;
    }
    // The liquidity list keeps its own endpoint; its block comes from the chosen exchange route.
    const endpoint = t.ds.kind === 'list' ? t.endpoint : chosen.endpoint;
    const standby = choice.standby.map((r) => ({ endpoint: r.endpoint, info: r.probe.info }));
    out.set(t, { probe: chosen.probe, endpoint, route: chosen.endpoint.label, views, standby });
    if (chosen.endpoint.url !== heads[0]!.url)
      args.log(
        'route-chosen',
        {
          dataset: t.ds.name,
          chain: chainName(t.chainId),
          chainId: t.chainId,
          route: chosen.endpoint.label,
          passedOver: views.filter((v) => v.state !== 'chosen' && v.state !== 'standby'),
        },
        'warn',
      );
  }
  return out;
}

/** A task's route this run: its probe (or why none can serve it), the endpoint it reads, and where each route stood. */
export interface TaskRoute {
  readonly probe: Probed;
  readonly endpoint: Endpoint;
  readonly route?: string;
  readonly views?: readonly RouteView[];
  /** Routes usable at the start but not chosen, in order: the task may move to them if its route fails. */
  readonly standby?: readonly StandbyRoute[];
}

/** No route of a task can serve it (each was unhealthy, on another fork, or too far behind). */
export class NoRouteError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'no-route';
  }
}
