/**
 * One task's run, as the paginators in `paginate/` drive it: a facade over its three parts, the routed source
 * (`routing/routed-source.ts`: retries, page halving, failover), the batch buffer (`batch-buffer.ts`: one row per id) and the
 * commit pipeline (`commit-pipeline.ts`: commits in order, several in flight). It keeps the task's counters and
 * reports its progress.
 */

import type { Dataset } from '../catalog/catalog.ts';
import type { Endpoint } from '../upstream/client.ts';
import { BatchBuffer } from './batch-buffer.ts';
import { CommitPipeline, type Flush } from './commit-pipeline.ts';
import type { PageShape } from './queries.ts';
import { type FetchedPage, RoutedSource, type Row } from './routing/routed-source.ts';
import type { TaskDeps } from './seams.ts';
import { emptyStats, type Failover, type PinnedBlock, type Task, type TaskPin, type TaskStats } from './task.ts';

/** Ids of repeated rows named in one log line at most (the count is always whole). */
const DUPLICATES_LOGGED = 5;

/** The cursor stored in a dataset's checkpoint. */
export interface Cursor {
  mode?: 'full' | 'incremental';
  seq?: string;
  id?: string;
  block?: number;
  /**
   * A full pass (an aggregation's, newest first, or a mutable dataset's by id): the block and block time it began at.
   * Rows written or changed while it was interrupted are read by the passes after it, from there.
   */
  began?: { block: number; ts: number };
}

/** One page read into the buffer, as its pager sees it. */
export interface PageRead {
  /** Rows in the page. */
  readonly count: number;
  readonly first?: Row | undefined;
  readonly last?: Row | undefined;
  /** Whether it is the last page (shorter than the page size asked for). */
  readonly done: boolean;
}

/** Which shard of a backfill a run pages: shard `shard` (1-based) of `shards`. */
export interface ShardOf {
  readonly shard: number;
  readonly shards: number;
}

export class TaskRun {
  readonly stats: TaskStats = emptyStats();
  readonly block: PinnedBlock;
  /** Start of the keyset range, for progress. */
  private from: number | undefined;
  /** End of the keyset range, for progress: the pinned block's time unless a shard's range ends before. */
  private until: number | undefined;
  readonly task: Task;
  readonly deps: TaskDeps;
  private readonly source: RoutedSource;
  private readonly buffer: BatchBuffer;
  private readonly commits: CommitPipeline;

  /** A repair's run: its batches replace rows under the checkpoint, which must stand at this cursor, and leave it there. */
  private readonly keep: string | undefined;

  /** The ids this run has read, once `watchIds` asked for them. */
  private read: Set<string> | undefined;

  /** `prev`: the committed cursor; `shard`: the shard of a backfill whose checkpoint this run moves, if not the dataset's own. */
  constructor(
    of: { task: Task; deps: TaskDeps; pin: TaskPin; failovers?: Failover[]; keepCheckpoint?: boolean },
    prev: string | null,
    readonly shard?: ShardOf,
  ) {
    ({ task: this.task, deps: this.deps } = of);
    this.keep = of.keepCheckpoint ? (prev ?? '') : undefined;
    this.block = of.pin.block;
    const failovers = of.failovers ?? [];
    this.stats.failovers = failovers;
    this.source = new RoutedSource({ ...of, failovers, stats: this.stats });
    this.buffer = new BatchBuffer({
      ds: of.task.ds,
      chainId: of.task.chainId,
      sink: of.deps.sink,
      onRepeated: (ids) => this.repeated(ids),
    });
    this.commits = new CommitPipeline(prev, (f, move) => this.commit(f, move));
  }

  /** The keyset range the share done is measured over: from `from` to `until` (by default, the pinned block's time). */
  measure(from: number, until?: number): void {
    this.from = from;
    this.until = until;
  }

  /** Records the key from which this run rewrites stored rows (the re-read window's start, or a backfill's). */
  rewritesFrom(seq: number): void {
    this.stats.rewriteFrom = seq;
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

  /** Where the task reads: its pinned block and, after a failover, the new route's root field. */
  get pin(): TaskPin {
    return this.source.pin;
  }

  /** The route the task reads from now. */
  get endpoint(): Endpoint {
    return this.source.endpoint;
  }

  /** Moves to other routes (shared by the shards of one backfill). */
  get failovers(): Failover[] {
    return this.source.failovers;
  }

  /** The committed cursor (JSON), or null before the first commit of a new dataset. */
  get cursor(): string | null {
    return this.commits.cursor;
  }

  /** The page size asked for now; a shorter page is the last. */
  get size(): number {
    return this.source.size;
  }

  /** Rows buffered. */
  get buffered(): number {
    return this.buffer.size;
  }

  /** Fetches one answer of the task's route (see `RoutedSource.fetch`). */
  fetch<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    return this.source.fetch<T>(query, vars);
  }

  /** Fetches one page of the dataset's rows, checked, without buffering it (see `RoutedSource.fetchPage`). */
  fetchPage(shape: PageShape, vars: Record<string, unknown>): Promise<FetchedPage> {
    return this.source.fetchPage(shape, vars);
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

  /** Adds a fetched page to the buffer (see `BatchBuffer.take`) and counts it. */
  take(page: FetchedPage): void {
    this.buffer.take(page);
    this.counted(page.last);
    if (this.read) for (const id of page.ids ?? (page.rows ?? []).map(idOf)) this.read.add(id);
  }

  /** Maps rows, adds them to the buffer (see `BatchBuffer.takeRows`) and counts them as a page. */
  takeRows(items: unknown[]): void {
    this.buffer.takeRows(items);
    this.counted(items[items.length - 1]);
    if (this.read) for (const item of items) this.read.add(idOf(item));
  }

  /**
   * From now on, remembers the ids of the rows this run reads (`wasRead`). An incremental pass of a mutable dataset
   * asks for them: a row it read again is still upstream, even when it did not change and so kept the run that wrote it.
   */
  watchIds(): void {
    this.read ??= new Set();
  }

  /** Whether this run read a row of this id since `watchIds`. */
  wasRead(id: string): boolean {
    return this.read?.has(id) === true;
  }

  /** Forgets a page fetched and not taken (its kept file). */
  forget(page: FetchedPage): void {
    this.buffer.forget(page);
  }

  /** Forgets what the buffer holds (the task failed or stopped): its kept pages are dropped. */
  discard(): void {
    this.buffer.discard();
  }

  /** Commits the buffer and moves the checkpoint (see `CommitPipeline.flush`). */
  flush(f: Flush): Promise<void> {
    return this.commits.flush(f);
  }

  /** Starts a commit and returns without waiting for it (see `CommitPipeline.flushBehind`). */
  flushBehind(f: Flush): Promise<void> {
    return this.commits.flushBehind(f);
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

  /** Waits for the commits left running, in order; the first failure among them is thrown. */
  settle(): Promise<void> {
    return this.commits.settle();
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

  /** Counts a page read and reports progress (`last`: its last row). */
  private counted(last: unknown): void {
    this.stats.pages++;
    this.deps.onPage?.(this.task, this.stats, this.fraction(last));
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

  /** One commit of the pipeline: what the buffer holds, as one batch with its checkpoint move. */
  private async commit(f: Flush, move: { readonly prev: string | null; readonly next: string }): Promise<void> {
    // Taken now, before anything is awaited: the pager fills the buffer again while this commit runs.
    const { rows, pages, count } = this.buffer.drain();
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
      checkpoint:
        this.keep !== undefined
          ? { prev: this.keep, next: this.keep, keep: true }
          : { ...move, ...(this.shard ? { shard: this.shard } : {}) },
      ...(f.takenAt ? { takenAt: f.takenAt } : {}),
      ...(f.mergeShards ? { mergeShards: true } : {}),
    });
    if (written.replacedIds.length) this.repeated(written.replacedIds);
    this.stats.rows += count;
  }
}

/** A keyset value as the dataset's variables take it (Int, or BigInt as text). */
export function keyValue(ds: Dataset, v: number | string): number | string {
  return ds.seqType === 'Int' ? Number(v) : String(v);
}

/** A row's id, as the upstream sent it. */
function idOf(row: unknown): string {
  return String((row as { id?: unknown }).id);
}
