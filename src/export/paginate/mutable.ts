/**
 * Mutable entities (pairs, tokens, users, positions, LP tokens…): a first full pass by id, resumable from the last
 * committed id, then incremental passes that upsert every row changed since the last run.
 */

import { firstId, presentQuery } from '../queries.ts';
import type { Cursor, TaskRun } from '../task-run.ts';
import { pageById } from './by-id.ts';
import { pageKeyset } from './keyset.ts';
import { changedSince, presenceFrom, seqFrom, type Window } from './window.ts';

/** Pages a mutable dataset from its checkpoint to the pinned block. */
export async function pageMutable(run: TaskRun, cursor: Cursor): Promise<void> {
  const block = run.block;
  const watermark: Cursor = { mode: 'incremental', seq: String(block.timestamp) };
  if (cursor.mode !== 'incremental') {
    // First run (or an interrupted one): a full pass by id, resumable from the last committed id. It reads every row,
    // those with a null updatedAt included. A pass resumed at another block (by a later run, or by this one when the
    // deployment pruned its block: `moved-floor.ts`) read its first rows at an earlier block: it ends at the block and
    // time it began at, then reads what changed since then as an incremental pass does, window included. A pass begun
    // by an older version, which did not note where it began, ends at this run's block, as it did then.
    const began = cursor.mode === 'full' && cursor.began ? cursor.began : { block: block.number, ts: block.timestamp };
    const progress = (id: string): Cursor => ({ mode: 'full', id, began, block: began.block });
    const resumed = began.block !== block.number;
    const since: Cursor = { mode: 'incremental', seq: String(began.ts), block: began.block };
    await pageById(run, {
      pass: { shape: 'id' },
      startId: cursor.id ?? firstId(run.task.ds),
      replace: { kind: 'ids' },
      finish: resumed ? since : watermark,
      progress,
    });
    if (resumed) await pageChanged(run, since, { windowSecs: run.deps.config.reorgWindowSecs });
    return;
  }
  await pageChanged(run, cursor, { windowSecs: run.deps.config.reorgWindowSecs, settled: run.pin.settled });
}

/** An incremental pass from `cursor` to the pinned block: the rows changed since, then the window's ids checked. */
async function pageChanged(run: TaskRun, cursor: Cursor, w: Window): Promise<void> {
  const block = run.block;
  const watermark: Cursor = { mode: 'incremental', seq: String(block.timestamp) };
  // Incremental. Upserts are idempotent: every batch keeps the old watermark, which only the last commit moves, so a
  // crash re-reads rather than skips. updatedAt alone cannot be trusted: the upstream's mappings never set it on
  // maintainer fees and earnings, LP tokens get it only from a later liquidity event, and an LP token's supply changes
  // without it (DODOEX/dodoex_v2_subgraph 0eb5baca, src/mappings/dodoex/classicPoolFromV1.ts, helpers.ts
  // createLpToken); graph-node's `updatedAt_gte` never matches a null. So every row changed since the last run's
  // block is read by `_change_block` where the endpoint has it; otherwise the updatedAt keyset, then every
  // null-updatedAt row. Last, the rows read within the re-read window are checked against the upstream: an entity of
  // a block a reorg reverted is gone there, and goes here too. A task whose last read stands (`routing/reorg-check.ts`)
  // reads from the block after it, and checks nothing: no block it read was reverted.
  const from = presenceFrom(cursor, block, w);
  const keep = () => cursor;
  const since = changedSince(cursor, block, { ...w, changeBlock: run.pin.changeBlock });
  run.watchIds();
  if (since !== undefined || run.task.ds.seq === undefined) {
    // Without `_change_block`, a subgraph's entity with no keyset field is read whole again, by id.
    const pass = since !== undefined ? { shape: 'changed-since' as const, since } : { shape: 'id' as const };
    await pageById(run, {
      pass,
      startId: firstId(run.task.ds),
      replace: { kind: 'ids' },
      finish: cursor,
      progress: keep,
    });
  } else {
    await pageKeyset(run, seqFrom(cursor.seq!, w), keep);
    await pageById(run, {
      pass: { shape: 'null-id' },
      startId: firstId(run.task.ds),
      replace: { kind: 'ids' },
      finish: cursor,
      progress: keep,
    });
  }
  await removeGone(run, from, watermark);
}

/**
 * Asks the upstream which of the rows read at block `from` or later (by earlier runs) it still holds, and deletes the
 * others, committing the new watermark with the deletion. An entity created in a block that a reorg reverted is gone
 * upstream; rows read before `from` predate any reorg the window covers. Without `from` (see `presenceFrom`), nothing
 * is checked.
 */
export async function removeGone(run: TaskRun, from: number | undefined, watermark: Cursor): Promise<void> {
  const { task, deps } = run;
  // The run's batch may have asked already (see `first-pages.ts`), about the same rows: those earlier runs read since
  // `from` (this run's own, which it read, are left out below either way).
  const at = { endpoint: run.endpoint, dataset: task.ds.name, root: run.pin.root, block: run.block.number };
  const known = from === undefined ? undefined : deps.source.knownPresence?.(at);
  const ids =
    from === undefined
      ? []
      : (
          known?.asked ??
          // Rows this run committed at an earlier pin (the deployment pruned it) are asked about too: no run is left out.
          (await deps.checkpoints.idsReadSince(task.chainId, task.ds, {
            from,
            exceptRun: run.pin.moved ? '' : deps.runId,
          }))
        ).filter(
          // A row read again by this run's passes is there; one left as it was keeps the run that wrote it.
          (id) => !run.wasRead(id),
        );
  const gone: string[] = [];
  const query = presentQuery(run.pin.root, task.ds);
  const chunk = run.size;
  if (known) for (const id of ids) if (!known.held.has(id)) gone.push(id);
  for (let i = 0; i < (known ? 0 : ids.length); i += chunk) {
    const asked = ids.slice(i, i + chunk);
    const vars = { block: run.block.number, ids: asked, first: asked.length };
    const present = new Set((await run.fetch<{ rows: { id: string }[] }>(query, vars)).rows.map((r) => r.id));
    for (const id of asked) if (!present.has(id)) gone.push(id);
  }
  if (gone.length) {
    const fields = { dataset: task.ds.name, chainId: task.chainId, count: gone.length, ids: gone.slice(0, 5) };
    deps.log('gone-upstream', fields, 'warn');
  }
  await run.flush({ next: { block: run.block.number, ...watermark }, replace: { kind: 'gone', ids: gone } });
}
