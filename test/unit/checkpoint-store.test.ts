/** Checkpoint moves by compare-and-set, and shard checkpoints in their own table, on a real DuckDB file. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import {
  type CheckpointKey,
  CheckpointStore,
  checkpointMovesStatement,
  checkpointStatement,
} from '../../src/store/checkpoint-store.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { spyAll } from '../support/statement-spy.ts';

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

  it('several moves in one statement: each moves only its own checkpoint, only from its prev, with its own block and run', async () => {
    const w = await Warehouse.open(dir);
    const shard = (k: number): CheckpointKey => ({
      chainId: 56,
      dataset: 'dodoex.swaps',
      shard: { shard: k, shards: 3 },
    });
    const at = (prev: string, next: string, block: number | null, time: string | null, runId: string) => ({
      prev,
      next,
      block: { number: block, time },
      runId,
    });
    const cursors = async () =>
      (
        await w.all(
          "SELECT shard, cursor, block, strftime(block_time AT TIME ZONE 'UTC', '%Y-%m-%d %H:%M') AS t, run_id FROM _pool_export.shard_checkpoints WHERE dataset = 'dodoex.swaps' ORDER BY shard",
        )
      ).map((r) => `${r.shard}:${r.cursor}@${r.block}/${r.t}/${r.run_id}`);
    try {
      for (const k of [1, 2, 3]) {
        const s = checkpointStatement(shard(k), move(null, `c${k}`));
        await w.exec(s.sql, s.params);
      }
      // Another dataset's shard 1 at the same cursor is not touched.
      const other = checkpointStatement({ ...shard(1), dataset: 'dodoex.pairs' }, move(null, 'c1'));
      await w.exec(other.sql, other.params);
      const both = checkpointMovesStatement([
        { key: shard(1), move: at('c1', 'd1 \'quoted\' "x"', 9, '2026-02-03T04:05:00Z', 'r2') },
        { key: shard(3), move: at('c3', 'd3', null, null, 'r3') },
      ]);
      expect(await w.exec(both.sql, both.params)).toBe(2);
      expect(await cursors()).toEqual([
        `1:d1 'quoted' "x"@9/2026-02-03 04:05/r2`,
        '2:c2@7/2026-01-01 00:00/r',
        '3:d3@null/null/r3',
      ]);
      expect(
        (await w.all("SELECT cursor FROM _pool_export.shard_checkpoints WHERE dataset = 'dodoex.pairs'"))[0]?.cursor,
      ).toBe('c1');
      // One stale move among them: only the others move, and the count says so.
      const stale = checkpointMovesStatement([
        { key: shard(2), move: at('c2', 'e2', 10, null, 'r4') },
        { key: shard(3), move: at('old', 'e3', 10, null, 'r4') },
      ]);
      expect(await w.exec(stale.sql, stale.params)).toBe(1);
      expect((await cursors()).map((c) => c.split('@')[0])).toEqual([`1:d1 'quoted' "x"`, '2:e2', '3:d3']);
      // The datasets' own checkpoints, in their table.
      const own = checkpointStatement({ chainId: 1, dataset: 'dodoex.swaps' }, move(null, 'o'));
      await w.exec(own.sql, own.params);
      const ownMove = checkpointMovesStatement([
        { key: { chainId: 1, dataset: 'dodoex.swaps' }, move: at('o', 'o+', 11, null, 'r5') },
        { key: { chainId: 56, dataset: 'dodoex.swaps' }, move: at('o', 'o+', 11, null, 'r5') },
      ]);
      expect(await w.exec(ownMove.sql, ownMove.params)).toBe(1);
      expect((await new CheckpointStore(w).get(1, 'dodoex.swaps'))?.cursor).toBe('o+');
      expect(() => checkpointMovesStatement([{ key: shard(1), move: move(null, 'x') }])).toThrow(/existing checkpoint/);
      // Any one move from no checkpoint, or a shard's move among a dataset's own, is refused with the others.
      expect(() =>
        checkpointMovesStatement([
          { key: shard(1), move: move('a', 'b') },
          { key: shard(2), move: move(null, 'x') },
        ]),
      ).toThrow(/each from an existing checkpoint/);
      for (const keys of [
        [shard(1), { chainId: 56, dataset: 'dodoex.swaps' }],
        [{ chainId: 56, dataset: 'dodoex.swaps' }, shard(1)],
      ] as CheckpointKey[][])
        expect(() => checkpointMovesStatement(keys.map((key) => ({ key, move: move('a', 'b') })))).toThrow(
          /moves of one table/,
        );
      expect(() =>
        checkpointMovesStatement([
          { key: shard(1), move: move('a', 'b') },
          { key: shard(1), move: move('b', 'c') },
        ]),
      ).toThrow(/one move per checkpoint/);
    } finally {
      await w.close();
    }
  });

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

  it('preload reads every checkpoint in one statement, answers each task once from it, and keeps a block left empty', async () => {
    const w = await Warehouse.open(dir);
    try {
      for (const [chainId, dataset, next] of [
        [56, 'dodoex.swaps', 's1'],
        [1, 'dodoex.pairs', 'p1'],
      ] as const) {
        const s = checkpointStatement({ chainId, dataset }, move(null, next));
        await w.exec(s.sql, s.params);
      }
      // A checkpoint an older version wrote without its block.
      await w.exec("UPDATE _pool_export.checkpoints SET block = NULL WHERE dataset = 'dodoex.pairs'");
      const store = new CheckpointStore(w);
      await store.preload();
      const asked = spyAll(w);
      expect(await store.get(56, 'dodoex.swaps')).toEqual({ cursor: 's1', block: 7 });
      expect(await store.get(1, 'dodoex.pairs')).toEqual({ cursor: 'p1', block: null });
      expect(await store.get(1, 'dodoex.swaps')).toBeUndefined();
      // Two answered from the preload; the one it did not hold, and one asked again, read the warehouse.
      expect(await store.get(56, 'dodoex.swaps')).toEqual({ cursor: 's1', block: 7 });
      expect(asked.length).toBe(2);
    } finally {
      await w.close();
    }
  });
  it('reads the window rows of many tables and chains in one statement, each chain its own ids in id order', async () => {
    const w = await Warehouse.open(dir);
    try {
      const [pairs, tokens] = [findDataset('dodoex.pairs')!, findDataset('dodoex.tokens')!];
      // A subgraph's table of Int8 ids (BIGINT): its ids keep their numeric order, not the text order of the others.
      const counters = {
        ...pairs,
        name: 'dodoex.counters',
        table: 'dodoex.counters',
        idType: 'Int8' as const,
        columns: pairs.columns.map((c) => (c.field === 'id' ? { ...c, cls: 'int8' as const } : c)),
      };
      await w.ensureTables([pairs, tokens, counters]);
      expect(
        (
          await w.all(
            `SELECT data_type AS t FROM duckdb_columns() WHERE table_name = 'counters' AND column_name = 'id'`,
          )
        )[0]?.t,
      ).toBe('BIGINT');
      for (const id of [10, 9, 100])
        await w.exec(`INSERT INTO dodoex.counters (id, chain_id, _block, _run_id) VALUES ($1, 56, 100, 'old')`, [id]);
      // [table, chain, id, block, run]: what each chain's window (from its block on, other runs') holds is listed below.
      for (const [table, chain, id, block, run] of [
        ['pairs', 56, 'p3', 120, 'old'],
        ['pairs', 56, 'p1', 100, 'old'],
        ['pairs', 56, 'p0', 99, 'old'],
        ['pairs', 56, 'p2', 130, 'now'],
        ['pairs', 1, 'e1', 50, 'old'],
        ['pairs', 1, 'e2', 49, 'old'],
        ['tokens', 56, 't1', 100, 'old'],
        ['tokens', 137, 't9', 500, 'old'],
      ] as const)
        await w.exec(`INSERT INTO dodoex.${table} (id, chain_id, _block, _run_id) VALUES ($1, $2, $3, $4)`, [
          id,
          chain,
          block,
          run,
        ]);
      const store = new CheckpointStore(w);
      const asked = spyAll(w);
      const ids = await store.idsReadSinceAll(
        [
          { chainId: 56, ds: pairs, from: 100 },
          { chainId: 1, ds: pairs, from: 50 },
          { chainId: 56, ds: tokens, from: 101 },
          { chainId: 56, ds: counters, from: 100 },
        ],
        'now',
      );
      expect(Object.fromEntries(ids)).toEqual({
        '56/dodoex.pairs': ['p1', 'p3'],
        '1/dodoex.pairs': ['e1'],
        '56/dodoex.tokens': [],
        '56/dodoex.counters': ['9', '10', '100'],
      });
      // One statement for the tables of text ids, one for those of Int8 ids.
      expect(asked.length).toBe(2);
      // The same as each asked apart.
      expect(await store.idsReadSince(56, pairs, { from: 100, exceptRun: 'now' })).toEqual(['p1', 'p3']);
    } finally {
      await w.close();
    }
  });
});
