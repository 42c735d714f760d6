/**
 * What `verify` may check of a dataset, from its checkpoint and the ledger (hand-written rows in a real warehouse):
 * after a task that ended well, every row up to its block; after one that did not, the days before its cursor; during
 * a first backfill, nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { scopeOf } from '../../src/verify/scope.ts';

const D = 86_400;
let dir: string;
let w: Warehouse;
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'verify-scope-'));
  w = await Warehouse.open(dir);
});
afterAll(async () => {
  await w?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A checkpoint of `dataset` on chain 56 at block 900 (its time `time`), moved by `run` whose task ended `status`. */
async function at(dataset: string, c: { cursor: object; time: number; run: string; status?: string }): Promise<void> {
  await w.exec('DELETE FROM _pool_export.checkpoints');
  await w.exec('DELETE FROM _pool_export.run_tasks');
  await w.exec(
    'INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, block, block_time, run_id) VALUES (56, $1, $2, 900, to_timestamp($3), $4)',
    [dataset, JSON.stringify(c.cursor), c.time, c.run],
  );
  // An older run's task of the same dataset, which ended well: only the checkpoint's own run counts.
  await w.exec(
    "INSERT INTO _pool_export.run_tasks (run_id, chain_id, dataset, started_at, ended_at, status) VALUES ('older', 56, $1, now(), now(), 'ok')",
    [dataset],
  );
  if (c.status)
    await w.exec(
      'INSERT INTO _pool_export.run_tasks (run_id, chain_id, dataset, started_at, ended_at, status) VALUES ($1, 56, $2, now(), now(), $3)',
      [c.run, dataset, c.status],
    );
}

describe('the rows verify may check', () => {
  const swaps = findDataset('dodoex.swaps')!;
  const days = findDataset('dodoex.pair_day_datas')!;
  const tokens = findDataset('dodoex.tokens')!;

  it('after a task that ended well: all, through the day of its block', async () => {
    await at('dodoex.swaps', {
      cursor: { seq: String(100 * D + 50), id: 'x' },
      time: 101 * D + 7,
      run: 'r1',
      status: 'ok',
    });
    expect(await scopeOf(w, 56, swaps)).toEqual({ block: 900, complete: true, lastDay: 101 * D });
  });

  it('after one that failed or is still running: the days that end before its cursor', async () => {
    await at('dodoex.swaps', {
      cursor: { seq: String(100 * D + 50), id: 'x' },
      time: 101 * D,
      run: 'r2',
      status: 'failed',
    });
    expect(await scopeOf(w, 56, swaps)).toEqual({ block: 900, complete: false, lastDay: 99 * D });
    // A cursor at a day's first second: the day before it is whole.
    await at('dodoex.swaps', { cursor: { seq: String(100 * D), id: 'x' }, time: 101 * D, run: 'r3' });
    expect(await scopeOf(w, 56, swaps)).toEqual({ block: 900, complete: false, lastDay: 99 * D });
    // Buckets: the cursor is the last bucket's date, whose rows may go on.
    await at('dodoex.pair_day_datas', { cursor: { seq: String(100 * D), id: 'x' }, time: 101 * D, run: 'r3' });
    expect(await scopeOf(w, 56, days)).toEqual({ block: 900, complete: false, lastDay: 99 * D });
    // A mutable dataset whose pass did not end: not whole.
    await at('dodoex.tokens', {
      cursor: { mode: 'incremental', id: '0x5' },
      time: 101 * D,
      run: 'r4',
      status: 'failed',
    });
    expect(await scopeOf(w, 56, tokens)).toEqual({ block: 900, complete: false, lastDay: null });
  });

  it('nothing before a first export, or during a first backfill', async () => {
    await w.exec('DELETE FROM _pool_export.checkpoints');
    expect(await scopeOf(w, 56, swaps)).toEqual({ skip: 'it was never exported' });
    await w.exec(
      "INSERT INTO _pool_export.shard_checkpoints (chain_id, dataset, shard, shards, cursor) VALUES (56, 'dodoex.swaps', 1, 4, '{}')",
    );
    expect(await scopeOf(w, 56, swaps)).toEqual({ skip: 'its first backfill is under way' });
  });
});
