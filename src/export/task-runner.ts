/** Runs one task: pages a dataset from its checkpoint to the pinned block and commits batches with their checkpoint. */
import type { Dataset } from '../catalog/catalog.ts';
import { LIST_PAGE_SIZE } from '../catalog/liquidity-list.ts';
import type { Config } from '../config/config.ts';
import type { CheckpointStore } from '../store/checkpoint-store.ts';
import type { DuckDBSink, Replace } from '../store/sink.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { withRetries } from '../upstream/retry.ts';
import type { EventLog } from '../util/logger.ts';
import { UpstreamError } from '../upstream/upstream-error.ts';
import { mapPage } from './mapper.ts';
import { LIST_QUERY, pageQuery, type PageShape } from './queries.ts';
import { emptyStats, type PinnedBlock, type Task, type TaskPin, type TaskStats } from './task.ts';

/** Smallest page size reached by halving after time-outs. */
const MIN_PAGE_SIZE = 50;

/** Everything a task needs, passed explicitly. */
export interface TaskDeps {
  readonly config: Config;
  readonly client: UpstreamClient;
  readonly sink: DuckDBSink;
  readonly checkpoints: CheckpointStore;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly log: EventLog;
  /** Called after each page with the task's counters and, where known, the fraction done (0..1). */
  readonly onPage?: (task: Task, stats: TaskStats, fraction: number | undefined) => void;
}

/** Ids of repeated rows named in one log line at most (the count is always whole). */
const DUPLICATES_LOGGED = 5;

/** The cursor stored in a checkpoint. */
export interface Cursor {
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
  readonly stats: TaskStats = emptyStats();
  private pageSize: number;
  private buffer: Record<string, unknown>[] = [];
  /** Position of each buffered id, so that a repeated id replaces its row instead of adding one. */
  private bufferIds = new Map<string, number>();
  cursor: string | null;
  readonly block: PinnedBlock;

  /** `checkpointName`: the checkpoint row this run moves, when not the dataset's own (a shard's). */
  constructor(readonly task: Task, readonly deps: TaskDeps, readonly pin: TaskPin, prev: string | null, readonly checkpointName?: string) {
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
    this.deps.log('duplicate-ids', { dataset: this.ds.name, chainId: this.task.chainId, count: ids.length, ids: ids.slice(0, DUPLICATES_LOGGED) }, 'warn');
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
    this.bufferIds = new Map();
    const written = await this.deps.sink.write({
      ds: this.ds, chainId: this.task.chainId, runId: this.deps.runId, block: this.block.number,
      blockTime: new Date(this.block.timestamp * 1000).toISOString(), rows, replace,
      checkpoint: { prev: this.cursor, next: nextText }, ...(takenAt ? { takenAt } : {}),
      ...(this.checkpointName ? { checkpointName: this.checkpointName } : {}), ...(dropShards ? { dropShards } : {}),
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
    const probe = await run.fetch<{ rows: Row[] }>(pageQuery(ds, run.pin.root, 'seq-first'), { block: run.block.number, from: keyValue(ds, 0) });
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
  const shard = new TaskRun(parent.task, parent.deps, parent.pin, prev, name);
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
      const rows = (await shard.fetch<{ rows: Row[] }>(pageQuery(ds, shard.pin.root, shape), vars)).rows;
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

/**
 * Keyset pages on (seq, id) from `from` (inclusive); the first batch replaces every stored row from `from` on. A cursor
 * from `cursorAfter` that carries its own block keeps it.
 */
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
    const data = await run.fetch<{ rows: Row[] }>(pageQuery(ds, run.pin.root, shape), vars);
    const rows = data.rows;
    run.take(rows);
    if (rows.length) last = rows[rows.length - 1]!;
    const done = rows.length < run.size;
    if (done || run.buffered >= run.deps.config.batchRows) {
      await run.flush({ block: run.block.number, ...cursorAfter(last, done) }, replace);
      replace = ds.kind === 'mutable' ? { kind: 'ids' } : { kind: 'none' };
    }
    if (done) return;
    shape = 'seq-next';
    vars = { block: run.block.number, seq: ds.seqType === 'Int' ? last![ds.seq!] : String(last![ds.seq!]), id: last!.id };
  }
}

/** What a pass by `id_gt` pages through: every row, the rows changed since a block, or those with a null keyset field. */
type IdPass = { readonly shape: 'id' } | { readonly shape: 'null-id' } | { readonly shape: 'changed-since'; readonly since: number };

/** A pass by `id_gt` from `startId`; `finish` gives the checkpoint after the last page, `progress` the one of each full batch. */
async function pageIds(run: TaskRun, pass: IdPass, startId: string, replace: Replace, finish: Cursor, progress?: (id: string) => Cursor): Promise<void> {
  let id = startId;
  const extra = pass.shape === 'changed-since' ? { since: pass.since } : {};
  for (;;) {
    const data = await run.fetch<{ rows: Row[] }>(pageQuery(run.ds, run.pin.root, pass.shape), { block: run.block.number, id, ...extra });
    run.take(data.rows);
    if (data.rows.length) id = data.rows[data.rows.length - 1]!.id;
    const done = data.rows.length < run.size;
    // A cursor that carries its own block keeps it (a mutable pass that keeps the last run's watermark).
    if (done) return run.flush({ block: run.block.number, ...finish }, replace);
    if (progress && run.buffered >= run.deps.config.batchRows) await run.flush({ block: run.block.number, ...progress(id) }, replace);
  }
}

/** One page of the liquidity list as the real types allow it: every level may be null (DODOEX/widgets a56d6a1a, graphql.ts). */
type ListPage = { liquidity_list: { totalCount: number | null; currentPage: number | null; lqList: (Row | null)[] | null } | null };

/**
 * One liquidity-list snapshot of a chain, checked against `totalCount`. Every pool type the config lists is asked for
 * by name (`filterTypes`): the official client always sends them, and the service's default without the filter is not
 * published. Nulls, which the real types allow at every level: `liquidity_list: null` fails the pass with a message
 * (no snapshot is stored, the next run tries again); `lqList: null` is an empty page (and a `totalCount` above zero
 * then fails the count check, naming the null); `totalCount: null` pages until a short page, and the check is skipped.
 */
async function pageList(run: TaskRun): Promise<void> {
  const items = new Map<string, Row>();
  let total: number | null = null;
  let nulls = 0;
  const nullPages: number[] = [];
  const chainId = run.task.chainId;
  for (let page = 1; ; page++) {
    const filterState = { address: '', viewOnlyOwn: false, filterTypes: run.deps.config.listPoolTypes };
    const where = { chainIds: [chainId], currentPage: page, pageSize: LIST_PAGE_SIZE, refreshNow: false, filterState, order: { orderBy: 'updatedAt', orderDirection: 'asc' } };
    const data = await run.fetch<ListPage>(LIST_QUERY, { where });
    const info = data.liquidity_list;
    if (info === null || info === undefined) {
      throw new UpstreamError(`the liquidity list answered liquidity_list: null for chain ${chainId} (page ${page}); no snapshot is stored this run, and the next run asks again`, 'garbage', true);
    }
    total = info.totalCount ?? null;
    if (info.lqList === null || info.lqList === undefined) nullPages.push(page);
    const list = info.lqList ?? [];
    for (const it of list) {
      if (it) items.set(it.id, it);
      else nulls++;
    }
    if (list.length < LIST_PAGE_SIZE || (total !== null && page * LIST_PAGE_SIZE >= total)) break;
  }
  if (total !== null && items.size !== total) {
    const why = nullPages.length ? `lqList was null on page ${nullPages.join(', ')}` : nulls ? `${nulls} of its items were null` : 'the list changed while paging';
    throw new UpstreamError(`liquidity list of chain ${chainId} returned ${items.size} distinct pools but totalCount ${total} (${why})`, 'garbage', true);
  }
  run.take([...items.values()]);
  await run.flush({ block: run.block.number }, { kind: 'snapshot' }, new Date(run.block.timestamp * 1000).toISOString());
}

/** Runs a task from its checkpoint; returns the run with its stats and final cursor. */
export async function runTask(task: Task, deps: TaskDeps, pin: TaskPin): Promise<{ run: TaskRun; before: string | null }> {
  const cp = await deps.checkpoints.get(task.chainId, task.ds.name);
  const before = cp?.cursor ?? null;
  const run = new TaskRun(task, deps, pin, before);
  try {
    await page(run, before, pin.block);
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
      await pageIds(run, { shape: 'id' }, '', { kind: 'snapshot' }, {});
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
        // First run (or an interrupted one): a full pass by id, resumable from the last committed id. It reads every
        // row, those with a null updatedAt included.
        await pageIds(run, { shape: 'id' }, cursor.id ?? '', { kind: 'ids' }, watermark, (id) => ({ mode: 'full', id }));
      } else {
        // Incremental. Upserts are idempotent: intermediate batches keep the old watermark, so a crash re-reads rather
        // than skips. updatedAt alone cannot be trusted: the upstream's mappings never set it on maintainer fees and
        // earnings, LP tokens get it only from a later liquidity event, and an LP token's supply changes without it
        // (DODOEX/dodoex_v2_subgraph 0eb5baca, src/mappings/dodoex/classicPoolFromV1.ts, helpers.ts createLpToken);
        // graph-node's `updatedAt_gte` never matches a null. So every row changed since the last run's block is read
        // by `_change_block` where the endpoint has it; otherwise the updatedAt keyset, then every null-updatedAt row.
        const since = changedSince(run.pin, run.deps.config.reorgWindowSecs, cursor, block);
        if (since !== undefined) await pageIds(run, { shape: 'changed-since', since }, '', { kind: 'ids' }, watermark, () => cursor);
        else {
          await pageSeq(run, Math.max(0, Number(cursor.seq) - window), () => cursor);
          await pageIds(run, { shape: 'null-id' }, '', { kind: 'ids' }, watermark, () => cursor);
        }
      }
      break;
    }
  }
}

/** Most blocks a chain makes per second, for a re-read window in blocks when the pace is unknown (arbitrum: about 4). */
const MAX_BLOCKS_PER_SEC = 10;

/**
 * The block from which an incremental pass of a mutable dataset reads changed rows with `_change_block`: the last
 * run's block less the re-read window in blocks, from the pace of blocks between that run and this one (or, when no
 * block passed, at most MAX_BLOCKS_PER_SEC a second). Undefined when the endpoint has no `_change_block`, or the
 * cursor has no block.
 */
export function changedSince(pin: Pick<TaskPin, 'changeBlock'>, windowSecs: number, cursor: Cursor, block: PinnedBlock): number | undefined {
  if (!pin.changeBlock || cursor.block === undefined || cursor.seq === undefined) return undefined;
  const blocks = block.number - cursor.block;
  const secs = block.timestamp - Number(cursor.seq);
  const pace = blocks > 0 && secs > 0 ? blocks / secs : MAX_BLOCKS_PER_SEC;
  return Math.max(0, cursor.block - Math.ceil(windowSecs * pace) - 1);
}
