/** What a task is and what it reports: one dataset on one chain, pinned to one block. */
import type { Dataset } from '../catalog/catalog.ts';
import type { LedgerTask } from '../store/run-ledger.ts';
import type { Endpoint } from '../upstream/client.ts';
import type { EndpointInfo } from '../upstream/endpoint-probe.ts';

/** One unit of work of a plan. */
export interface Task {
  readonly chainId: number;
  readonly ds: Dataset;
  /** The route the task reads from: the first of `routes` in a plan, the one chosen at its start in a run. */
  readonly endpoint: Endpoint;
  /** Every route of the task's chain and schema, in order of preference. */
  readonly routes: readonly Endpoint[];
}

/** The share of a deployment's kept history a pinned block may fall behind the head before its task moves on. */
export const FLOOR_SHARE = 0.75;

/** The pinned block of an endpoint for this run. */
export interface PinnedBlock {
  readonly number: number;
  readonly timestamp: number;
}

/**
 * The block a task reads at on a route whose head is `head`: `confirmations` below it (never below 0), at the head's
 * time (close enough for a watermark: incremental runs re-read their window, or go on from a read that stands), or
 * `now` where the route gives no time.
 */
export function pinnedAt(
  head: { readonly number: number; readonly timestamp?: number | null | undefined },
  confirmations: number,
  now: number,
): PinnedBlock {
  return { number: Math.max(0, head.number - confirmations), timestamp: head.timestamp ?? now };
}

/** Where a task reads this run: the pinned block, and what its endpoint's probe found. */
export interface TaskPin {
  readonly block: PinnedBlock;
  /** The endpoint's collection field of the dataset's entity (`liquidity_list` for the list). */
  readonly root: string;
  /** Whether the endpoint accepts `_change_block` filters. */
  readonly changeBlock: boolean;
  /**
   * Whether the task's last read stands: its head is on the chain the route serves now (`routing/reorg-check.ts`), so
   * an incremental pass reads only what is new, with no re-read window.
   */
  readonly settled?: boolean;
  /**
   * Whether the pin moved up during the run because the deployment pruned the block it was at (`moved-floor.ts`): rows
   * the run committed before were read at an earlier block.
   */
  readonly moved?: boolean;
  /**
   * The blocks of history the deployment keeps (its manifest's `indexerHints.prune`), where known: the task moves on
   * once its block is FLOOR_SHARE of it behind the head (`routing/routed-source.ts`, `moved-floor.ts`).
   */
  readonly history?: number;
  /** The head the route reported at the run's start (the block pinned, or `confirmations` above it). */
  readonly head?: { readonly number: number; readonly hash: string | null };
  /** Routes that can take the task over when this one fails past its retries, in order (see `routing/route-choice.ts`). */
  readonly standby?: readonly StandbyRoute[];
}

/** A route usable at the task's start but not chosen: its endpoint and what its probe found. */
export interface StandbyRoute {
  readonly endpoint: Endpoint;
  readonly info: EndpointInfo;
}

/** Where one route stood at the task's start, as the ledger and `status` show it. */
export interface RouteView {
  readonly label: string;
  /** Its head block, when it answered. */
  readonly head: number | null;
  /** Blocks behind the freshest healthy route of the task, when it answered. */
  readonly lagBlocks: number | null;
  /** `chosen`, `standby` (usable, not chosen), or why it was passed over. */
  readonly state: 'chosen' | 'standby' | 'unhealthy' | 'forked' | 'behind';
  readonly note: string | null;
}

/** A task's move from one route to the next after the first failed past its retries (or a refused move). */
export interface Failover {
  readonly from: string;
  readonly to: string;
  /** The task's pinned block: the new route reads at it too. */
  readonly block: number;
  /** Why the first route was left. */
  readonly reason: string;
  /** Why the new route was not taken, when it was not. */
  readonly refused?: string;
}

/** Counters of one task, for the summary and the run ledger. */
export interface TaskStats {
  pages: number;
  rows: number;
  requests: number;
  retries: number;
  bytes: number;
  /** Rows the upstream sent with an id it had already sent (within a batch, or already stored): only the newest is kept. */
  duplicates: number;
  /** Keyset value from which stored rows were replaced (events and buckets), for the lake's partitions. */
  rewriteFrom?: number;
  /** Moves to other routes during the task, and refused ones (one list for a backfill and its shards). */
  failovers?: Failover[];
}

/**
 * The outcome of one task. `unavailable`: the endpoint's deployment has no such entity (older deployments lack some),
 * so the task was skipped there; neither a failure nor a success.
 */
export interface TaskResult {
  readonly task: Task;
  readonly status: 'ok' | 'failed' | 'unavailable';
  readonly stats: TaskStats;
  readonly block: number | null;
  readonly cursorBefore: string | null;
  readonly cursorAfter: string | null;
  readonly startedAt: Date;
  readonly endedAt: Date;
  readonly error?: { readonly cls: string; readonly message: string };
  /** The label of the route the task read from (its chain's exchange route for the liquidity list). */
  readonly route?: string;
  /** Where each route stood at the task's start, when its chain and schema has several. */
  readonly routes?: readonly RouteView[];
  /** Moves to another route during the task (and refused ones), in order. */
  readonly failovers?: readonly Failover[];
  /** The task read nothing: its route's head is the one its last complete read saw (see `CheckpointStore.complete`). */
  readonly unchanged?: true;
  /** The head of the task's route when it read, `<number>:<hash>`; absent where the route gives no hash. */
  readonly head?: string;
}

/** Fresh counters of a task. */
export function emptyStats(): TaskStats {
  return { pages: 0, rows: 0, requests: 0, retries: 0, bytes: 0, duplicates: 0 };
}

/** Whether a task ended because the run was asked to stop: not a failure (the next run resumes it). */
export const isStopped = (r: Pick<TaskResult, 'status' | 'error'>): boolean =>
  r.status === 'failed' && r.error?.cls === 'stopped';

/** A task's result as the run ledger records it: a stopped task as `stopped`, with no error. */
export function ledgerTask(r: TaskResult): LedgerTask {
  const { pages, rows, requests, retries, duplicates } = r.stats;
  const stopped = isStopped(r);
  return {
    chainId: r.task.chainId,
    dataset: r.task.ds.name,
    status: stopped ? 'stopped' : r.status,
    startedAt: r.startedAt,
    endedAt: r.endedAt,
    ...{ pages, rows, requests, retries, duplicates },
    block: r.block,
    cursorBefore: r.cursorBefore,
    cursorAfter: r.cursorAfter,
    ...(r.error && !stopped ? { error: r.error } : {}),
    ...(r.route ? { route: r.route } : {}),
    ...(r.routes ? { routes: r.routes } : {}),
    ...(r.failovers ? { failovers: r.failovers } : {}),
    ...(r.head ? { head: r.head } : {}),
  };
}
