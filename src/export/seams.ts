/**
 * The seams of a task: where its pages come from, where its batches go, and where it reads its checkpoints. The
 * exporter passes the real ones (the upstream client, the DuckDB sink, the checkpoint store); tests pass fakes.
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { Config } from '../config/config.ts';
import type { Checkpoint, ShardCheckpoint } from '../store/checkpoint-store.ts';
import type { Batch, Written } from '../store/sink.ts';
import type { Answer, Endpoint } from '../upstream/client.ts';
import type { EventLog } from '../util/logger.ts';
import type { Task, TaskStats } from './task.ts';

/** A source of pages: one GraphQL request to an endpoint, answered with its data and its size. */
export interface PageSource {
  request<T>(endpoint: Endpoint, query: string, variables: Record<string, unknown>): Promise<Answer<T>>;
}

/** A sink of batches: commits a batch's rows with its checkpoint move, all or nothing. */
export interface BatchSink {
  write(batch: Batch): Promise<Written>;
}

/** Reads committed checkpoints. */
export interface CheckpointReader {
  /** The dataset's own checkpoint on a chain, if any. */
  get(chainId: number, dataset: string): Promise<Checkpoint | undefined>;
  /** The checkpoints of the shards of a backfill still under way, by shard number. */
  shards(chainId: number, dataset: string): Promise<ShardCheckpoint[]>;
  /** Ids of a dataset's rows that runs read at block `from` or later, other than run `exceptRun`, in id order. */
  idsReadSince(
    chainId: number,
    ds: Dataset,
    at: { readonly from: number; readonly exceptRun: string },
  ): Promise<string[]>;
}

/** Everything a task needs, passed explicitly. */
export interface TaskDeps {
  readonly config: Pick<
    Config,
    'pageSize' | 'batchRows' | 'shards' | 'maxAttempts' | 'reorgWindowSecs' | 'listPoolTypes'
  >;
  readonly source: PageSource;
  readonly sink: BatchSink;
  readonly checkpoints: CheckpointReader;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly log: EventLog;
  /** Called after each page with the task's counters and, where known, the fraction done (0..1). */
  readonly onPage?: (task: Task, stats: TaskStats, fraction: number | undefined) => void;
}
