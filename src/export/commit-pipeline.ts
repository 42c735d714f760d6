/**
 * A task's commits, in order: each moves the checkpoint from where the one before it left it (compare-and-set, so none
 * after a failed one can commit), and up to `COMMITS_IN_FLIGHT` may run while the task fetches on.
 */
import type { Replace } from '../store/batch.ts';

/**
 * Commits one pager may leave running while it fetches on. Their pages wait as files, not in memory; while DuckDB stores
 * one group of batches, the next ones gather, and it takes them in one statement (its cost per statement is far above
 * its cost per row).
 */
const COMMITS_IN_FLIGHT = 4;

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

/** Commits what the buffer holds with the move of the checkpoint from `prev` to `next` (cursors as JSON). */
export type CommitOne = (f: Flush, move: { readonly prev: string | null; readonly next: string }) => Promise<void>;

export class CommitPipeline {
  /** The commits `flushBehind` started and nobody has awaited yet, oldest first. */
  private running: Promise<void>[] = [];
  /** The committed cursor (JSON), or null before the first commit of a new dataset. */
  cursor: string | null;
  /** The cursor the last commit started moves to: `cursor` once every commit has ended. */
  private tip: string | null;

  /** `prev`: the committed cursor; `commitOne` makes one commit. */
  constructor(
    prev: string | null,
    private readonly commitOne: CommitOne,
  ) {
    this.cursor = prev;
    this.tip = prev;
  }

  /**
   * Commits the buffer and moves the checkpoint to `f.next` (and, on request, merges the dataset's shards), after the
   * commits `flushBehind` left running, if any.
   */
  async flush(f: Flush): Promise<void> {
    await this.settle();
    await this.commit(f);
  }

  /**
   * Starts the commit of the buffer as `flush` does, and returns without waiting for it, so that the next pages are
   * fetched while DuckDB stores these. Past `COMMITS_IN_FLIGHT`, the oldest is awaited first. A failed one fails the
   * next call that awaits it (or `settle`). A pager that uses it ends with `flush`, or with `settle` when it fails.
   */
  async flushBehind(f: Flush): Promise<void> {
    if (this.running.length >= COMMITS_IN_FLIGHT) await this.running.shift();
    const running = this.commit(f);
    // Its failure is reported when it is awaited; until then it is not an unhandled rejection.
    running.catch(() => undefined);
    this.running.push(running);
  }

  /** Waits for the commits `flushBehind` left running, in order; the first failure among them is thrown. */
  async settle(): Promise<void> {
    const running = this.running;
    this.running = [];
    const failed = (await Promise.allSettled(running)).find((r) => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async commit(f: Flush): Promise<void> {
    const next = JSON.stringify(f.next);
    // The move starts where the commit before it (perhaps still running) leaves the checkpoint.
    const prev = this.tip;
    this.tip = next;
    await this.commitOne(f, { prev, next });
    this.cursor = next;
  }
}
