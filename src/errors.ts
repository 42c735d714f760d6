/**
 * Every error class of pool-export, and how each is classified: which exit code it ends a command with, which class
 * the run ledger records, and which are a full disk. This file imports nothing, so every layer can use it.
 */

/** An error in what the user typed or configured: exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/**
 * What went wrong upstream, in terms a user can act on. `unreachable`: the host could not be resolved or connected to
 * (a wrong address, no network); `network`: a connection that broke or was reset.
 */
export type UpstreamErrorKind =
  | 'unreachable'
  | 'network'
  | 'timeout'
  | 'http'
  | 'rate-limit'
  | 'graphql'
  | 'auth'
  | 'garbage'
  | 'stopped'
  | 'pruned';

/** What an upstream failure is: its kind, whether a retry may help, and what the answer said (status, Retry-After). */
export interface UpstreamFailure {
  readonly kind: UpstreamErrorKind;
  readonly retryable: boolean;
  readonly status?: number;
  readonly retryAfterMs?: number;
  readonly cause?: unknown;
  /** `pruned`: the earliest block the deployment still holds (graph-node's `block_queryable`). */
  readonly floor?: number;
}

/** An upstream failure: retryable ones are retried with backoff; the others stop the task. */
export class UpstreamError extends Error {
  readonly kind: UpstreamErrorKind;
  readonly retryable: boolean;
  readonly extra: {
    readonly status?: number;
    readonly retryAfterMs?: number;
    readonly cause?: unknown;
    readonly floor?: number;
  };

  constructor(message: string, failure: UpstreamFailure) {
    const { kind, retryable, ...extra } = failure;
    super(message, extra.cause === undefined ? undefined : { cause: extra.cause });
    this.name = 'UpstreamError';
    this.kind = kind;
    this.retryable = retryable;
    this.extra = extra;
  }
}

/** A body larger than its budget: reading stopped at the budget and the connection was dropped. */
export class BodyTooLargeError extends Error {
  constructor(
    readonly budget: number,
    message: string,
  ) {
    super(message);
    this.name = 'BodyTooLargeError';
  }
}

/** Where a value that does not fit its dataset's declared type was found. */
export interface GarbageAt {
  readonly dataset: string;
  readonly chainId: number;
  /** The chain as a user names it (`bsc`). */
  readonly chain: string;
  readonly field: string;
}

/** A value that does not fit a dataset's declared type: stops the task with the dataset, chain and field named. */
export class GarbageError extends Error {
  readonly dataset: string;
  readonly chainId: number;
  readonly field: string;

  /** `detail` says what was found; `hint`, what to do. */
  constructor(
    readonly at: GarbageAt,
    readonly detail: string,
    readonly hint: string,
  ) {
    super(
      `upstream sent invalid data for ${at.dataset} on ${at.chain} (chain ${at.chainId}), field "${at.field}": ${detail}. ${hint}`,
    );
    this.name = 'GarbageError';
    this.dataset = at.dataset;
    this.chainId = at.chainId;
    this.field = at.field;
  }
}

/** A stop requested by the user (SIGINT/SIGTERM): the current batch is committed or rolled back, then the task ends. */
export class StopRequested extends Error {
  constructor() {
    super('stopped on request');
    this.name = 'StopRequested';
  }
}

/** What a task had done when it failed: its counters and the checkpoint it started from. */
export interface TaskProgress<Stats> {
  readonly stats: Stats;
  readonly cursorBefore: string | null;
}

/** A task failure that carries what the task did before it failed; `cause` is the failure itself. */
export class TaskError<Stats = unknown> extends Error {
  constructor(
    override readonly cause: unknown,
    readonly progress: TaskProgress<Stats>,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'TaskError';
  }
}

/** A second writer moved the checkpoint under us: stop rather than duplicate or lose rows. */
export class ConcurrentWriterError extends Error {
  constructor(dataset: string, chainId: number) {
    super(
      `the checkpoint of ${dataset} on chain ${chainId} was changed by another process during this run; make sure only one pool-export run uses this data folder`,
    );
    this.name = 'ConcurrentWriterError';
  }
}

/** The data folder is locked by another process. */
export class DataLockedError extends Error {
  constructor(dataDir: string, owner: string) {
    super(
      `the data folder ${dataDir} is in use by another pool-export process (${owner}); wait for it to finish, or pass --wait-lock SECONDS`,
    );
    this.name = 'DataLockedError';
  }
}

/** A warehouse written by an earlier version, opened where it cannot be migrated (read-only). */
export class MigrationNeededError extends Error {
  constructor(path: string, version: { readonly found: number; readonly needed: number }) {
    super(
      `the warehouse ${path} was written by an earlier pool-export (schema version ${version.found}; this one needs ${version.needed}); run \`pool-export migrate\` (or any \`pool-export run\`) on this data folder to upgrade it in place`,
    );
    this.name = 'MigrationNeededError';
  }
}

/** A lake of another layout than this version's, met by a command that reads or writes it. */
export class LakeLayoutError extends Error {
  constructor(lake: string, version: { readonly found: number; readonly needed: number }) {
    super(
      version.found < version.needed
        ? `the lake ${lake} was written by an earlier pool-export (layout ${version.found}; this one reads layout ${version.needed}); run \`pool-export migrate\` (or any \`pool-export run\`) on this data folder to rewrite it in place`
        : `the lake ${lake} was written by a newer pool-export (layout ${version.found}; this one knows ${version.needed}); use that version, or a copy of the data folder`,
    );
    this.name = 'LakeLayoutError';
  }
}

/**
 * Entries of a lake write that failed while the others were written: each stays listed in `lake_pending` for the next
 * write. `cause` is the first entry's error; `files` what the write put in place all the same.
 */
export class LakeWriteError extends Error {
  /** The first failed entry (dataset and chain), and how many others failed. */
  readonly where: string;

  constructor(
    readonly failed: readonly { readonly entry: string; readonly error: unknown }[],
    readonly files: number,
  ) {
    const first = failed[0]!;
    const where = `${first.entry}${failed.length > 1 ? ` (and ${failed.length - 1} more of its entries)` : ''}`;
    super(`${where}: ${(first.error as Error).message}`, { cause: first.error });
    this.name = 'LakeWriteError';
    this.where = where;
  }
}

/** Exit code for bad usage (unknown flag, invalid value). */
export const EXIT_USAGE = 2;
/** Exit code for a failure at run time. */
export const EXIT_FAILURE = 1;
/** Exit code of `status` when a dataset is stale (older than `--stale-after`) or has never been exported. */
export const EXIT_STALE = 3;
/** Exit code of `verify` when stored rows differ from the upstream's counters (gaps found); 1 means it could not run. */
export const EXIT_GAPS = 4;

/** The exit code a command ends with after `e`: 2 for bad usage (yargs raises YError for a failed check), else 1. */
export function exitCodeOf(e: unknown): number {
  return e instanceof UsageError || (e as Error | undefined)?.name === 'YError' ? EXIT_USAGE : EXIT_FAILURE;
}

/** True for the errors Node and DuckDB raise when a write finds no space. */
export function isDiskFull(e: unknown): boolean {
  const err = e as { code?: string; message?: string } | undefined;
  return err?.code === 'ENOSPC' || /ENOSPC|No space left on device/i.test(String(err?.message ?? ''));
}

/** The message for a write that found the disk full, naming the data folder and the fix. */
export function diskFullMessage(dataDir: string, e: unknown): string {
  return `the disk holding the data folder ${dataDir} is full (${(e as Error).message}); free space there, or point --data-dir at a folder on another disk, and run again: batches committed before are kept and the next run resumes from them`;
}

/** Whether `e` is DuckDB's own error for a statement that needed more memory than its limit. */
export function isOutOfMemory(e: unknown): boolean {
  return /^Out of Memory Error\b/.test(String((e as Error | undefined)?.message ?? ''));
}

/** The memory limit a run's DuckDB had, and where it came from (the configuration's `duckdbMemoryLimit`). */
export interface MemoryInForce {
  readonly duckdbMemoryLimit: string;
  readonly duckdbMemoryLimitFrom: string;
}

/**
 * One line for DuckDB running out of memory: the setting to raise, the figure in force and where it came from. DuckDB's
 * own advice (its later lines: threads, insertion order, `SET memory_limit`) is SQL a user of the tool cannot type, so
 * only its first line is kept, for the figures it holds.
 */
export function outOfMemoryMessage(e: unknown, memory: MemoryInForce): string {
  const first = String((e as Error).message)
    .split('\n')[0]!
    .replace(/^Out of Memory Error: /, '');
  const limit = memory.duckdbMemoryLimit || 'none';
  return `DuckDB ran out of memory under duckdbMemoryLimit ${limit} (${memory.duckdbMemoryLimitFrom}): ${first}; set duckdbMemoryLimit in the config file to more (e.g. "1GB"), or give the process more memory where auto took a share of it, and run again`;
}

/** The error's message, explained when it is a full disk or DuckDB's memory ran out. */
export function explainWriteError(at: { readonly dataDir: string } & MemoryInForce, e: unknown): string {
  if (e instanceof LakeWriteError) return `${e.where}: ${explainWriteError(at, e.cause)}`;
  if (isDiskFull(e)) return diskFullMessage(at.dataDir, e);
  if (isOutOfMemory(e)) return outOfMemoryMessage(e, at);
  return (e as Error).message;
}

/** The class of an error for the ledger: `upstream-<kind>`, `stopped`, `disk-full`, or the class's name. */
export function errorClass(e: unknown): string {
  if (e instanceof TaskError) return errorClass(e.cause);
  if (e instanceof UpstreamError) return `upstream-${e.kind}`;
  if (e instanceof StopRequested) return 'stopped';
  if (isDiskFull(e)) return 'disk-full';
  return (e as Error | undefined)?.name ?? 'Error';
}

/** A bucket lake that cannot be used as configured: one line naming the bucket and the fix, never a secret. */
export class BucketError extends Error {
  constructor(
    message: string,
    readonly code: string,
  ) {
    super(message);
    this.name = 'BucketError';
  }
}
