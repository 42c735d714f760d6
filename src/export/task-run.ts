/**
 * One task's run: fetches pages (with retries, halving the page size after time-outs), buffers their mapped rows
 * (one row per id), and commits batches with their checkpoint move. The paginators in `paginate/` drive it.
 */
import type { Dataset } from '../catalog/catalog.ts';
import { StopRequested, UpstreamError } from '../errors.ts';
import type { Replace } from '../store/sink.ts';
import type { Endpoint } from '../upstream/client.ts';
import { withRetries } from '../upstream/retry.ts';
import { mapPage } from './mapper.ts';
import { type PageShape, pageQuery } from './queries.ts';
import { hasBlock } from './route-choice.ts';
import type { TaskDeps } from './seams.ts';
import {
  emptyStats,
  type Failover,
  type PinnedBlock,
  type StandbyRoute,
  type Task,
  type TaskPin,
  type TaskStats,
} from './task.ts';

/** Smallest page size reached by halving after time-outs. */
export const MIN_PAGE_SIZE = 50;

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

/** A route's head and health, asked before the task moves to it. */
const FAILOVER_META_QUERY = '{ _meta { block { number hash } hasIndexingErrors } }';

type MetaAnswer = { _meta: { block: { number: number; hash: string | null }; hasIndexingErrors: boolean } };

/** Ids of repeated rows named in one log line at most (the count is always whole). */
const DUPLICATES_LOGGED = 5;

/** The cursor stored in a dataset's checkpoint. */
export interface Cursor {
  mode?: 'full' | 'incremental';
  seq?: string;
  id?: string;
  block?: number;
}

/** An upstream row: every entity has an id. */
export type Row = Record<string, unknown> & { id: string };

/** Which shard of a backfill a run pages: shard `shard` (1-based) of `shards`. */
export interface ShardOf {
  readonly shard: number;
  readonly shards: number;
}

/** A commit of the buffered rows: the checkpoint it moves to, and which stored rows it replaces. */
export interface Flush {
  /** The new cursor (stored as JSON). */
  readonly next: object;
  readonly replace: Replace;
  /** When the snapshot was taken (the block-less list). */
  readonly takenAt?: string;
  /** Deletes the dataset's shard checkpoints in the same transaction: the shards are merged into its own. */
  readonly mergeShards?: boolean;
}

export class TaskRun {
  readonly stats: TaskStats = emptyStats();
  private pageSize: number;
  private buffer: Record<string, unknown>[] = [];
  /** Position of each buffered id, so that a repeated id replaces its row instead of adding one. */
  private bufferIds = new Map<string, number>();
  /** The commit `flushBehind` started and nobody has awaited yet. */
  private running: Promise<void> | undefined;
  /** The committed cursor (JSON), or null before the first commit of a new dataset. */
  cursor: string | null;
  readonly block: PinnedBlock;
  /** Start of the keyset range, for progress. */
  from: number | undefined;

  readonly task: Task;
  readonly deps: TaskDeps;
  /** Where the task reads: its pinned block and, after a failover, the new route's root field. */
  pin: TaskPin;
  /** The route the task reads from now. */
  endpoint: Endpoint;
  /** Moves to other routes (shared by the shards of one backfill). */
  readonly failovers: Failover[];
  /** Routes not tried yet that may take the task over. */
  private readonly standby: StandbyRoute[];

  /** `prev`: the committed cursor; `shard`: the shard of a backfill whose checkpoint this run moves, if not the dataset's own. */
  constructor(
    of: { task: Task; deps: TaskDeps; pin: TaskPin; failovers?: Failover[] },
    prev: string | null,
    readonly shard?: ShardOf,
  ) {
    ({ task: this.task, deps: this.deps, pin: this.pin } = of);
    const { deps, pin } = of;
    this.endpoint = of.task.endpoint;
    this.failovers = of.failovers ?? [];
    this.stats.failovers = this.failovers;
    this.standby = [...(pin.standby ?? [])];
    this.pageSize = deps.config.pageSize;
    this.cursor = prev;
    this.block = pin.block;
  }

  /** Adds the counters of a shard's run to this one. */
  absorb(other: TaskStats): void {
    for (const k of ['pages', 'rows', 'requests', 'retries', 'bytes', 'duplicates'] as const) this.stats[k] += other[k];
  }

  get ds(): Dataset {
    return this.task.ds;
  }

  /** The keyset column of the dataset in the warehouse. */
  get seqColumn(): string {
    return this.ds.columns.find((c) => c.field === this.ds.seq)!.column;
  }

  /**
   * Fetches one page with retries; halves the page size after a time-out. A route that fails past its retries hands
   * the task to its next standby route, which reads the same page at the same pinned block (see `failover`).
   */
  async fetch<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    if (this.deps.signal.aborted) throw new StopRequested();
    let text = query;
    for (;;) {
      try {
        return await this.fetchRetried<T>(text, vars);
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
      const checked = await this.readiness(next);
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
      this.pin = { ...this.pin, root: checked.root, head: checked.head };
      this.failovers.push(move);
      this.deps.log('failover', { dataset: this.ds.name, chainId: this.task.chainId, ...move }, 'warn');
      return true;
    }
    return false;
  }

  /** Whether a standby route can continue the task now: its root field and head, or why not. */
  private async readiness(
    next: StandbyRoute,
  ): Promise<{ root: string; head: { number: number; hash: string | null } } | string> {
    const root = next.info.roots.get(this.ds.entity);
    if (root === undefined) return `it has no ${this.ds.entity} entity`;
    if (next.info.changeBlock !== this.pin.changeBlock)
      return 'it differs from the current route in `_change_block` filters';
    let meta: { number: number; hash: string | null; errors: boolean };
    try {
      const m = (await this.deps.source.request<MetaAnswer>(next.endpoint, FAILOVER_META_QUERY, {})).data._meta;
      meta = { number: m.block.number, hash: m.block.hash, errors: m.hasIndexingErrors };
    } catch (err) {
      return `it did not answer (${(err as Error).message})`;
    }
    if (meta.errors) return 'it reports indexing errors';
    if (meta.number < this.block.number)
      return `it has indexed only up to block ${meta.number}, before the task's block ${this.block.number}`;
    const cur = this.pin.head;
    if (cur?.hash && meta.hash && meta.number >= cur.number) {
      if (meta.number === cur.number && meta.hash !== cur.hash)
        return `it is on another fork: at block ${cur.number} its hash is ${meta.hash}, on ${this.endpoint.label} ${cur.hash}`;
      // A lookup that fails counts as no: the chain cannot be shown to be the same.
      if (meta.number > cur.number && (await hasBlock(this.deps.source, next.endpoint, cur.hash)) !== true)
        return `it is on another fork: it has no block with hash ${cur.hash} (block ${cur.number} on ${this.endpoint.label}); its head ${meta.number} has hash ${meta.hash}`;
    }
    return { root, head: { number: meta.number, hash: meta.hash } };
  }

  private async fetchRetried<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    return withRetries(
      async () => {
        this.stats.requests++;
        try {
          // A request that must not be cut short (one asking whether ids exist) sets its own `first`.
          const r = await this.deps.source.request<T>(this.endpoint, query, { first: this.pageSize, ...vars });
          this.stats.bytes += r.bytes;
          return r.data;
        } catch (e) {
          if (e instanceof UpstreamError && e.kind === 'timeout') {
            this.pageSize = Math.max(MIN_PAGE_SIZE, Math.floor(this.pageSize / 2));
          }
          throw e;
        }
      },
      {
        maxAttempts: this.deps.config.maxAttempts,
        onRetry: (err, attempt, delayMs) => {
          this.stats.retries++;
          const { name: dataset } = this.ds;
          this.deps.log('retry', {
            dataset,
            chainId: this.task.chainId,
            attempt,
            delayMs,
            kind: err.kind,
            error: err.message,
          });
        },
      },
    );
  }

  /** The page size asked for now; a shorter page is the last. */
  get size(): number {
    return this.pageSize;
  }

  /**
   * Reads one page of the dataset's rows (a query of `shape` with `vars`) into the buffer: its raw rows, and whether it is
   * the last (shorter than the page size asked for).
   */
  async page(shape: PageShape, vars: Record<string, unknown>): Promise<{ rows: Row[]; done: boolean }> {
    const rows = (await this.fetch<{ rows: Row[] }>(pageQuery(this.ds, this.pin.root, shape), vars)).rows;
    this.take(rows);
    return { rows, done: rows.length < this.size };
  }

  /** Adds mapped rows to the buffer; a row whose id is already buffered replaces it when it is newer (an upstream defect). */
  take(items: unknown[]): void {
    const page = mapPage(this.ds, this.task.chainId, items);
    const repeated: string[] = [];
    for (const row of page.rows) {
      const id = row.id as string;
      const at = this.bufferIds.get(id);
      if (at === undefined) {
        this.bufferIds.set(id, this.buffer.length);
        this.buffer.push(row);
        continue;
      }
      repeated.push(id);
      if (newer(this.ds, row, this.buffer[at]!)) this.buffer[at] = row;
    }
    if (repeated.length) this.repeated(repeated);
    this.stats.pages++;
    this.deps.onPage?.(this.task, this.stats, this.fraction(items));
  }

  /** Counts and logs rows the upstream sent twice (a subgraph cannot hold two entities with one id). */
  repeated(ids: readonly string[]): void {
    this.stats.duplicates += ids.length;
    const fields = {
      dataset: this.ds.name,
      chainId: this.task.chainId,
      count: ids.length,
      ids: ids.slice(0, DUPLICATES_LOGGED),
    };
    this.deps.log('duplicate-ids', fields, 'warn');
  }

  /** The share of the keyset range covered so far, from the last row's position between `from` and the pinned block. */
  private fraction(items: unknown[]): number | undefined {
    const seq = this.ds.seq;
    const last = items[items.length - 1] as Record<string, unknown> | undefined;
    if (!seq || !last || this.from === undefined) return undefined;
    const end = this.block.timestamp;
    const at = Number(last[seq]);
    return end > this.from ? Math.min(1, Math.max(0, (at - this.from) / (end - this.from))) : undefined;
  }

  get buffered(): number {
    return this.buffer.length;
  }

  /**
   * Commits the buffer and moves the checkpoint to `f.next` (and, on request, merges the dataset's shards), after the
   * commit `flushBehind` left running, if any.
   */
  async flush(f: Flush): Promise<void> {
    await this.settle();
    await this.commit(f);
  }

  /**
   * Starts the commit of the buffer as `flush` does, and returns without waiting for it, so that the next pages are
   * fetched while DuckDB stores these. The commit before it is awaited first: commits stay in order, at most one is
   * running, and a failed one fails the next call (or `settle`), before anything after it is committed. A pager that
   * uses it ends with `flush`, or with `settle` when it fails.
   */
  async flushBehind(f: Flush): Promise<void> {
    await this.settle();
    const running = this.commit(f);
    // Its failure is reported by the next call to settle; until then it is not an unhandled rejection.
    running.catch(() => undefined);
    this.running = running;
  }

  /** Commits a pager's batch: the last (`done`) awaited, the others left running while it fetches on (`flushBehind`). */
  async commitBatch(f: Flush, done: boolean): Promise<void> {
    await (done ? this.flush(f) : this.flushBehind(f));
  }

  /** Runs a pager that commits with `commitBatch`: when it fails, the commit left running ends before the failure goes up. */
  async paging(pager: () => Promise<void>): Promise<void> {
    try {
      await pager();
    } catch (e) {
      await this.settle().catch(() => undefined);
      throw e;
    }
  }

  /** Waits for the commit `flushBehind` left running (its failure is thrown here). */
  async settle(): Promise<void> {
    const running = this.running;
    this.running = undefined;
    await running;
  }

  private async commit(f: Flush): Promise<void> {
    const nextText = JSON.stringify(f.next);
    const rows = this.buffer;
    this.buffer = [];
    this.bufferIds = new Map();
    const written = await this.deps.sink.write({
      ds: this.ds,
      chainId: this.task.chainId,
      runId: this.deps.runId,
      block: this.block.number,
      blockTime: new Date(this.block.timestamp * 1000).toISOString(),
      rows,
      replace: f.replace,
      checkpoint: { prev: this.cursor, next: nextText, ...(this.shard ? { shard: this.shard } : {}) },
      ...(f.takenAt ? { takenAt: f.takenAt } : {}),
      ...(f.mergeShards ? { mergeShards: true } : {}),
    });
    if (written.replacedIds.length) this.repeated(written.replacedIds);
    this.cursor = nextText;
    this.stats.rows += rows.length;
  }
}

/**
 * Whether `a` is newer than `b`, two rows with one id: the later `updatedAt` for mutable entities, else the one served
 * last (a null `updatedAt` is older than any).
 */
function newer(ds: Dataset, a: Record<string, unknown>, b: Record<string, unknown>): boolean {
  if (ds.kind !== 'mutable') return true;
  const col = ds.columns.find((c) => c.field === ds.seq)!.column;
  const [x, y] = [a[col], b[col]] as [string | null, string | null];
  if (y === null) return true;
  return x !== null && BigInt(x) >= BigInt(y);
}

/** A keyset value as the dataset's variables take it (Int, or BigInt as text). */
export function keyValue(ds: Dataset, v: number | string): number | string {
  return ds.seqType === 'Int' ? Number(v) : String(v);
}
