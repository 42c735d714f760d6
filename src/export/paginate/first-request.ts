/**
 * The first request a task's paginator will send, known before it runs: a run asks the first page of many datasets of
 * one route in one batched request (`first-pages.ts`), and each task then finds its first page there. Only a task that
 * continues a complete read is foreseen; a backfill, a resumed pass or the liquidity list is left to read on its own.
 * test/unit/first-pages.test.ts checks each foreseen request against the one the paginator sends.
 */
import type { Dataset } from '../../catalog/catalog.ts';
import { firstId } from '../queries.ts';
import type { PinnedBlock } from '../task.ts';
import { type Cursor, keyValue } from '../task-run.ts';
import { aggregationFirst } from './aggregation.ts';
import type { PassRequest } from './pass.ts';
import { changedSince, presenceFrom, seqFrom, type Window } from './window.ts';

/** Where the task reads: its pinned block, whether its route filters by `_change_block`, the re-read window. */
export interface FirstRequestAt extends Window {
  readonly block: PinnedBlock;
  readonly changeBlock: boolean;
}

/** The first page request of a task at its checkpoint `cursor`, or undefined where it cannot be foreseen. */
export function firstRequest(ds: Dataset, cursor: Cursor, at: FirstRequestAt): PassRequest | undefined {
  const block = at.block.number;
  if (ds.kind === 'snapshot') return { shape: 'id', vars: { block, id: firstId(ds) } };
  if (ds.kind === 'event' || ds.kind === 'bucket') {
    if (cursor.seq === undefined) return undefined;
    return { shape: 'seq-first', vars: { block, from: keyValue(ds, seqFrom(cursor.seq, at)) } };
  }
  if (ds.kind === 'mutable' && cursor.mode === 'incremental' && cursor.seq !== undefined) {
    const since = changedSince(cursor, at.block, at);
    if (ds.aggregation) return aggregationFirst(block, since);
    if (since !== undefined) return { shape: 'changed-since', vars: { block, id: firstId(ds), since } };
    // A subgraph's entity with no keyset field, on an endpoint without `_change_block`: every row again, by id.
    if (ds.seq === undefined) return { shape: 'id', vars: { block, id: firstId(ds) } };
    return { shape: 'seq-first', vars: { block, from: keyValue(ds, seqFrom(cursor.seq, at)) } };
  }
  return undefined;
}

/**
 * The block from which an incremental pass of a mutable dataset will ask which rows read by earlier runs are still
 * upstream (`presenceFrom` in `window.ts`), or undefined where it will not ask: another kind, or a pass that is not
 * incremental.
 */
export function windowPresenceFrom(ds: Dataset, cursor: Cursor, at: FirstRequestAt): number | undefined {
  if (ds.kind !== 'mutable' || cursor.mode !== 'incremental') return undefined;
  return presenceFrom(cursor, at.block, at);
}
