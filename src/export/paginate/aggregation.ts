/**
 * Aggregations of a subgraph (`@aggregation`, one dataset per interval): graph-node serves their rows newest first, by
 * `(timestamp, id)` descending, with no `orderBy` (graphprotocol/graph-node `graph/src/schema/api.rs`
 * `query_fields_for_agg_type`). A first full pass pages down that keyset; later passes read the rows written since the
 * re-read window's first block (`_change_block`; every row again where the endpoint lacks it), then check the window's
 * rows against the upstream as a mutable entity's are: a reorganisation that rewrote a bucket rewrote its id too.
 */
import type { Replace } from '../../store/batch.ts';
import type { Row } from '../routing/routed-source.ts';
import type { Cursor, TaskRun } from '../task-run.ts';
import { removeGone } from './mutable.ts';
import { type PassRequest, runPass } from './pass.ts';
import { changedSince, presenceFrom } from './window.ts';

/** One pass down the keyset: among the rows written since `since` if given, after `after` if resuming. */
interface DescPass {
  readonly since?: number | undefined;
  readonly after?: { readonly ts: string; readonly id: string } | undefined;
  readonly replace: Replace;
  readonly finish: Cursor;
  /** The checkpoint of each full batch before the last; without it, the rows are committed only at the end. */
  readonly progress?: (last: Row) => Cursor;
}

/** The first page request of an aggregation's incremental pass (foreseen by `first-request.ts`). */
export function aggregationFirst(block: number, since: number | undefined): PassRequest {
  return since === undefined
    ? { shape: 'agg-first', vars: { block } }
    : { shape: 'agg-changed-first', vars: { block, since } };
}

async function pageDown(run: TaskRun, plan: DescPass): Promise<void> {
  const block = run.block.number;
  const since = plan.since;
  const extra = since === undefined ? {} : { since };
  const next = since === undefined ? 'agg-next' : 'agg-changed-next';
  const after = (ts: string, id: string) => ({ shape: next, vars: { block, ts, id, ...extra } }) as const;
  const { progress } = plan;
  await runPass(run, {
    first: plan.after ? after(plan.after.ts, plan.after.id) : aggregationFirst(block, since),
    next: (last) => after(String(last.timestamp), String(last.id)),
    replace: { first: plan.replace, later: plan.replace },
    batchRows: progress ? run.deps.config.batchRows : Number.POSITIVE_INFINITY,
    cursor: (last, done) => ({ block, ...(done || !progress || !last ? plan.finish : progress(last)) }),
  });
}

/** Every row of an aggregation at the pinned block, newest first, committed at the end (`verify --repair`). */
export async function pageAggregationWhole(run: TaskRun, finish: Cursor): Promise<void> {
  await pageDown(run, { replace: { kind: 'ids' }, finish });
}

/** Pages an aggregation's dataset from its checkpoint to the pinned block. */
export async function pageAggregation(run: TaskRun, cursor: Cursor): Promise<void> {
  if (cursor.mode === 'incremental') return catchUp(run, cursor);
  // The first pass, resumable: a resumed one goes on down from its last committed row, at a later block.
  const block = run.block;
  const began = cursor.mode === 'full' && cursor.began ? cursor.began : { block: block.number, ts: block.timestamp };
  const resume = cursor.mode === 'full' && cursor.seq !== undefined && cursor.id !== undefined;
  const finish: Cursor = { mode: 'incremental', seq: String(began.ts), block: began.block };
  await pageDown(run, {
    after: resume ? { ts: cursor.seq!, id: cursor.id! } : undefined,
    replace: { kind: 'ids' },
    finish,
    progress: (last) => ({ mode: 'full', seq: String(last.timestamp), id: String(last.id), began, block: began.block }),
  });
  // The rows written above a resumed pass since it began are newer than its keyset: they are read now, from the block
  // it began at, so that the checkpoint's block is the one every row was read at.
  if (began.block !== block.number) await catchUp(run, finish);
}

/** An incremental pass: the rows written since the re-read window's first block, then the window's rows checked. */
async function catchUp(run: TaskRun, cursor: Cursor): Promise<void> {
  const block = run.block;
  const w = { windowSecs: run.deps.config.reorgWindowSecs, settled: run.pin.settled };
  const from = presenceFrom(cursor, block, w);
  const since = changedSince(cursor, block, { ...w, changeBlock: run.pin.changeBlock });
  run.watchIds();
  await pageDown(run, { since, replace: { kind: 'ids' }, finish: cursor });
  await removeGone(run, from, { mode: 'incremental', seq: String(block.timestamp) });
}
