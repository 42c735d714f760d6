/**
 * One task's run: fetches pages (with retries, halving the page size after time-outs, and failover to standby routes),
 * has the page checker check and keep them, buffers them (one row per id), and commits batches with their checkpoint
 * move, several at once. The paginators in `paginate/` drive it.
 */

import type { Dataset } from '../catalog/catalog.ts';
import { chainName } from '../config/chains.ts';
import { StopRequested, UpstreamError } from '../errors.ts';
import type { KeptPage, Replace } from '../store/batch.ts';
import type { Endpoint } from '../upstream/client.ts';
import { HEAD_QUERY, type HeadAnswer } from '../upstream/endpoint-probe.ts';
import { withRetries } from '../upstream/retry.ts';
import { garbage, mapPage } from './mapper.ts';
import type { CheckedPage, PageRow } from './page-check.ts';
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

/**
 * Commits one pager may leave running while it fetches on. Their pages wait as files, not in memory; while DuckDB stores
 * one group of batches, the next ones gather, and it takes them in one statement (its cost per statement is far above
 * its cost per row).
 */
const COMMITS_IN_FLIGHT = 4;

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
export type Row = PageRow;

/** One page read into the buffer, as its pager sees it. */
export interface PageRead {
  /** Rows in the page. */
  readonly count: number;
  readonly first?: Row | undefined;
  readonly last?: Row | undefined;
  /** Whether it is the last page (shorter than the page size asked for). */
  readonly done: boolean;
}

/**
 * A page fetched and checked: kept in a file of the sink (with its ids), or, for an answer the page checker did not
 * take, its rows.
 */
export interface FetchedPage extends Partial<Pick<CheckedPage, 'ids'>> {
  readonly count: number;
  readonly first?: Row;
  readonly last?: Row;
  readonly kept?: KeptPage;
  readonly rows?: unknown[];
}

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
  /**
   * The buffer holds pages kept as the upstream sent them (see `BatchSink.keep`), or, once a repeated id is met (an
   * upstream defect) and for the liquidity list, mapped rows; never both.
   */
  private pages: KeptPage[] = [];
  private buffer: Record<string, unknown>[] = [];
  /** Rows buffered (in pages or mapped). */
  private count = 0;
  /** Each buffered id, with its row's position among the mapped rows (-1 while it is in a kept page). */
  private bufferIds = new Map<string, number>();
  /** The commits `flushBehind` started and nobody has awaited yet, oldest first. */
  private running: Promise<void>[] = [];
  /** The committed cursor (JSON), or null before the first commit of a new dataset. */
  cursor: string | null;
  /** The cursor the last commit started moves to: `cursor` once every commit has ended. */
  private tip: string | null;
  readonly block: PinnedBlock;
  /** Start of the keyset range, for progress. */
  from: number | undefined;
  /** End of the keyset range, for progress: the pinned block's time unless a shard's range ends before. */
  until: number | undefined;

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
    this.tip = prev;
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
    // A request that must not be cut short (one asking whether ids exist) sets its own `first`.
    return (await this.withRoutes(query, vars, (q, v) => this.deps.source.request<T>(this.endpoint, q, v))).data;
  }

  /**
   * Sends one request of the task with `send` (whose answer counts `bytes`), with retries and failover as `fetch` does.
   * `send` gets the query as the current route names its collection.
   */
  private async withRoutes<R extends { bytes: number }>(
    query: string,
    vars: Record<string, unknown>,
    send: (query: string, vars: Record<string, unknown>) => Promise<R>,
  ): Promise<R> {
    if (this.deps.signal.aborted) throw new StopRequested();
    let text = query;
    for (;;) {
      try {
        return await this.withRetries(() => send(text, { first: this.pageSize, ...vars }));
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
      const m = (await this.deps.source.request<HeadAnswer>(next.endpoint, HEAD_QUERY, {})).data._meta;
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

  /** Runs one request with retries, counting it and its bytes; halves the page size after a time-out. */
  private async withRetries<R extends { bytes: number }>(send: () => Promise<R>): Promise<R> {
    return withRetries(
      async () => {
        this.stats.requests++;
        try {
          const r = await send();
          this.stats.bytes += r.bytes;
          return r;
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
            chain: chainName(this.task.chainId),
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
   * Reads one page of the dataset's rows (a query of `shape` with `vars`) into the buffer: how many rows it held, its
   * first and last row, and whether it is the last (shorter than the page size asked for).
   */
  async page(shape: PageShape, vars: Record<string, unknown>): Promise<PageRead> {
    const page = await this.fetchPage(shape, vars);
    this.take(page);
    return { count: page.count, first: page.first, last: page.last, done: page.count < this.size };
  }

  /**
   * Fetches one page of the dataset's rows, checked, without buffering it. A page answer is checked by the page checker
   * and kept in a file of the sink; an answer that is not a page of rows alone (another shape, errors) is judged as
   * any answer, and its rows mapped here.
   */
  async fetchPage(shape: PageShape, vars: Record<string, unknown>): Promise<FetchedPage> {
    const { ds, task, deps } = this;
    return this.withRoutes(pageQuery(ds, this.pin.root, shape), vars, async (q, v) => {
      const { body, bytes } = await deps.source.requestBody(this.endpoint, q, v);
      const file = deps.sink.pageFile();
      const checked = await deps.checker.check({ ds, chainId: task.chainId, body, file });
      if ('page' in checked) return { ...checked.page, kept: { file, length: checked.page.length }, bytes };
      const rows = deps.source.answerData<{ rows: unknown }>(this.endpoint, checked.body).rows;
      if (!Array.isArray(rows))
        throw garbage(
          { ds, chainId: task.chainId, field: 'rows' },
          `expected a list of ${ds.entity} rows, got ${String(JSON.stringify(rows)).slice(0, 80)}`,
        );
      const ends = rows.length ? { first: rows[0] as Row, last: rows[rows.length - 1] as Row } : {};
      return { count: rows.length, rows, ...ends, bytes };
    });
  }

  /**
   * Adds a fetched page to the buffer: a kept page as it is, unless an id of it is buffered already or repeats within
   * it (an upstream defect); then, and for answers mapped here, as mapped rows.
   */
  take(page: FetchedPage): void {
    const { kept, ids } = page;
    if (kept && ids && this.buffer.length === 0 && this.unique(ids)) {
      for (const id of ids) this.bufferIds.set(id, -1);
      this.pages.push(kept);
      this.count += page.count;
      this.counted(page.last);
      return;
    }
    let rows = page.rows ?? [];
    if (kept) {
      // The buffer turns to mapped rows, so that the newer of two rows with one id replaces the other.
      this.unkeep();
      rows = JSON.parse(this.deps.sink.reread(kept)) as unknown[];
      this.deps.sink.drop([kept]);
    }
    this.takeRows(rows);
  }

  /** Forgets a page fetched and not taken (its kept file). */
  forget(page: FetchedPage): void {
    if (page.kept) this.deps.sink.drop([page.kept]);
  }

  /** Maps rows and adds them to the buffer; a row whose id is already buffered replaces it when it is newer. */
  takeRows(items: unknown[]): void {
    const page = mapPage(this.ds, this.task.chainId, items);
    const repeated: string[] = [];
    for (const row of page.rows) {
      const id = row.id as string;
      const at = this.bufferIds.get(id);
      if (at === undefined) {
        this.bufferIds.set(id, this.buffer.length);
        this.buffer.push(row);
        this.count++;
        continue;
      }
      repeated.push(id);
      if (newer(this.ds, row, this.buffer[at]!)) this.buffer[at] = row;
    }
    if (repeated.length) this.repeated(repeated);
    this.counted(items[items.length - 1]);
  }

  /** Whether no id of a checked page repeats one of the page or of the buffer. */
  private unique(ids: readonly string[]): boolean {
    const seen = new Set<string>();
    for (const id of ids) {
      if (this.bufferIds.has(id) || seen.has(id)) return false;
      seen.add(id);
    }
    return true;
  }

  /** Turns the kept pages of the buffer into mapped rows, in order, so that a repeated id can replace its row. */
  private unkeep(): void {
    const pages = this.pages;
    this.pages = [];
    for (const p of pages) {
      for (const row of mapPage(this.ds, this.task.chainId, JSON.parse(this.deps.sink.reread(p)) as unknown[]).rows) {
        this.bufferIds.set(row.id as string, this.buffer.length);
        this.buffer.push(row);
      }
    }
    this.deps.sink.drop(pages);
  }

  /** Counts a page read and reports progress (`last`: its last row). */
  private counted(last: unknown): void {
    this.stats.pages++;
    this.deps.onPage?.(this.task, this.stats, this.fraction(last));
  }

  /** Forgets what the buffer holds (the task failed or stopped): its kept pages are dropped. */
  discard(): void {
    this.deps.sink.drop(this.pages);
    this.pages = [];
    this.buffer = [];
    this.count = 0;
    this.bufferIds = new Map();
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
  private fraction(lastRow: unknown): number | undefined {
    const seq = this.ds.seq;
    const last = lastRow as Record<string, unknown> | undefined;
    if (!seq || !last || this.from === undefined) return undefined;
    const end = this.until ?? this.block.timestamp;
    const at = Number(last[seq]);
    return end > this.from ? Math.min(1, Math.max(0, (at - this.from) / (end - this.from))) : undefined;
  }

  get buffered(): number {
    return this.count;
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
   * fetched while DuckDB stores these. Up to `COMMITS_IN_FLIGHT` commits may be running; past that, the oldest is
   * awaited first. Commits stay in order (the sink takes them in order, each moving the checkpoint from where the one
   * before it left it, by compare-and-set, so none after a failed one can be committed), and a failed one fails the
   * next call that awaits it (or `settle`). A pager that uses it ends with `flush`, or with `settle` when it fails.
   */
  async flushBehind(f: Flush): Promise<void> {
    if (this.running.length >= COMMITS_IN_FLIGHT) await this.running.shift();
    const running = this.commit(f);
    // Its failure is reported when it is awaited; until then it is not an unhandled rejection.
    running.catch(() => undefined);
    this.running.push(running);
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

  /** Waits for the commits `flushBehind` left running, in order; the first failure among them is thrown. */
  async settle(): Promise<void> {
    const running = this.running;
    this.running = [];
    const failed = (await Promise.allSettled(running)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async commit(f: Flush): Promise<void> {
    const nextText = JSON.stringify(f.next);
    // The move starts where the commit before it (perhaps still running) leaves the checkpoint.
    const prev = this.tip;
    this.tip = nextText;
    const { buffer: rows, pages, count } = this;
    this.buffer = [];
    this.pages = [];
    this.count = 0;
    this.bufferIds = new Map();
    const written = await this.deps.sink.write({
      ds: this.ds,
      chainId: this.task.chainId,
      runId: this.deps.runId,
      block: this.block.number,
      blockTime: new Date(this.block.timestamp * 1000).toISOString(),
      rows,
      pages,
      count,
      replace: f.replace,
      checkpoint: { prev, next: nextText, ...(this.shard ? { shard: this.shard } : {}) },
      ...(f.takenAt ? { takenAt: f.takenAt } : {}),
      ...(f.mergeShards ? { mergeShards: true } : {}),
    });
    if (written.replacedIds.length) this.repeated(written.replacedIds);
    this.cursor = nextText;
    this.stats.rows += count;
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
