/** The connections the sink commits on (lanes), and how batches join one group commit (`sink.ts`). */
import { sizeBytes } from '../config/memory-limit.ts';
import type { Batch, Written } from './batch.ts';
import type { BatchSource } from './batch-statements.ts';
import type { Tx } from './sql-port.ts';
import type { Lane, Warehouse } from './warehouse.ts';

/** A batch waiting for its commit, with its rows already in files. */
export interface Pending {
  readonly batch: Batch;
  readonly source: BatchSource;
  readonly resolve: (w: Written) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Commit lanes for a DuckDB memory limit: two where the lake write may take a second lane too (`lakeLanes`: no limit,
 * or 1 GiB and more), else one. A group's transaction on one connection leaves the other core idle while it runs:
 * after 100 new blocks on the demo's 8 chains, the warehouse's one connection was busy 2.1 s of the tasks' 2.7 s, the
 * machine at 1.1 of its 2 cores. On two connections, one table's batches always on the same one, DuckDB runs both
 * transactions at once (it takes concurrent writes to different rows; the checkpoints, lake marks and snapshot digests
 * of two tables are different rows): the tasks took 2.1-2.5 s where they took 2.6-2.9 s (docs/benchmarks.md). Each
 * lane holds its own transaction's rows until it commits, hence one lane under a small limit.
 */
export function commitLanes(memoryLimit: string): 1 | 2 {
  const bytes = sizeBytes(memoryLimit);
  return bytes === undefined || bytes >= 1024 ** 3 ? 2 : 1;
}

/** A connection the sink commits groups on, with the batches waiting for it. */
export interface SinkLane {
  readonly queue: Pending[];
  draining: boolean;
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  interrupt(): void;
  close(): Promise<void>;
}

/** The warehouse's own connection as a lane. */
export function mainLane(w: Warehouse): SinkLane {
  return {
    queue: [],
    draining: false,
    transaction: (fn) => w.transaction(fn),
    interrupt: () => w.interrupt(),
    close: async () => undefined,
  };
}

/** A connection of the sink's own (`Warehouse.lane`), opened by its first group. */
export function sideLane(w: Warehouse): SinkLane {
  let opened: Promise<Lane> | undefined;
  const lane = () => (opened ??= w.lane());
  return {
    queue: [],
    draining: false,
    async transaction(fn) {
      const l = await lane();
      await l.exec('BEGIN TRANSACTION');
      try {
        const result = await fn(l);
        await l.exec('COMMIT');
        return result;
      } catch (e) {
        await l.exec('ROLLBACK').catch(() => undefined);
        throw e;
      }
    },
    interrupt: () => void opened?.then((l) => l.interrupt()),
    close: async () => {
      if (opened) await (await opened).close();
    },
  };
}

/** DuckDB's error when a statement needs more than its memory limit, with what to do about it. */
export function outOfMemory(e: unknown, batches: readonly Batch[]): unknown {
  const msg = (e as Error).message ?? '';
  if (!/Out of Memory Error/i.test(msg)) return e;
  const what = [...new Set(batches.map((b) => `${b.ds.name} on chain ${b.chainId}`))].join(', ');
  return new Error(
    `DuckDB needed more memory than duckdbMemoryLimit allows while storing ${what} (${msg.split('\n')[0]}); raise duckdbMemoryLimit in the config (e.g. "1GB"), and run again: batches committed before are kept`,
    { cause: e },
  );
}

/**
 * Whether a batch's rows can share one INSERT with the batches next to it: it adds rows, clearing at most its own key
 * range first, and no stored row can share an id with it. That holds for a batch that replaces nothing of a dataset
 * other than events and buckets, and for every batch of a shard of a first backfill (whose ids the merge of the shards
 * checks once) but the merge itself.
 */
export function joinsInsert(b: Batch): boolean {
  if (b.count === 0 || b.mergeShards || b.checkpoint.keep) return false;
  if (b.checkpoint.shard) return b.replace.kind === 'none' || b.replace.kind === 'range';
  return b.replace.kind === 'none' && b.ds.kind !== 'event' && b.ds.kind !== 'bucket';
}

/**
 * Whether two batches' rows go to one table with the same exporter columns, from files of one format, so one INSERT
 * can take both.
 */
export function sameInsert(x: Pending, y: Pending): boolean {
  const [a, b] = [x.batch, y.batch];
  return (
    a.ds === b.ds &&
    a.chainId === b.chainId &&
    a.block === b.block &&
    a.runId === b.runId &&
    a.takenAt === b.takenAt &&
    x.source.format === y.source.format
  );
}
