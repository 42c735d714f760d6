/**
 * The seams of a task: where its pages come from, where its batches go, and where it reads its checkpoints. The
 * exporter passes the real ones (the upstream client, the DuckDB sink, the checkpoint store); tests pass fakes.
 */

import type { Dataset } from '../catalog/catalog.ts';
import type { Config } from '../config/config.ts';
import type { Batch, KeptPage, Written } from '../store/batch.ts';
import type { Checkpoint, ShardCheckpoint } from '../store/checkpoint-store.ts';
import type { Answer, Endpoint } from '../upstream/client.ts';
import type { EventLog } from '../util/logger.ts';
import type { PageChecker } from './check/page-check-runner.ts';
import type { RouteHealth } from './routing/route-health.ts';
import type { Task, TaskStats } from './task.ts';

/** A source of pages: one GraphQL request to an endpoint, answered with its data and its size. */
export interface PageSource {
  request<T>(endpoint: Endpoint, query: string, variables: Record<string, unknown>): Promise<Answer<T>>;
  /**
   * A page request: its answer's body as it came, unparsed (the page checker reads it), and its size. `requests`: the
   * requests it cost, where not one (an answer a batch read already: see `first-pages.ts`).
   */
  requestBody(
    endpoint: Endpoint,
    query: string,
    variables: Record<string, unknown>,
  ): Promise<{ body: Uint8Array; bytes: number; requests?: number; indexed?: number }>;
  /** The data of a body that is not a page of rows alone, judged as `request` judges an answer (errors thrown). */
  answerData<T>(endpoint: Endpoint, body: Uint8Array): T;
  /**
   * What the source knows already of which rows of a dataset's re-read window are still upstream (a batch asked: see
   * `first-pages.ts`): the ids asked about (the rows earlier runs read since the window's start) and those the
   * collection holds at the block; undefined where it does not know.
   */
  knownPresence?(at: PresenceAt): Presence | undefined;
}

/** Where a question of ids' presence is asked: a dataset's collection on a route, at a block. */
export interface PresenceAt {
  readonly endpoint: Endpoint;
  readonly dataset: string;
  readonly root: string;
  readonly block: number;
}

/** The ids asked about, and those the upstream holds. */
export interface Presence {
  readonly asked: readonly string[];
  readonly held: ReadonlySet<string>;
}

/** A sink of batches: commits a batch's rows with its checkpoint move, all or nothing. */
export interface BatchSink {
  write(batch: Batch): Promise<Written>;
  /** A new file for a checked page's rows (the JSON array of its entities), kept for a later batch. */
  pageFile(): string;
  /** The rows of a kept page, as they were written. */
  reread(page: KeptPage): string;
  /** Forgets kept pages that no batch will take. */
  drop(pages: readonly KeptPage[]): void;
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
    | 'pageSize'
    | 'batchRows'
    | 'shards'
    | 'maxAttempts'
    | 'reorgWindowSecs'
    | 'listPoolTypes'
    | 'timeoutMs'
    | 'confirmations'
  >;
  readonly source: PageSource;
  /** Where page answers are checked and kept (the page worker, in an export). */
  readonly checker: PageChecker;
  readonly sink: BatchSink;
  readonly checkpoints: CheckpointReader;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly log: EventLog;
  /** Called after each page with the task's counters and, where known, the fraction done (0..1). */
  readonly onPage?: (task: Task, stats: TaskStats, fraction: number | undefined) => void;
  /** The routes the run gave up on (see `route-health.ts`); none are given up without it. */
  readonly routes?: RouteHealth;
}
