/**
 * Mutable entities (pairs, tokens, users, positions, LP tokens…): a first full pass by id, resumable from the last
 * committed id, then incremental passes that upsert every row changed since the last run.
 */
import type { PinnedBlock } from '../task.ts';
import type { Cursor, TaskRun } from '../task-run.ts';
import { pageById } from './by-id.ts';
import { pageKeyset } from './keyset.ts';

/** Most blocks a chain makes per second, for a re-read window in blocks when the pace is unknown (arbitrum: about 4). */
const MAX_BLOCKS_PER_SEC = 10;

/** Pages a mutable dataset from its checkpoint to the pinned block. */
export async function pageMutable(run: TaskRun, cursor: Cursor): Promise<void> {
  const block = run.block;
  const watermark: Cursor = { mode: 'incremental', seq: String(block.timestamp) };
  if (cursor.mode !== 'incremental') {
    // First run (or an interrupted one): a full pass by id, resumable from the last committed id. It reads every row,
    // those with a null updatedAt included.
    const progress = (id: string): Cursor => ({ mode: 'full', id });
    await pageById(run, {
      pass: { shape: 'id' },
      startId: cursor.id ?? '',
      replace: { kind: 'ids' },
      finish: watermark,
      progress,
    });
    return;
  }
  // Incremental. Upserts are idempotent: intermediate batches keep the old watermark, so a crash re-reads rather than
  // skips. updatedAt alone cannot be trusted: the upstream's mappings never set it on maintainer fees and earnings, LP
  // tokens get it only from a later liquidity event, and an LP token's supply changes without it
  // (DODOEX/dodoex_v2_subgraph 0eb5baca, src/mappings/dodoex/classicPoolFromV1.ts, helpers.ts createLpToken);
  // graph-node's `updatedAt_gte` never matches a null. So every row changed since the last run's block is read by
  // `_change_block` where the endpoint has it; otherwise the updatedAt keyset, then every null-updatedAt row.
  const window = run.deps.config.reorgWindowSecs;
  const since = changedSince(cursor, block, { changeBlock: run.pin.changeBlock, windowSecs: window });
  const keep = () => cursor;
  if (since !== undefined) {
    await pageById(run, {
      pass: { shape: 'changed-since', since },
      startId: '',
      replace: { kind: 'ids' },
      finish: watermark,
      progress: keep,
    });
    return;
  }
  await pageKeyset(run, Math.max(0, Number(cursor.seq) - window), keep);
  await pageById(run, {
    pass: { shape: 'null-id' },
    startId: '',
    replace: { kind: 'ids' },
    finish: watermark,
    progress: keep,
  });
}

/**
 * The block from which an incremental pass of a mutable dataset reads changed rows with `_change_block`: the last
 * run's block less the re-read window in blocks, from the pace of blocks between that run and this one (or, when no
 * block passed, at most MAX_BLOCKS_PER_SEC a second). Undefined when the endpoint has no `_change_block`, or the
 * cursor has no block.
 */
export function changedSince(
  cursor: Cursor,
  block: PinnedBlock,
  endpoint: { readonly changeBlock: boolean; readonly windowSecs: number },
): number | undefined {
  const { changeBlock, windowSecs } = endpoint;
  if (!changeBlock || cursor.block === undefined || cursor.seq === undefined) return undefined;
  const blocks = block.number - cursor.block;
  const secs = block.timestamp - Number(cursor.seq);
  const pace = blocks > 0 && secs > 0 ? blocks / secs : MAX_BLOCKS_PER_SEC;
  return Math.max(0, cursor.block - Math.ceil(windowSecs * pace) - 1);
}
