/**
 * `runTask` against in-memory fakes (test/support/task-fakes.ts) for mutable entities: the stored rows checked against
 * the subgraph's own rows at the block read.
 */
import { describe, expect, it } from 'vitest';
import { changedSince, presenceFrom } from '../../src/export/paginate/window.ts';
import { failure, run } from '../support/by-kind-run.ts';
import { expectedRows, type FakeRow, FakeSubgraph, FakeWarehouse, fakeDataset, pinAt } from '../support/task-fakes.ts';

describe('mutable entities', () => {
  const mutableRows = (n: number): FakeRow[] =>
    Array.from({ length: n }, (_, i) => ({
      id: `0x${String(i).padStart(4, '0')}`,
      seq: i % 10 === 0 ? null : 5000 + i,
      value: `v${i}`,
      changed: 50,
    }));

  /** A mutable dataset of `n` rows, exported once at block 100 (time 9000). */
  const exportedOnce = async (n: number) => {
    const ds = fakeDataset('mutable');
    const src = new FakeSubgraph(ds);
    src.rows = mutableRows(n);
    const wh = new FakeWarehouse(ds);
    await run(src, wh, { pageSize: 100 }, pinAt(100, 9000));
    return { ds, src, wh };
  };

  for (const changeBlock of [true, false]) {
    it(`reads every row first, then ${changeBlock ? 'the rows changed since the last block (_change_block)' : 'the updatedAt keyset and the null-updatedAt rows'}`, async () => {
      const ds = fakeDataset('mutable');
      const src = new FakeSubgraph(ds);
      src.rows = mutableRows(450);
      const wh = new FakeWarehouse(ds);
      const first = await run(src, wh, { pageSize: 100, batchRows: 200 }, pinAt(100, 9000, changeBlock));
      expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
      expect(JSON.parse(first.cursor!)).toEqual({ block: 100, mode: 'incremental', seq: '9000' });
      // Changes between the runs: updatedAt moved on some rows; others changed with a null updatedAt (which the real
      // mappings leave on maintainer fees) and are found by _change_block, or else by the null pass.
      for (const r of src.rows.slice(0, 60)) {
        r.value = `changed-${r.id}`;
        r.changed = 150;
        if (r.seq !== null) r.seq = 9100;
      }
      // Pages of 20: the changed rows come in several batches, each of which must replace the stored rows of its ids.
      const second = await run(
        src,
        wh,
        { pageSize: 20, batchRows: 20, reorgWindowSecs: 60 },
        pinAt(200, 9500, changeBlock),
      );
      expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
      expect(JSON.parse(second.cursor!)).toEqual({ block: 200, mode: 'incremental', seq: '9500' });
      expect(second.stats.rows).toBeLessThan(450);
    });
  }

  it('deletes rows whose entities a reorg removed upstream, among those read within the re-read window', async () => {
    const { ds, src, wh } = await exportedOnce(450);
    // A reorg reverted the blocks that created some entities: the upstream no longer has them.
    const removed = new Set(src.rows.filter((_, i) => i % 37 === 5).map((r) => r.id));
    src.rows = src.rows.filter((r) => !removed.has(r.id));
    const r = await run(src, wh, { pageSize: 100, reorgWindowSecs: 60 }, pinAt(200, 9500));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    // One line at warn, with the count and the first five ids (rows 5, 42, 79, 116 and 153 of the 13).
    expect(removed.size).toBe(13);
    expect(r.events.filter((e) => e.event === 'gone-upstream')).toEqual([
      {
        event: 'gone-upstream',
        fields: { dataset: ds.name, chainId: 56, count: 13, ids: ['0x0005', '0x0042', '0x0079', '0x0116', '0x0153'] },
        level: 'warn',
      },
    ]);
    // The ids were asked for in pages the size of the page, each asked with first = its length: none cut short.
    const idPages = wh.batches.at(-1)!.replace;
    expect(idPages).toEqual({ kind: 'gone', ids: [...removed].sort() });
    // A run that finds none gone says nothing of it.
    const third = await run(src, wh, { pageSize: 100, reorgWindowSecs: 60 }, pinAt(300, 9600));
    expect(third.events.filter((e) => e.event === 'gone-upstream')).toEqual([]);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    // At the same block again, no block can have been reverted: no id is asked for, and nothing is gone.
    const asked = src.asked.length;
    const fourth = await run(src, wh, { pageSize: 100, reorgWindowSecs: 60 }, pinAt(300, 9600));
    expect(fourth.events.filter((e) => e.event === 'gone-upstream')).toEqual([]);
    expect(wh.batches.at(-1)!.replace).toEqual({ kind: 'gone', ids: [] });
    expect(src.asked.slice(asked).filter((v) => 'ids' in v)).toEqual([]);
  });

  it('a full pass over rows stored already (a checkpoint lost, the rows kept) replaces them by id, none twice', async () => {
    const { ds, src, wh } = await exportedOnce(150);
    wh.checkpoints.delete(ds.name);
    src.rows[3]!.value = 'changed';
    const r = await run(src, wh, { pageSize: 100 }, pinAt(200, 9500));
    expect(r.stats.rows).toBe(150);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    expect(wh.batches.at(-1)!.replace).toEqual({ kind: 'ids' });
  });

  it('an incremental run that fails half-way leaves the last run’s watermark in its checkpoint', async () => {
    const { ds, src, wh } = await exportedOnce(450);
    for (const r of src.rows.slice(0, 100)) {
      r.value = `changed-${r.id}`;
      r.changed = 150;
      if (r.seq !== null) r.seq = 9100;
    }
    // The second batch of the next run fails. Those it committed (the first, and those in flight beside the failed
    // one) each kept the first run's watermark, 9000: the next run reads every change since then again.
    const before = wh.batches.length;
    wh.failAt = before + 2;
    await failure(run(src, wh, { pageSize: 20, batchRows: 20 }, pinAt(200, 9500, true)));
    const committed = wh.batches.slice(before).map((b) => JSON.parse(b.checkpoint.next));
    expect(committed.length).toBeGreaterThan(0);
    expect(committed.filter((c) => c.mode !== 'incremental' || c.seq !== '9000')).toEqual([]);
    expect(JSON.parse(wh.checkpoints.get(ds.name)!)).toMatchObject({ mode: 'incremental', seq: '9000' });
    // Read again from there, the next run is exact.
    await run(src, wh, { pageSize: 20, batchRows: 20 }, pinAt(200, 9500, true));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });

  for (const answers of ['pages kept as they came', 'answers the checker leaves to the task (extensions beside data)'])
    it(`asks the upstream only for the window rows it did not read again: one read again unchanged is there, though it keeps its run (${answers})`, async () => {
      const { ds, src, wh } = await exportedOnce(450);
      // 60 rows change at block 150; the run at block 200 reads them in its window (from block 87) and stores them.
      const changed = src.rows.slice(0, 60);
      for (const r of changed) {
        r.value = `changed-${r.id}`;
        r.changed = 150;
      }
      await run(src, wh, { pageSize: 100, reorgWindowSecs: 60 }, pinAt(200, 9500));
      const second = new Map(changed.map((r) => [r.id, wh.readAt.get(r.id)!.runId]));
      // The next run's window reaches back past block 150: its pass reads every row again, and none changed.
      if (answers.startsWith('answers')) src.extensions = { cost: 1 };
      const before = src.asked.length;
      const third = await run(src, wh, { pageSize: 100, reorgWindowSecs: 600 }, pinAt(210, 9510));
      expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
      // Every row was read by the pass (_change_block from 0), so none is asked for by id.
      const asked = src.asked.slice(before);
      expect(asked.filter((v) => Array.isArray(v.ids))).toEqual([]);
      expect(third.stats.rows).toBe(450);
      // The rows kept the run that wrote them.
      expect(new Map(changed.map((r) => [r.id, wh.readAt.get(r.id)!.runId]))).toEqual(second);
    });

  it('resumes an interrupted full pass from the last committed id', async () => {
    const ds = fakeDataset('mutable');
    const src = new FakeSubgraph(ds);
    src.rows = mutableRows(700);
    const wh = new FakeWarehouse(ds);
    wh.failAt = 3;
    await failure(run(src, wh, { pageSize: 100, batchRows: 200 }));
    expect(JSON.parse(wh.checkpoints.get(ds.name)!)).toEqual({
      block: 100,
      mode: 'full',
      id: '0x0399',
      began: { block: 100, ts: 10_000 },
    });
    const r = await run(src, wh, { pageSize: 100, batchRows: 200 });
    expect(r.stats.rows).toBe(300);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });

  for (const changeBlock of [true, false])
    it(`a full pass resumed at a later block reads what changed since it began, in the same run (${changeBlock ? '_change_block' : 'updatedAt'})`, async () => {
      const ds = fakeDataset('mutable');
      const src = new FakeSubgraph(ds);
      src.rows = mutableRows(700);
      const wh = new FakeWarehouse(ds);
      wh.failAt = 3;
      await failure(run(src, wh, { pageSize: 100, batchRows: 200 }, pinAt(100, 10_000, changeBlock)));
      // Rows the cut pass read change before it resumes at block 130 (a later run, or a pin moved above a pruned
      // block): the pass reads them again, and ends at its new block.
      const read = new Set(wh.rowsById().keys());
      expect(read.size).toBe(400);
      for (const r of src.rows.filter((x) => read.has(x.id)).slice(0, 50)) {
        r.value = `changed-${r.id}`;
        r.changed = 120;
        if (r.seq !== null) r.seq = 10_200;
      }
      const r = await run(src, wh, { pageSize: 100, batchRows: 200 }, pinAt(130, 10_400, changeBlock));
      expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
      expect(JSON.parse(r.cursor!)).toEqual({ block: 130, mode: 'incremental', seq: '10400' });
    });

  it('changedSince re-reads the window in blocks at the pace seen between two runs', () => {
    // 100 blocks in 500 s: 0.2 a second; a 60 s window is 12 blocks before the last run's block 1000.
    expect(
      changedSince(
        { block: 1000, seq: '5000' },
        { number: 1100, timestamp: 5500 },
        { changeBlock: true, windowSecs: 60 },
      ),
    ).toBe(987);
    expect(
      changedSince(
        { block: 1000, seq: '5000' },
        { number: 1100, timestamp: 5500 },
        { changeBlock: false, windowSecs: 60 },
      ),
    ).toBeUndefined();
    expect(
      changedSince({ seq: '5000' }, { number: 1100, timestamp: 5500 }, { changeBlock: true, windowSecs: 60 }),
    ).toBeUndefined();
  });

  it('changedSince takes 10 blocks a second where no pace was seen; presenceFrom asks at the same height too', () => {
    const window = (cursor: { block?: number; seq?: string }, number: number, timestamp: number) =>
      changedSince(cursor, { number, timestamp }, { changeBlock: true, windowSecs: 60 });
    // No block passed in 600 s, or 100 blocks in no time: 60 s at 10 blocks a second is 600 blocks, 1 more.
    expect(window({ block: 1000, seq: '5000' }, 1000, 5600)).toBe(399);
    expect(window({ block: 1000, seq: '5000' }, 1100, 5000)).toBe(399);
    // Never before block 0; a cursor without its time has no pace to start from.
    expect(window({ block: 50, seq: '5000' }, 60, 5000)).toBe(0);
    expect(window({ block: 1000 }, 1100, 5500)).toBeUndefined();
    // Which rows of earlier runs are still upstream is asked at the same height too (a reorganisation to the same
    // height), over the window at the fastest pace.
    expect(presenceFrom({ block: 1000, seq: '5000' }, { number: 1000, timestamp: 5600 }, { windowSecs: 60 })).toBe(399);
    expect(presenceFrom({ block: 1000, seq: '5000' }, { number: 1100, timestamp: 5500 }, { windowSecs: 60 })).toBe(987);
    expect(presenceFrom({ seq: '5000' }, { number: 1100, timestamp: 5500 }, { windowSecs: 60 })).toBeUndefined();
  });
});
