/**
 * Where an incremental pass starts reading: what is new since the task's last read, and before it the re-read window
 * (`reorgWindowSecs`), which a reorganisation may have rewritten. A task whose last read still stands (its head is on
 * the route's chain now: `routing/reorg-check.ts`) has no window to read again.
 */
import type { PinnedBlock } from '../task.ts';
import type { Cursor } from '../task-run.ts';

/** Most blocks a chain makes per second, for a re-read window in blocks when the pace is unknown (arbitrum: about 4). */
const MAX_BLOCKS_PER_SEC = 10;

/** The re-read window of a task: its length, and whether its last read is known to stand (then it has none). */
export interface Window {
  readonly windowSecs: number;
  readonly settled?: boolean | undefined;
}

/**
 * The first key (a time or a bucket's start) of a keyset pass that goes on from a checkpoint at `seq`: the checkpoint
 * itself where the last read stands (the rows there are read again, so that those of a later block at the same time
 * are not missed), else the window's first second.
 */
export function seqFrom(seq: string, w: Window): number {
  return w.settled ? Number(seq) : Math.max(0, Number(seq) - w.windowSecs);
}

/**
 * The first block of the re-read window of an incremental pass: the block after the last run's where its read stands;
 * else the last run's block less the window in blocks, from the pace of blocks between that run and this one (or,
 * when no block passed, at most MAX_BLOCKS_PER_SEC a second). Undefined when the cursor has no block.
 */
export function windowStart(cursor: Cursor, block: PinnedBlock, w: Window): number | undefined {
  if (cursor.block === undefined || cursor.seq === undefined) return undefined;
  if (w.settled) return cursor.block + 1;
  const blocks = block.number - cursor.block;
  const secs = block.timestamp - Number(cursor.seq);
  const pace = blocks > 0 && secs > 0 ? blocks / secs : MAX_BLOCKS_PER_SEC;
  return Math.max(0, cursor.block - Math.ceil(w.windowSecs * pace) - 1);
}

/**
 * The block from which an incremental pass asks which rows read by earlier runs are still upstream (`removeGone` in
 * `mutable.ts`), or undefined where it does not ask: no block in the cursor (written by an older version), or a last
 * read that stands (no row it read was reverted). It asks also when no block passed since the last run: a task whose
 * route's head is the one its last complete read saw (number and hash) makes no request at all (`extract.ts`), so a
 * pass at the same height follows a reorganisation to the same height (new hashes, other rows), which can take back a
 * row the last run read. A run's batch asks the same ahead (`first-request.ts`).
 */
export function presenceFrom(cursor: Cursor, block: PinnedBlock, w: Window): number | undefined {
  if (cursor.block === undefined || w.settled) return undefined;
  return windowStart(cursor, block, w);
}

/**
 * The block from which an incremental pass of a mutable dataset reads changed rows with `_change_block`: the start of
 * the re-read window. Undefined when the endpoint has no `_change_block`, or the cursor has no block.
 */
export function changedSince(
  cursor: Cursor,
  block: PinnedBlock,
  endpoint: Window & { readonly changeBlock: boolean },
): number | undefined {
  return endpoint.changeBlock ? windowStart(cursor, block, endpoint) : undefined;
}
