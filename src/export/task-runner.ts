/** Runs one task: pages a dataset from its checkpoint to the pinned block and commits batches with their checkpoint. */
import type { Dataset } from '../catalog/catalog.ts';
import type { Config } from '../config/config.ts';
import type { CheckpointStore } from '../store/checkpoint-store.ts';
import type { DuckDBSink, Replace } from '../store/sink.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { withRetries } from '../upstream/retry.ts';
import { UpstreamError } from '../upstream/upstream-error.ts';
import { mapPage } from './mapper.ts';
import { LIST_QUERY, pageQuery, type PageShape } from './queries.ts';
import type { PinnedBlock, Task, TaskStats } from './task.ts';

/** Smallest page size reached by halving after time-outs. */
const MIN_PAGE_SIZE = 50;
/** Pools per liquidity-list page. */
const LIST_PAGE_SIZE = 100;

/** Everything a task needs, passed explicitly. */
export interface TaskDeps {
  readonly config: Config;
  readonly client: UpstreamClient;
  readonly sink: DuckDBSink;
  readonly checkpoints: CheckpointStore;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly log: (event: string, fields: Record<string, unknown>) => void;
  /** Called after each page with the task's counters and, where known, the fraction done (0..1). */
  readonly onPage?: (task: Task, stats: TaskStats, fraction: number | undefined) => void;
}

/** The cursor stored in a checkpoint. */
interface Cursor {
  mode?: 'full' | 'incremental';
  seq?: string;
  id?: string;
  block?: number;
}

/** A stop requested by the user (SIGINT/SIGTERM): the current batch is committed or rolled back, then the task ends. */
export class StopRequested extends Error {
  constructor() {
    super('stopped on request');
    this.name = 'StopRequested';
  }
}

class TaskRun {
  readonly stats: TaskStats = { pages: 0, rows: 0, requests: 0, retries: 0, bytes: 0, outOfRange: {}, truncated: {} };
  private pageSize: number;
  private buffer: Record<string, unknown>[] = [];
  cursor: string | null;

  /** `checkpointName`: the checkpoint row this run moves, when not the dataset's own (a shard's). */
  constructor(readonly task: Task, readonly deps: TaskDeps, readonly block: PinnedBlock, prev: string | null, readonly checkpointName?: string) {
    this.pageSize = deps.config.pageSize;
    this.cursor = prev;
  }

  /** Adds the counters of a shard's run to this one. */
  absorb(other: TaskStats): void {
    for (const k of ['pages', 'rows', 'requests', 'retries', 'bytes'] as const) this.stats[k] += other[k];
    for (const [k, n] of Object.entries(other.outOfRange)) this.stats.outOfRange[k] = (this.stats.outOfRange[k] ?? 0) + n;
    for (const [k, n] of Object.entries(other.truncated)) this.stats.truncated[k] = (this.stats.truncated[k] ?? 0) + n;
  }

  get ds(): Dataset {
    return this.task.ds;
  }

  /** Fetches one page with retries; halves the page size after a time-out. */
  async fetch<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    if (this.deps.signal.aborted) throw new StopRequested();
    try {
      return await this.fetchRetried<T>(query, vars);
    } catch (e) {
      if (this.deps.signal.aborted) throw new StopRequested();
      throw e;
    }
  }

  private async fetchRetried<T>(query: string, vars: Record<string, unknown>): Promise<T> {
    return withRetries(async () => {
      this.stats.requests++;
      try {
        const r = await this.deps.client.request<T>(this.task.endpoint, query, { ...vars, first: this.pageSize });
        this.stats.bytes += r.bytes;
        return r.data;
      } catch (e) {
        if (e instanceof UpstreamError && e.kind === 'timeout') this.pageSize = Math.max(MIN_PAGE_SIZE, Math.floor(this.pageSize / 2));
        throw e;
      }
    }, {
      maxAttempts: this.deps.config.maxAttempts,
      onRetry: (err, attempt, delayMs) => {
        this.stats.retries++;
        this.deps.log('retry', { dataset: this.ds.name, chainId: this.task.chainId, attempt, delayMs, kind: err.kind, error: err.message });
      },
    });
  }

  get size(): number {
    return this.pageSize;
  }

  /** Adds mapped rows to the buffer. */
  take(items: unknown[]): void {
    const page = mapPage(this.ds, this.task.chainId, items);
    for (const [k, n] of Object.entries(page.outOfRange)) this.stats.outOfRange[k] = (this.stats.outOfRange[k] ?? 0) + n;
    for (const [k, n] of Object.entries(page.truncated)) this.stats.truncated[k] = (this.stats.truncated[k] ?? 0) + n;
    this.buffer.push(...page.rows);
    this.stats.pages++;
    this.deps.onPage?.(this.task, this.stats, this.fraction(items));
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

  /** Start of the keyset range, for progress. */
  from: number | undefined;

  get buffered(): number {
    return this.buffer.length;
  }

  /** Commits the buffer and moves the checkpoint to `next` (and, on request, drops the dataset's shard checkpoints). */
  async flush(next: Cursor | ShardCursor, replace: Replace, takenAt?: string, dropShards = false): Promise<void> {
    const nextText = JSON.stringify(next);
    const rows = this.buffer;
    this.buffer = [];
    await this.deps.sink.write({
      ds: this.ds, chainId: this.task.chainId, runId: this.deps.runId, block: this.block.number,
      blockTime: new Date(this.block.timestamp * 1000).toISOString(), rows, replace,
      checkpoint: { prev: this.cursor, next: nextText }, ...(takenAt ? { takenAt } : {}),
      ...(this.checkpointName ? { checkpointName: this.checkpointName } : {}), ...(dropShards ? { dropShards } : {}),
    });
    this.cursor = nextText;
    this.stats.rows += rows.length;
  }
}

type Row = Record<string, unknown> & { id: string };

/** Where one shard of a backfill stands: its key range [lo, hi), the last committed row, and whether it is done. */
interface ShardCursor {
  lo: string;
  hi: string;
  /** The whole backfill's range, split into `n` shards: a run killed before every shard committed rebuilds the rest. */
  range: [string, string];
  seq?: string;
  id?: string;
  done?: boolean;
  block?: number;
}

/** A keyset value as the dataset's variables take it (Int, or BigInt as text). */
const keyValue = (ds: Dataset, v: number | string) => (ds.seqType === 'Int' ? Number(v) : String(v));

/**
 * The first backfill of an event or bucket dataset, split into `config.shards` key ranges fetched concurrently, each
 * with its own checkpoint (`<dataset>#<k>/<n>`); when all are done they merge into the dataset's own checkpoint, in
 * the transaction that drops theirs. A dataset that fits in one page is done with that page. Returns false when
 * sharding is off and no shard is pending.
 */
async function backfillSharded(run: TaskRun, pending: Map<string, string>): Promise<boolean> {
  const { ds, deps } = run;
  const n = deps.config.shards;
  const seqColumn = ds.columns.find((c) => c.field === ds.seq)!.column;
  let range: [string, string];
  let count: number;
  if (pending.size) {
    const [name, text] = [...pending][0]!;
    range = (JSON.parse(text) as ShardCursor).range;
    count = Number(/#\d+\/(\d+)$/.exec(name)![1]);
  } else {
    if (n <= 1) return false;
    // One page tells whether the dataset is larger than a page, and where its history starts.
    const probe = await run.fetch<{ rows: Row[] }>(pageQuery(ds, 'seq-first'), { block: run.block.number, from: keyValue(ds, 0) });
    const first = probe.rows[0];
    if (probe.rows.length < run.size || !first) {
      run.from = 0;
      run.stats.rewriteFrom = 0;
      run.take(probe.rows);
      const last = probe.rows[probe.rows.length - 1];
      await run.flush({ ...(last ? { seq: String(last[ds.seq!]), id: last.id } : { seq: '0', id: '' }), block: run.block.number }, { kind: 'from', column: seqColumn, from: 0 });
      return true;
    }
    const lo = Number(first[ds.seq!]);
    range = [String(lo), String(Math.max(lo + 1, run.block.timestamp + 1))];
    count = n;
  }
  // Every shard of the range: the committed ones from their checkpoints, the others from their start.
  const [lo, hi] = range.map(Number) as [number, number];
  const bound = (k: number) => String(lo + Math.floor((k * (hi - lo)) / count));
  const shards: [name: string, prev: string | null, cursor: ShardCursor][] = Array.from({ length: count }, (_, k) => {
    const name = `${ds.name}#${k + 1}/${count}`;
    const text = pending.get(name);
    return text ? [name, text, JSON.parse(text) as ShardCursor] : [name, null, { lo: bound(k), hi: bound(k + 1), range }];
  });
  run.stats.rewriteFrom = Math.min(...shards.map(([, , c]) => Number(c.lo)));
  const outcomes = await Promise.allSettled(shards.filter(([, , c]) => !c.done).map(([name, prev, c]) => pageShard(run, name, prev, c, seqColumn)));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
  // Merge: the dataset's checkpoint is the last row of the last shard that has one.
  const done = [...(await deps.checkpoints.shards(run.task.chainId, ds.name)).values()].map((t) => JSON.parse(t) as ShardCursor);
  const last = done.filter((c) => c.seq !== undefined).sort((a, b) => Number(a.lo) - Number(b.lo)).pop();
  await run.flush({ seq: last?.seq ?? String(run.stats.rewriteFrom), id: last?.id ?? '', block: run.block.number }, { kind: 'none' }, undefined, true);
  return true;
}

/** Pages one shard's key range from where it stands to its end, committing with the shard's checkpoint. */
async function pageShard(parent: TaskRun, name: string, prev: string | null, c: ShardCursor, seqColumn: string): Promise<void> {
  const ds = parent.ds;
  const shard = new TaskRun(parent.task, parent.deps, parent.block, prev, name);
  try {
    const block = parent.block.number;
    const to = keyValue(ds, c.hi);
    // A resumed shard re-reads the reorg window before its checkpoint, never below its own start.
    const from = c.seq === undefined ? Number(c.lo) : Math.max(Number(c.lo), Number(c.seq) - parent.deps.config.reorgWindowSecs);
    let replace: Replace = { kind: 'range', column: seqColumn, from: keyValue(ds, from), to };
    let shape: PageShape = 'range-first';
    let vars: Record<string, unknown> = { block, from: keyValue(ds, from), to };
    let last: Row | undefined;
    for (;;) {
      const rows = (await shard.fetch<{ rows: Row[] }>(pageQuery(ds, shape), vars)).rows;
      shard.take(rows);
      if (rows.length) last = rows[rows.length - 1]!;
      const done = rows.length < shard.size;
      // The shards share one batch budget, so that memory does not grow with their number.
      if (done || shard.buffered >= Math.ceil(parent.deps.config.batchRows / parent.deps.config.shards)) {
        const at = last ? { seq: String(last[ds.seq!]), id: last.id } : c.seq !== undefined ? { seq: c.seq, id: c.id ?? '' } : {};
        await shard.flush({ lo: c.lo, hi: c.hi, range: c.range, ...at, ...(done ? { done: true } : {}), block }, replace);
        replace = { kind: 'none' };
      }
      if (done) return;
      shape = 'range-next';
      vars = { block, seq: keyValue(ds, String(last![ds.seq!])), id: last!.id, to };
    }
  } finally {
    parent.absorb(shard.stats);
  }
}

/** Keyset pages on (seq, id) from `from` (inclusive); the first batch replaces every stored row from `from` on. */
async function pageSeq(run: TaskRun, from: number, cursorAfter: (last: Row | undefined, done: boolean) => Cursor): Promise<void> {
  const ds = run.ds;
  const seqColumn = ds.columns.find((c) => c.field === ds.seq)!.column;
  let shape: PageShape = 'seq-first';
  let vars: Record<string, unknown> = { block: run.block.number, from: ds.seqType === 'Int' ? from : String(from) };
  let replace: Replace = ds.kind === 'mutable' ? { kind: 'ids' } : { kind: 'from', column: seqColumn, from };
  run.from = from;
  if (ds.kind !== 'mutable') run.stats.rewriteFrom = from;
  let last: Row | undefined;
  for (;;) {
    const data = await run.fetch<{ rows: Row[] }>(pageQuery(ds, shape), vars);
    const rows = data.rows;
    run.take(rows);
    if (rows.length) last = rows[rows.length - 1]!;
    const done = rows.length < run.size;
    if (done || run.buffered >= run.deps.config.batchRows) {
      await run.flush({ ...cursorAfter(last, done), block: run.block.number }, replace);
      replace = ds.kind === 'mutable' ? { kind: 'ids' } : { kind: 'none' };
    }
    if (done) return;
    shape = 'seq-next';
    vars = { block: run.block.number, seq: ds.seqType === 'Int' ? last![ds.seq!] : String(last![ds.seq!]), id: last!.id };
  }
}

/** Full pass by `id_gt` from `startId`; `finish` gives the checkpoint after the last page. */
async function pageIds(run: TaskRun, startId: string, replace: Replace, finish: Cursor, progress?: (id: string) => Cursor): Promise<void> {
  let id = startId;
  for (;;) {
    const data = await run.fetch<{ rows: Row[] }>(pageQuery(run.ds, 'id'), { block: run.block.number, id });
    run.take(data.rows);
    if (data.rows.length) id = data.rows[data.rows.length - 1]!.id;
    const done = data.rows.length < run.size;
    if (done) return run.flush({ ...finish, block: run.block.number }, replace);
    if (progress && run.buffered >= run.deps.config.batchRows) await run.flush({ ...progress(id), block: run.block.number }, replace);
  }
}

/** One liquidity-list snapshot of a chain, checked against `totalCount`. */
async function pageList(run: TaskRun): Promise<void> {
  type ListPage = { liquidity_list: { totalCount: number; currentPage: number; lqList: (Row | null)[] } };
  const items = new Map<string, Row>();
  let total = 0;
  for (let page = 1; ; page++) {
    const where = { chainIds: [run.task.chainId], currentPage: page, pageSize: LIST_PAGE_SIZE, refreshNow: false, filterState: { address: '', viewOnlyOwn: false }, order: { orderBy: 'updatedAt', orderDirection: 'asc' } };
    const data = await run.fetch<ListPage>(LIST_QUERY, { where });
    const info = data.liquidity_list;
    total = info.totalCount;
    for (const it of info.lqList) if (it) items.set(it.id, it);
    if (info.lqList.length < LIST_PAGE_SIZE || page * LIST_PAGE_SIZE >= total) break;
  }
  if (items.size !== total) {
    throw new UpstreamError(`liquidity list of chain ${run.task.chainId} returned ${items.size} distinct pools but totalCount ${total} (the list changed while paging)`, 'garbage', true);
  }
  run.take([...items.values()]);
  await run.flush({ block: run.block.number }, { kind: 'snapshot' }, new Date(run.block.timestamp * 1000).toISOString());
}

/** Runs a task from its checkpoint; returns the run with its stats and final cursor. */
export async function runTask(task: Task, deps: TaskDeps, block: PinnedBlock): Promise<{ run: TaskRun; before: string | null }> {
  const cp = await deps.checkpoints.get(task.chainId, task.ds.name);
  const before = cp?.cursor ?? null;
  const run = new TaskRun(task, deps, block, before);
  try {
    await page(run, before, block);
  } catch (e) {
    throw new TaskError(e, run.stats, before);
  }
  return { run, before };
}

/** A task failure that carries what the task did before it failed. */
export class TaskError extends Error {
  constructor(override readonly cause: unknown, readonly taskStats: TaskStats, readonly cursorBefore: string | null) {
    super((cause as Error)?.message ?? String(cause), { cause });
    this.name = (cause as Error)?.name ?? 'Error';
  }
}

async function page(run: TaskRun, before: string | null, block: PinnedBlock): Promise<void> {
  const { task, deps } = run;
  const cursor: Cursor = before ? (JSON.parse(before) as Cursor) : {};
  const window = deps.config.reorgWindowSecs;
  const ds = task.ds;
  switch (ds.kind) {
    case 'list':
      await pageList(run);
      break;
    case 'snapshot':
      await pageIds(run, '', { kind: 'snapshot' }, {});
      break;
    case 'event':
    case 'bucket': {
      if (cursor.seq === undefined && (await backfillSharded(run, await deps.checkpoints.shards(task.chainId, ds.name)))) break;
      // Re-read a window before the checkpoint so that reorganized rows are replaced; buckets re-read the open bucket.
      const from = cursor.seq === undefined ? 0 : Math.max(0, Number(cursor.seq) - window);
      await pageSeq(run, from, (last) => (last ? { seq: String(last[ds.seq!]), id: last.id } : { seq: String(from), id: '' }));
      break;
    }
    case 'mutable': {
      const watermark = { mode: 'incremental' as const, seq: String(block.timestamp) };
      if (cursor.mode !== 'incremental') {
        // First run (or an interrupted one): a full pass by id, resumable from the last committed id.
        await pageIds(run, cursor.id ?? '', { kind: 'ids' }, watermark, (id) => ({ mode: 'full', id }));
      } else {
        // Upserts are idempotent: intermediate batches keep the old watermark, so a crash re-reads rather than skips.
        await pageSeq(run, Math.max(0, Number(cursor.seq) - window), (_last, done) => (done ? watermark : cursor));
      }
      break;
    }
  }
}
