/**
 * `runTask` against in-memory fakes (test/support/task-fakes.ts), its progress and a sharded backfill: the stored rows
 * checked against the subgraph's own rows.
 */
import { describe, expect, it } from 'vitest';
import { failure, rowsOf, run } from '../support/by-kind-run.ts';
import { expectedRows, type FakeRow, FakeSubgraph, FakeWarehouse, fakeDataset, pinAt } from '../support/task-fakes.ts';

describe('progress', () => {
  it('reports per page the share of the time range covered by its last row, at most the whole, none for an empty page', async () => {
    const ds = fakeDataset('event');
    const fractions = async (rows: FakeRow[]) => {
      const src = new FakeSubgraph(ds);
      src.rows = rows;
      const seen: [number, number | undefined][] = [];
      await run(src, new FakeWarehouse(ds), {
        pageSize: 100,
        onPage: (_task, stats, fraction) => seen.push([stats.pages, fraction]),
      });
      return seen;
    };
    // Keys 1000 to 1099 (three rows each), read from 0 up to the pinned time 10,000.
    const pages = [
      [1, 0.1033],
      [2, 0.1066],
      [3, 0.1099],
    ];
    expect(await fractions(rowsOf(300))).toEqual([...pages, [4, undefined]]);
    // A row stamped after the pinned time counts as the end.
    expect(await fractions([...rowsOf(300), { id: '0xfff', seq: 20_000, value: 'late', changed: 1 }])).toEqual([
      ...pages,
      [4, 1],
    ]);
  });

  it('measures an incremental run from its checkpoint’s key, and reports none for a range already past', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(300);
    const wh = new FakeWarehouse(ds);
    await run(src, wh, { pageSize: 100 });
    // Keys 1100 to 1199 come next (three rows each); the run reads from the last key stored, 1099, up to the pinned
    // time 2099: a range of 1000.
    src.rows = [...rowsOf(300), ...rowsOf(300, 1100)];
    const measured = async (time: number) => {
      const seen: [number, number | undefined][] = [];
      await run(src, wh, { pageSize: 100, onPage: (_t, stats, f) => seen.push([stats.pages, f]) }, pinAt(100, time));
      return seen;
    };
    // 3 rows of 1099 and 97 new: the 97th is of key 1132, 33 of the 1000 from 1099. Then keys 1165 and 1198, and the
    // last three rows, of 1199.
    expect(await measured(2099)).toEqual([
      [1, 0.033],
      [2, 0.066],
      [3, 0.099],
      [4, 0.1],
    ]);
    // Read again from 1199 with the pinned time at 1199: no range to measure, so no share (not a division by zero).
    expect(await measured(1199)).toEqual([[1, undefined]]);
  });

  it('reports none for a dataset without a keyset', async () => {
    const ds = fakeDataset('snapshot');
    const src = new FakeSubgraph(ds);
    src.rows = [{ id: '0x1', seq: null, value: 'v', changed: 1 }];
    const seen: (number | undefined)[] = [];
    await run(src, new FakeWarehouse(ds), { onPage: (_t, _s, fraction) => seen.push(fraction) });
    expect(seen).toEqual([undefined]);
  });
});

describe('sharded backfill', () => {
  it('splits the first backfill into shards with checkpoints of their own, resumes a failed one, and merges them', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(2000);
    const wh = new FakeWarehouse(ds);
    wh.failAt = 6;
    await failure(run(src, wh, { pageSize: 100, batchRows: 400, shards: 4 }));
    // No page file is left: not the probe's, which the shards read again, nor those of the failed shard.
    expect(wh.keptPages()).toEqual([]);
    // Every committed batch so far moved a shard's checkpoint, never the dataset's own.
    expect(wh.checkpoints.size).toBe(0);
    expect([...wh.shardCheckpoints.values()].every((s) => s.shards === 4)).toBe(true);
    expect(wh.shardCheckpoints.size).toBeGreaterThanOrEqual(2);
    // Resumed at a later block: the merged checkpoint keeps the block the first shards were read at, so the next run
    // does not take what they read for checked by this run's head (`routing/reorg-check.ts`).
    // A row written after the range was cut (at block 100's time, 10,000) and before the resumed run's block.
    src.rows.push({ id: '0xwritten-since', seq: 10_300, value: 'since', changed: 120 });
    const r = await run(src, wh, { pageSize: 100, batchRows: 400, shards: 4 }, pinAt(130, 10_400));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    expect(wh.shardCheckpoints.size).toBe(0);
    // The merge, then (the range was cut at block 100's time) the rows written since, read on from its checkpoint.
    expect(wh.batches.filter((b) => b.mergeShards)).toHaveLength(1);
    expect(wh.batches.at(-1)!.mergeShards).toBeUndefined();
    const last = [...src.rows].sort((a, b) => Number(a.seq) - Number(b.seq) || (a.id < b.id ? -1 : 1)).pop()!;
    expect(last.id).toBe('0xwritten-since');
    expect(JSON.parse(r.cursor!)).toMatchObject({ seq: String(last.seq), id: last.id, block: 100 });
    // Later runs page the keyset from the merged checkpoint.
    src.rows.push({ id: '0xlate', seq: Number(last.seq) + 1, value: 'late', changed: 3 });
    await run(src, wh, { pageSize: 100, batchRows: 400, shards: 4 });
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });

  it('cuts the range from the first row to the pinned time into equal shards, each replacing only its own range', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    // Keys 1000 to 1666, pinned at 1666: the range [1000, 1667) in four parts of 166.75, floored.
    src.rows = rowsOf(2001);
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100, batchRows: 400, shards: 4 }, pinAt(100, 1666));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    const firsts = new Map<number, unknown>();
    for (const b of wh.batches)
      if (b.checkpoint.shard && !firsts.has(b.checkpoint.shard.shard)) firsts.set(b.checkpoint.shard.shard, b.replace);
    expect([...firsts].sort(([a], [b]) => a - b)).toEqual([
      [1, { kind: 'range', column: 'timestamp', from: '1000', to: '1166' }],
      [2, { kind: 'range', column: 'timestamp', from: '1166', to: '1333' }],
      [3, { kind: 'range', column: 'timestamp', from: '1333', to: '1500' }],
      [4, { kind: 'range', column: 'timestamp', from: '1500', to: '1667' }],
    ]);
    // Each shard commits once it holds a quarter of batchRows (a page of 100 here), then replaces nothing more.
    const shardBatches = wh.batches.filter((b) => b.checkpoint.shard);
    expect(shardBatches.every((b) => b.count <= 100)).toBe(true);
    expect(shardBatches.filter((b) => b.replace.kind === 'range')).toHaveLength(4);
    // The merge: the dataset's checkpoint is the last row of the last shard, at the pinned block.
    expect(JSON.parse(r.cursor!)).toEqual({ seq: '1666', id: src.rows[2000]!.id, block: 100 });
    expect(wh.batches.at(-1)).toMatchObject({
      count: 0,
      pages: [],
      rows: [],
      replace: { kind: 'none' },
      mergeShards: true,
    });
    expect(r.stats.rewriteFrom).toBe(1000);
  });

  it('a shard whose last page comes back empty keeps its last row, and the merge ends the dataset there', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    // Keys 1000 to 1399, pinned at 1399: two shards [1000, 1200) and [1200, 1400) of 600 rows each, six full pages
    // and then an empty one that ends the shard.
    src.rows = rowsOf(1200);
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100, batchRows: 400, shards: 2 }, pinAt(100, 1399));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    expect(src.firsts.filter((n) => n === 100)).toHaveLength(1 + 2 * 7);
    const last = [...src.rows].sort((a, b) => Number(a.seq) - Number(b.seq) || (a.id < b.id ? -1 : 1)).pop()!;
    expect(last.seq).toBe(1399);
    expect(JSON.parse(r.cursor!)).toEqual({ seq: '1399', id: last.id, block: 100 });
  });

  it('a resumed shard re-reads the reorg window before its checkpoint, never below its own start', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(2001);
    const wh = new FakeWarehouse(ds);
    wh.failAt = 3;
    await failure(run(src, wh, { pageSize: 100, batchRows: 200, shards: 2 }, pinAt(100, 1666)));
    const stood = new Map(
      [...wh.shardCheckpoints].map(([k, v]) => [k, JSON.parse(v.cursor) as { lo: string; seq?: string }]),
    );
    const before = wh.batches.length;
    await run(src, wh, { pageSize: 100, batchRows: 200, shards: 2, reorgWindowSecs: 20 }, pinAt(100, 1666));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    const resumed = wh.batches.slice(before).filter((b) => b.replace.kind === 'range');
    const want = [1, 2]
      .filter((k) => !(stood.get(k) as { done?: boolean } | undefined)?.done)
      .map((k) => {
        const c = stood.get(k);
        const lo = k === 1 ? 1000 : 1333;
        const from = c?.seq === undefined ? lo : Math.max(lo, Number(c.seq) - 20);
        return { kind: 'range', column: 'timestamp', from: String(from), to: k === 1 ? '1333' : '1667' };
      });
    expect(resumed.map((b) => b.replace)).toEqual(want);
    // Here shard 1 stood at 1033 and shard 2 was done: shard 1 resumes at 1013.
    expect(want).toEqual([{ kind: 'range', column: 'timestamp', from: '1013', to: '1333' }]);
  });

  it('takes a dataset smaller than one page in that page', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(40);
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100, shards: 4 });
    expect(r.stats.requests).toBe(1);
    expect(wh.shardCheckpoints.size).toBe(0);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });
});
