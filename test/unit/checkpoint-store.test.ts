/** Checkpoint moves by compare-and-set, and shard checkpoints in their own table, on a real DuckDB file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CheckpointKey, CheckpointStore, checkpointStatement } from '../../src/store/checkpoint-store.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pe-cp-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const move = (prev: string | null, next: string) => ({
  prev,
  next,
  block: { number: 7, time: '2026-01-01T00:00:00Z' },
  runId: 'r',
});

describe('checkpoint moves', () => {
  for (const key of [
    { chainId: 56, dataset: 'dodoex.swaps' },
    { chainId: 56, dataset: 'dodoex.swaps', shard: { shard: 2, shards: 4 } },
  ] as CheckpointKey[]) {
    it(`change one row from the expected checkpoint and none from another (${key.shard ? 'a shard' : 'a dataset'})`, async () => {
      const w = await Warehouse.open(dir);
      const run = async (prev: string | null, next: string) => {
        const s = checkpointStatement(key, move(prev, next));
        return w.exec(s.sql, s.params);
      };
      try {
        expect(await run(null, 'a')).toBe(1);
        // A second writer that also saw no checkpoint, or saw an older one, moves nothing (and raises nothing).
        expect(await run(null, 'b')).toBe(0);
        expect(await run('x', 'b')).toBe(0);
        expect(await run('a', 'b')).toBe(1);
        const store = new CheckpointStore(w);
        if (key.shard) expect(await store.shards(56, 'dodoex.swaps')).toEqual([{ shard: 2, shards: 4, cursor: 'b' }]);
        else expect((await store.get(56, 'dodoex.swaps'))?.cursor).toBe('b');
      } finally {
        await w.close();
      }
    });
  }

  it('moves the shard rows older versions kept in checkpoints to shard_checkpoints when the warehouse opens', async () => {
    let w = await Warehouse.open(dir);
    await w.exec(`INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, block) VALUES
      (56, 'dodoex.swaps#1/4', '{"lo":"1"}', 5), (56, 'dodoex.swaps#3/4', '{"lo":"3"}', 6), (1, 'dodoex.swaps', '{"seq":"9"}', 7)`);
    await w.close();
    w = await Warehouse.open(dir);
    try {
      expect(await new CheckpointStore(w).shards(56, 'dodoex.swaps')).toEqual([
        { shard: 1, shards: 4, cursor: '{"lo":"1"}' },
        { shard: 3, shards: 4, cursor: '{"lo":"3"}' },
      ]);
      expect(await w.all('SELECT chain_id, dataset FROM _pool_export.checkpoints')).toEqual([
        { chain_id: 1, dataset: 'dodoex.swaps' },
      ]);
    } finally {
      await w.close();
    }
  });
});
