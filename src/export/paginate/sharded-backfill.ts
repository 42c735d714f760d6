/**
 * The first backfill of an event or bucket dataset, split into `config.shards` key ranges fetched concurrently, each
 * with its own checkpoint in the shard checkpoints table; when all are done they merge into the dataset's own
 * checkpoint, in the transaction that drops theirs.
 */

import type { ShardCheckpoint } from '../../store/checkpoint-store.ts';
import { minOf } from '../../util/extremes.ts';
import { firstId } from '../queries.ts';
import type { FetchedPage } from '../routing/routed-source.ts';
import type { TaskStats } from '../task.ts';
import { keyValue, TaskRun } from '../task-run.ts';
import { pageKeyset } from './keyset.ts';
import { runPass } from './pass.ts';

/** Where one shard of a backfill stands: its key range [lo, hi), the last committed row, and whether it is done. */
interface ShardCursor {
  lo: string;
  hi: string;
  /** The whole backfill's range, split into `shards` parts: a run killed before every shard committed rebuilds the rest. */
  range: [string, string];
  seq?: string;
  id?: string;
  done?: boolean;
  block?: number;
}

/** A shard to page: which one, its committed checkpoint (if any), and where it stands. */
interface ShardPlan {
  readonly shard: number;
  readonly prev: string | null;
  readonly cursor: ShardCursor;
}

/**
 * Backfills a dataset in shards, resuming `pending` ones. A dataset that fits in one page is done with that page.
 * Returns false when sharding is off and no shard is pending (the caller pages it in one keyset pass).
 */
export async function backfillSharded(run: TaskRun, pending: readonly ShardCheckpoint[]): Promise<boolean> {
  const { ds, deps } = run;
  let range: [string, string];
  let count: number;
  if (pending.length) {
    range = (JSON.parse(pending[0]!.cursor) as ShardCursor).range;
    count = pending[0]!.shards;
  } else {
    if (deps.config.shards <= 1) return false;
    // One page tells whether the dataset is larger than a page, and where its history starts.
    const probe = await run.fetchPage('seq-first', { block: run.block.number, from: keyValue(ds, 0) });
    const first = probe.first;
    if (probe.count < run.size || !first) {
      await commitSmall(run, probe);
      return true;
    }
    // The shards read its rows again.
    run.forget(probe);
    const lo = Number(first[ds.seq!]);
    range = [String(lo), String(Math.max(lo + 1, run.block.timestamp + 1))];
    count = deps.config.shards;
  }
  const shards = plans(range, count, pending);
  run.rewritesFrom(minOf(shards.map((s) => Number(s.cursor.lo))));
  const open = shards.filter((s) => !s.cursor.done);
  const progress = shardProgress(run, shards);
  const outcomes = await Promise.allSettled(open.map((s) => pageShard(run, s, { shards: count, report: progress })));
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
  // Merge: the dataset's checkpoint is the last row of the last shard that has one.
  const done = (await deps.checkpoints.shards(run.task.chainId, ds.name)).map(
    (s) => JSON.parse(s.cursor) as ShardCursor,
  );
  const last = done
    .filter((c) => c.seq !== undefined)
    .sort((a, b) => Number(a.lo) - Number(b.lo))
    .pop();
  // Its block is the earliest a shard read at: shards done by an earlier run read below this run's block, and a reorg
  // since then is not ruled out by this run's head (`routing/reorg-check.ts`), so the next run re-reads its window.
  const block = minOf([run.block.number, ...done.map((c) => c.block ?? run.block.number)]);
  const next = { seq: last?.seq ?? String(run.stats.rewriteFrom), id: last?.id ?? '', block };
  await run.flush({ next, replace: { kind: 'none' }, mergeShards: true });
  // A backfill whose range was cut at an earlier head (resumed by a later run, or at a new pin when the deployment
  // pruned its block) reads the rows written since, to this run's block, keeping the earliest block in its cursor.
  if (Number(range[1]) <= run.block.timestamp)
    await pageKeyset(run, Number(next.seq), (row) =>
      row ? { seq: String(row[ds.seq!]), id: row.id, block } : { ...next },
    );
  return true;
}

/** A dataset smaller than one page: its only page is the whole backfill. */
async function commitSmall(run: TaskRun, page: FetchedPage): Promise<void> {
  run.measure(0);
  run.rewritesFrom(0);
  run.take(page);
  const last = page.last;
  const at = last ? { seq: String(last[run.ds.seq!]), id: last.id } : { seq: '0', id: firstId(run.ds) };
  await run.flush({
    next: { ...at, block: run.block.number },
    replace: { kind: 'from', column: run.seqColumn, from: 0 },
  });
}

/** Every shard of the range: the committed ones from their checkpoints, the others from their start. */
function plans(range: [string, string], count: number, pending: readonly ShardCheckpoint[]): ShardPlan[] {
  const [lo, hi] = range.map(Number) as [number, number];
  const bound = (k: number) => String(lo + Math.floor((k * (hi - lo)) / count));
  const committed = new Map(pending.map((s) => [s.shard, s.cursor]));
  return Array.from({ length: count }, (_, k) => {
    const text = committed.get(k + 1);
    const cursor: ShardCursor = text ? (JSON.parse(text) as ShardCursor) : { lo: bound(k), hi: bound(k + 1), range };
    return { shard: k + 1, prev: text ?? null, cursor };
  });
}

/** Reports a shard's page as its task's: `onPage` of the shard's run, given the shard. */
type ShardPageReport = (shard: number, stats: TaskStats, fraction: number | undefined) => void;

/**
 * The progress of a sharded backfill as one task's: its pages are those of every shard, and the share done is the
 * mean of the shards' shares (their ranges are of one length; a shard done before this run counts as whole).
 */
function shardProgress(run: TaskRun, shards: readonly ShardPlan[]): ShardPageReport {
  const onPage = run.deps.onPage;
  const share = new Map(shards.map((s) => [s.shard, s.cursor.done ? 1 : 0]));
  const pages = new Map<number, number>();
  return (shard, stats, fraction) => {
    if (!onPage) return;
    if (fraction !== undefined) share.set(shard, fraction);
    pages.set(shard, stats.pages);
    const total = [...pages.values()].reduce((a, b) => a + b, run.stats.pages);
    const mean = [...share.values()].reduce((a, b) => a + b, 0) / share.size;
    onPage(run.task, { ...run.stats, pages: total }, mean);
  };
}

/** Pages one shard's key range from where it stands to its end, committing with the shard's checkpoint. */
async function pageShard(
  parent: TaskRun,
  plan: ShardPlan,
  of: { readonly shards: number; readonly report: ShardPageReport },
): Promise<void> {
  const { shards, report } = of;
  const { ds } = parent;
  const deps = {
    ...parent.deps,
    onPage: (_t: unknown, stats: TaskStats, f: number | undefined) => report(plan.shard, stats, f),
  };
  const c = plan.cursor;
  const run = new TaskRun(
    { task: { ...parent.task, endpoint: parent.endpoint }, deps, pin: parent.pin, failovers: parent.failovers },
    plan.prev,
    { shard: plan.shard, shards },
  );
  // The shard's share done is measured over its own key range.
  run.measure(Number(c.lo), Number(c.hi));
  try {
    const block = parent.block.number;
    const to = keyValue(ds, c.hi);
    // A resumed shard re-reads the reorg window before its checkpoint, never below its own start.
    const from =
      c.seq === undefined ? Number(c.lo) : Math.max(Number(c.lo), Number(c.seq) - deps.config.reorgWindowSecs);
    // The shards share one batch budget, so that memory does not grow with their number.
    await runPass(run, {
      first: { shape: 'range-first', vars: { block, from: keyValue(ds, from), to } },
      next: (last) => ({
        shape: 'range-next',
        vars: { block, seq: keyValue(ds, String(last[ds.seq!])), id: last.id, to },
      }),
      replace: {
        first: { kind: 'range', column: parent.seqColumn, from: keyValue(ds, from), to },
        later: { kind: 'none' },
      },
      batchRows: Math.ceil(deps.config.batchRows / deps.config.shards),
      cursor: (last, done): ShardCursor => {
        const at = last
          ? { seq: String(last[ds.seq!]), id: last.id }
          : c.seq !== undefined
            ? { seq: c.seq, id: c.id ?? '' }
            : {};
        return { lo: c.lo, hi: c.hi, range: c.range, ...at, ...(done ? { done: true } : {}), block };
      },
    });
  } catch (e) {
    run.discard();
    throw e;
  } finally {
    parent.absorb(run.stats);
  }
}
