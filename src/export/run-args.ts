/** What a run of the export takes and gives, and what its tasks share. */

import type { Dataset } from '../catalog/catalog.ts';
import type { Config } from '../config/config.ts';
import type { CheckpointStore } from '../store/checkpoint-store.ts';
import type { DuckDBSink } from '../store/sink.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { EndpointInfo } from '../upstream/endpoint-probe.ts';
import type { EventLog } from '../util/logger.ts';
import type { PageChecker } from './check/page-check-runner.ts';
import type { RouteHealth } from './routing/route-health.ts';
import type { PageSource } from './seams.ts';
import type { Task, TaskResult, TaskStats } from './task.ts';

/** The tasks whose last read ended well (`CheckpointStore.complete`): cursor and head by `<chainId>/<dataset>`. */
export type Completed = ReadonlyMap<string, { readonly cursor: string; readonly head: string }>;

/** Inputs of a run, passed explicitly. */
export interface RunArgs {
  readonly config: Config;
  readonly tasks: readonly Task[];
  readonly jobs: readonly string[];
  readonly warehouse: Warehouse;
  readonly client: UpstreamClient;
  readonly runId: string;
  readonly signal: AbortSignal;
  readonly log: EventLog;
  readonly progress?: ProgressSink;
}

/** What the tasks of a run did, and what the run's probe of each route found (the routes that answered), by URL. */
export interface ExportOutcome {
  readonly results: TaskResult[];
  readonly probed: ReadonlyMap<string, EndpointInfo>;
}

/** Receives progress of tasks (progress bars on a terminal). */
export interface ProgressSink {
  start(total: number): void;
  page(task: Task, stats: TaskStats, fraction: number | undefined): void;
  done(result: TaskResult): void;
  stop(): void;
}

/** What every task of a run shares: the run's arguments, the sink, the checkpoint store and the page checker. */
export interface RunPlumbing {
  readonly args: RunArgs;
  readonly sink: DuckDBSink;
  /** The upstream, with the first pages a batch read already (see `first-pages.ts`). */
  readonly source: PageSource;
  readonly checkpoints: CheckpointStore;
  readonly checker: PageChecker;
  /** The tasks whose last read ended well, as the run found them (see `CheckpointStore.complete`). */
  readonly complete: Completed;
  /** The tasks whose last read stands (`routing/reorg-check.ts`): they read only what is new. */
  readonly settled: ReadonlySet<string>;
  /** The routes the run gave up on. */
  readonly health: RouteHealth;
  /** The datasets whose table could not be readied, and why: their tasks fail at once, the others run. */
  readonly unready: ReadonlyMap<Dataset, Error>;
}
