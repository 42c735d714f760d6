import type { Dataset } from '../../catalog/catalog.ts';
import { chainName } from '../../config/chains.ts';
import { StopRequested, UpstreamError } from '../../errors.ts';
import type { Answer, Endpoint } from '../../upstream/client.ts';
import { withRetries } from '../../upstream/retry.ts';
import type { PageSource, TaskDeps } from '../seams.ts';
import {
  type Failover,
  FLOOR_SHARE,
  type PinnedBlock,
  type StandbyRoute,
  type Task,
  type TaskPin,
  type TaskStats,
} from '../task.ts';
import { readiness } from './standby.ts';

/** Smallest page size reached by halving after time-outs. */
export const MIN_PAGE_SIZE = 50;

/** Retries that wait on a route that does not answer: logged at warn level, which a terminal shows. */
const WAITS: ReadonlySet<string> = new Set(['timeout', 'unreachable']);
/** How long an attempt may go unanswered before the run says what it waits for (on the terminal), as at the probe. */
const WAIT_FACE_MS = 5_000;

/** Failures after which a task moves to a standby route: the route, not the request, is at fault. */
const FAILOVER_KINDS: ReadonlySet<string> = new Set([
  'unreachable',
  'network',
  'timeout',
  'http',
  'rate-limit',
  'graphql',
  'garbage',
]);

/** A task's requests on its route, and the routes it may move to; `RoutedSource` reads its pages through them. */
export class RoutedRequests implements PageSource {
  protected pageSize: number;
  /** Where the task reads: its pinned block and, after a failover, the new route's root field. */
  pin: TaskPin;
  /** The route the task reads from now. */
  endpoint: Endpoint;
  /** Moves to other routes (shared by the shards of one backfill). */
  readonly failovers: Failover[];
  /** Routes not tried yet that may take the task over. */
  private readonly standby: StandbyRoute[];
  /** Labels of the routes the task has been on: a request to one of them follows the task to the route it is on now. */
  private readonly taken: Set<string>;
  /** The collection fields of those routes, which a request written for one of them may name. */
  private readonly roots: Set<string>;
  protected readonly task: Task;
  protected readonly deps: TaskDeps;
  /** The task's counters: requests, bytes and retries are counted here. */
  private readonly stats: TaskStats;

  constructor(of: { task: Task; deps: TaskDeps; pin: TaskPin; failovers: Failover[]; stats: TaskStats }) {
    ({ task: this.task, deps: this.deps, pin: this.pin, failovers: this.failovers, stats: this.stats } = of);
    this.endpoint = of.task.endpoint;
    this.standby = [...(of.pin.standby ?? [])];
    this.taken = new Set([of.task.endpoint.label]);
    this.roots = new Set([of.pin.root]);
    this.pageSize = of.deps.config.pageSize;
  }

  protected get ds(): Dataset {
    return this.task.ds;
  }

  private get block(): PinnedBlock {
    return this.pin.block;
  }

  /**
   * Fetches one answer with retries; halves the page size after a time-out. A route that fails past its retries hands
   * the task to its next standby route, which reads the same page at the same pinned block (see `failover`).
   */
  async fetch<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    return (await this.request<T>(this.endpoint, query, vars)).data;
  }

  /**
   * `PageSource.request` with the task's retries, page halving and failover. A request to a route the task is or was
   * on goes to the route it is on now, under that route's collection field, with `first` set to the page size unless
   * `vars` sets its own (a request that must not be cut short, one asking whether ids exist, does); a request to another
   * route is retried only.
   */
  request<T>(endpoint: Endpoint, query: string, vars: Record<string, unknown>): Promise<Answer<T>> {
    const { source } = this.deps;
    if (!this.taken.has(endpoint.label))
      return this.withRetries(endpoint.url, () => source.request<T>(endpoint, query, vars));
    return this.withRoutes(query, vars, (q, v) => source.request<T>(this.endpoint, q, v));
  }

  /** `PageSource.requestBody`, routed as `request` is. */
  requestBody(
    endpoint: Endpoint,
    query: string,
    vars: Record<string, unknown>,
  ): Promise<{ body: Uint8Array; bytes: number; requests?: number }> {
    const { source } = this.deps;
    if (!this.taken.has(endpoint.label))
      return this.withRetries(endpoint.url, () => source.requestBody(endpoint, query, vars));
    return this.withRoutes(query, vars, (q, v) => source.requestBody(this.endpoint, q, v));
  }

  /** `PageSource.answerData`, judged by the route the body came from (the task's route now, for the task's routes). */
  answerData<T>(endpoint: Endpoint, body: Uint8Array): T {
    return this.deps.source.answerData<T>(this.taken.has(endpoint.label) ? this.endpoint : endpoint, body);
  }

  /**
   * Sends one request of the task with `send` (whose answer counts `bytes`), with retries and failover as `fetch` does.
   * `send` gets the query as the current route names its collection.
   */
  protected async withRoutes<R extends { bytes: number; requests?: number; indexed?: number }>(
    query: string,
    vars: Record<string, unknown>,
    send: (query: string, vars: Record<string, unknown>) => Promise<R>,
  ): Promise<R> {
    if (this.deps.signal.aborted) throw new StopRequested();
    this.aboveFloor();
    // Every page query selects `rows: <root>(`: a query written for a route the task left names that route's field.
    let text = query;
    for (const root of this.roots) text = text.replace(`rows: ${root}(`, `rows: ${this.pin.root}(`);
    for (;;) {
      try {
        const r = await this.withRetries(this.endpoint.url, () => send(text, { first: this.pageSize, ...vars }));
        this.deps.routes?.indexed(this.endpoint.url, r.indexed, Date.now());
        return r;
      } catch (e) {
        if (this.deps.signal.aborted) throw new StopRequested();
        const root = this.pin.root;
        if (!(await this.failover(e))) throw e;
        // Every page query selects `rows: <root>(`: the new route may name the collection otherwise.
        text = text.replace(`rows: ${root}(`, `rows: ${this.pin.root}(`);
      }
    }
  }

  /**
   * Refuses a request at the pinned block once the deployment, which keeps `history` blocks (its manifest's
   * `indexerHints.prune`), has likely indexed 3/4 of that past it, by the answers' `graph-indexed` header and its
   * pace: graph-node prunes the block soon after the head passes it by the history (`sandbox/prune.ts`), and a task
   * moves to a newer block (`moved-floor.ts`) before any request is made at a block the deployment no longer holds.
   */
  private aboveFloor(): void {
    const { history, block } = this.pin;
    const indexed = this.deps.routes?.indexed(this.endpoint.url, undefined, Date.now());
    if (history === undefined || indexed === undefined || indexed - block.number < FLOOR_SHARE * history) return;
    throw new UpstreamError(
      `the deployment keeps ${history} blocks (its manifest's indexerHints.prune) and has indexed block ${indexed}: block ${block.number} is soon pruned`,
      { kind: 'pruned', retryable: false, floor: indexed - history },
    );
  }

  /**
   * Moves the task to the next standby route that can continue it exactly, after `e` ended the retries on the
   * current one; false when none can (the task then fails with `e`, its checkpoint kept). A route can continue when it
   * answers, reports no indexing errors, has indexed the task's pinned block, names the dataset's entity, filters as
   * the current one does (`_change_block`), and is on the current route's chain: when its head is at or past the
   * current route's head, it must know that block's hash. Pages are pinned to one block and cursors are keys, so the
   * new route's pages continue where the last committed batch ended: no row is repeated or skipped.
   */
  private async failover(e: unknown): Promise<boolean> {
    if (!(e instanceof UpstreamError) || !FAILOVER_KINDS.has(e.kind)) return false;
    for (let next = this.standby.shift(); next; next = this.standby.shift()) {
      const from = this.endpoint.label;
      const move = { from, to: next.endpoint.label, block: this.block.number, reason: e.message };
      const checked = await readiness(this.deps.source, next, {
        ds: this.ds,
        pin: this.pin,
        label: this.endpoint.label,
      });
      if (typeof checked === 'string') {
        this.failovers.push({ ...move, refused: checked });
        this.deps.log(
          'failover-refused',
          { dataset: this.ds.name, chainId: this.task.chainId, ...move, refused: checked },
          'warn',
        );
        continue;
      }
      this.endpoint = next.endpoint;
      this.taken.add(next.endpoint.label);
      this.roots.add(checked.root);
      this.pin = { ...this.pin, root: checked.root, head: checked.head };
      this.failovers.push(move);
      this.deps.log('failover', { dataset: this.ds.name, chainId: this.task.chainId, ...move }, 'warn');
      return true;
    }
    return false;
  }

  /**
   * Runs one request to the route `url` with retries, counting it and its bytes (an answer a batch read counts what it
   * says it cost: `PageSource.requestBody`); halves the page size after a time-out. A route the run gave up on fails it
   * at once, and a failure of the route that ends its retries gives the route up (`route-health.ts`). A retry after a
   * time-out or an unreachable host is a wait, logged where a terminal shows it.
   */
  private async withRetries<R extends { bytes: number; requests?: number }>(
    url: string,
    send: () => Promise<R>,
  ): Promise<R> {
    const routes = this.deps.routes;
    return withRetries(
      async (attempt) => {
        // Given up by another request of the run while this one waited: no attempt more.
        const down = routes?.down(url);
        if (down) throw down;
        this.stats.requests++;
        const face = this.waitFace(url, attempt);
        try {
          const r = await send();
          if (r.requests !== undefined) this.stats.requests += r.requests - 1;
          this.stats.bytes += r.bytes;
          return r;
        } catch (e) {
          if (e instanceof UpstreamError && e.kind === 'timeout') {
            this.pageSize = Math.max(MIN_PAGE_SIZE, Math.floor(this.pageSize / 2));
          }
          throw e;
        } finally {
          clearTimeout(face);
        }
      },
      {
        maxAttempts: this.deps.config.maxAttempts,
        onRetry: (err, attempt, delayMs) => {
          this.stats.retries++;
          const { name: dataset } = this.ds;
          this.deps.log(
            'retry',
            {
              dataset,
              chain: chainName(this.task.chainId),
              chainId: this.task.chainId,
              attempt,
              of: this.deps.config.maxAttempts,
              delayMs,
              kind: err.kind,
              error: err.message,
            },
            WAITS.has(err.kind) ? 'warn' : 'info',
          );
        },
      },
    ).catch((e: unknown) => {
      throw routes ? routes.gaveUp(url, e) : e;
    });
  }

  /**
   * A timer that says, at the level a terminal shows, that attempt `attempt` of a request to the route `url` is still
   * unanswered after WAIT_FACE_MS: the host, what for, the attempt of how many and the time limit (once per time
   * limit per route: `RouteHealth.faceDue`). Cleared when the attempt ends.
   */
  private waitFace(url: string, attempt: number): NodeJS.Timeout | undefined {
    const { config, routes } = this.deps;
    if (!routes || config.timeoutMs <= WAIT_FACE_MS) return undefined;
    const face = setTimeout(() => {
      if (!routes.faceDue(url, Date.now(), config.timeoutMs)) return;
      this.deps.log(
        'waiting',
        {
          host: new URL(url).host,
          for: `${this.ds.name} on ${chainName(this.task.chainId)}`,
          attempt,
          of: config.maxAttempts,
          seconds: WAIT_FACE_MS / 1000,
          limitMs: config.timeoutMs,
        },
        'warn',
      );
    }, WAIT_FACE_MS);
    face.unref();
    return face;
  }
}
