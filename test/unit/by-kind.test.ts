/**
 * `runTask` and every paginator against in-memory fakes of the source, sink and checkpoints (test/support/task-fakes.ts):
 * each test checks the stored rows against the subgraph's own rows, an oracle that knows nothing of the paginators.
 */
import { describe, expect, it } from 'vitest';
import { LIST_PAGE_SIZE } from '../../src/catalog/liquidity-list.ts';
import { ConcurrentWriterError, StopRequested, TaskError, UpstreamError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import { changedSince, presenceFrom } from '../../src/export/paginate/window.ts';
import { MIN_PAGE_SIZE } from '../../src/export/routing/routed-requests.ts';
import type { TaskStats } from '../../src/export/task.ts';
import {
  expectedRows,
  type FakeRow,
  FakeSubgraph,
  FakeWarehouse,
  fakeDataset,
  fakeTask,
  type ListAnswer,
  pinAt,
  timeout,
} from '../support/task-fakes.ts';

/** `n` rows whose keys tie in threes (a keyset on the key alone would lose rows at page borders). */
function rowsOf(n: number, start = 1000): FakeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `0x${((i * 7919) % 100_003).toString(16).padStart(6, '0')}`,
    seq: start + Math.floor(i / 3),
    value: `v${i}`,
    changed: 1,
  }));
}

/** Runs the task and returns what it did, or throws its TaskError. */
async function run(
  src: FakeSubgraph,
  wh: FakeWarehouse,
  opts: Parameters<typeof fakeTask>[2] = {},
  pin = pinAt(100, 10_000),
) {
  const { task, deps, events } = fakeTask(src, wh, opts);
  const r = await runTask(task, deps, pin);
  return { stats: r.run.stats, cursor: r.run.cursor, before: r.before, events };
}

/** The TaskError a run fails with. */
async function failure(p: Promise<unknown>): Promise<TaskError<TaskStats>> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(TaskError);
  return e as TaskError<TaskStats>;
}

describe('events and buckets (keyset on seq, id)', () => {
  it('pages every row once across ties at page borders, in batches of batchRows, and ends at the last row', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(1234);
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100, batchRows: 250 });
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    // 13 pages: 12 full and one of 34; a batch is committed once 250 rows are buffered (3 pages), and at the end.
    expect(r.stats).toMatchObject({ pages: 13, rows: 1234, requests: 13, duplicates: 0 });
    expect(wh.batches.map((b) => b.count)).toEqual([300, 300, 300, 300, 34]);
    const last = [...src.rows].sort((a, b) => Number(a.seq) - Number(b.seq) || (a.id < b.id ? -1 : 1)).pop()!;
    expect(JSON.parse(r.cursor!)).toEqual({ block: 100, seq: String(last.seq), id: last.id });
    // The first batch replaces every stored row from the start; the others replace nothing.
    expect(wh.batches.map((b) => b.replace.kind)).toEqual(['from', 'none', 'none', 'none', 'none']);
  });

  it('fails on an answer whose rows are not a list, naming the field, and stores nothing', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(10);
    // A GraphQL answer, but not a page: the page checker gives it back, and the task judges its data.
    src.requestBody = async () => ({ body: Buffer.from('{"data":{"rows":{"id":"a"}}}'), bytes: 28 });
    const wh = new FakeWarehouse(ds);
    const e = await failure(run(src, wh, { pageSize: 100, batchRows: 200 }));
    expect(e.message).toBe(
      `upstream sent invalid data for ${ds.name} on bsc (chain 56), field "rows": expected a list of ${ds.entity} rows, got {"id":"a"}. The subgraph's schema may have changed: run \`pool-export subgraph refresh fake\``,
    );
    expect(wh.batches).toEqual([]);
  });

  it('keeps pages as files, written out again where the answer had white space, and leaves none behind', async () => {
    const ds = fakeDataset('event');
    for (const compact of [true, false]) {
      const src = new FakeSubgraph(ds);
      src.compact = compact;
      src.rows = rowsOf(450);
      const wh = new FakeWarehouse(ds);
      // Each batch file is read back: an answer with white space gives the rows as JSON.stringify writes them.
      const texts: string[] = [];
      const reread = wh.reread.bind(wh);
      const write = wh.write.bind(wh);
      wh.write = async (b) => {
        texts.push(...b.pages.map((p) => reread(p)));
        return write(b);
      };
      await run(src, wh, { pageSize: 100, batchRows: 250 });
      expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
      expect(texts).toHaveLength(5);
      expect(texts.every((t) => t === JSON.stringify(JSON.parse(t)))).toBe(true);
      expect(wh.batches.every((b) => b.rows.length === 0)).toBe(true);
      expect(wh.keptPages()).toEqual([]);
    }
  });

  it('buckets page the same way on an Int key', async () => {
    const ds = fakeDataset('bucket');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(321, 19_000);
    const wh = new FakeWarehouse(ds);
    await run(src, wh, { pageSize: 50, batchRows: 100 });
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });

  it('leaves the checkpoint at the last row when the last page comes back empty (rows a multiple of the page size)', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(600);
    const wh = new FakeWarehouse(ds);
    // 6 full pages, then an empty one that ends the task; the last batch holds pages 5 and 6 and that empty one.
    const r = await run(src, wh, { pageSize: 100, batchRows: 400 });
    expect(src.firsts).toHaveLength(7);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    const last = [...src.rows].sort((a, b) => Number(a.seq) - Number(b.seq) || (a.id < b.id ? -1 : 1)).pop()!;
    expect(JSON.parse(r.cursor!)).toEqual({ block: 100, seq: String(last.seq), id: last.id });
  });

  it('resumes after a failed commit from the last committed batch, re-reading the window, and ends exact', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(1000);
    const wh = new FakeWarehouse(ds);
    wh.failAt = 3;
    const e = await failure(run(src, wh, { pageSize: 100, batchRows: 200, reorgWindowSecs: 5 }));
    expect(e.message).toBe('the disk said no (write 3)');
    expect(e.progress.stats.rows).toBe(400);
    expect(e.progress.cursorBefore).toBeNull();
    const committed = JSON.parse(wh.checkpoints.get(ds.name)!) as { seq: string };
    const r = await run(src, wh, { pageSize: 100, batchRows: 200, reorgWindowSecs: 5 });
    expect(JSON.parse(r.before!)).toEqual(JSON.parse(wh.batches[1]!.checkpoint.next));
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    // The resumed run starts reorgWindowSecs before the checkpoint and replaces every row from there.
    expect(wh.batches[2]!.replace).toEqual({ kind: 'from', column: 'timestamp', from: Number(committed.seq) - 5 });
  });

  it('fetches the next pages while batches commit, at most four at once, and stores nothing after a failed commit', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(1000);
    const wh = new FakeWarehouse(ds);
    // Requests the task made while each commit was running (a commit here ends a turn of the event loop later), and
    // the most commits running at once.
    const during: number[] = [];
    let running = 0;
    let most = 0;
    const write = wh.write.bind(wh);
    wh.write = async (b) => {
      const at = src.requests;
      most = Math.max(most, ++running);
      await new Promise((r) => setImmediate(r));
      const written = await write(b);
      running--;
      during.push(src.requests - at);
      return written;
    };
    await run(src, wh, { pageSize: 100, batchRows: 200 });
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    // Pages came in while the first batch was committing, and the task went on until four commits were running.
    expect(during[0]).toBeGreaterThanOrEqual(2);
    expect(most).toBe(4);
    expect(wh.batches.map((b) => b.count)).toEqual([200, 200, 200, 200, 200, 0]);

    const failing = new FakeWarehouse(ds);
    failing.failAt = 2;
    const e = await failure(run(src, failing, { pageSize: 100, batchRows: 200 }));
    expect(e.message).toBe('the disk said no (write 2)');
    // The commits after the failed one were refused (their checkpoint moves start where it would have left the
    // checkpoint): only the first batch is stored, and the progress counts only its rows.
    expect(failing.batches.map((b) => b.count)).toEqual([200]);
    expect(e.progress.stats.rows).toBe(200);
    expect(failing.rowsById().size).toBe(200);
    expect(failing.keptPages()).toEqual([]);
  });

  it('replaces rows a reorganization changed inside the re-read window, and keeps older ones', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(600);
    const wh = new FakeWarehouse(ds);
    await run(src, wh, { pageSize: 100, reorgWindowSecs: 30 });
    // The last 20 seconds of history are reorganized: rows vanish, others appear with new ids and values.
    const top = Math.max(...src.rows.map((x) => Number(x.seq)));
    const before = new Map(wh.rowsById());
    src.rows = src.rows.filter((x) => Number(x.seq) <= top - 20 || Number(x.seq) % 2 === 0);
    src.rows.push(
      ...Array.from({ length: 17 }, (_, i) => ({ id: `0xreorg${i}`, seq: top - 19 + i, value: `new${i}`, changed: 2 })),
    );
    const gone = [...before.keys()].filter((id) => !src.rows.some((x) => x.id === id));
    expect(gone.length).toBeGreaterThan(0);
    await run(src, wh, { pageSize: 100, reorgWindowSecs: 30 });
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
    for (const id of gone) expect(wh.table.has(id)).toBe(false);
  });

  it('keeps one row per id when the upstream sends an id twice, and counts it', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(150);
    src.repeatNext = [src.rows[0]!.id, src.rows[1]!.id];
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100 });
    expect(r.stats.duplicates).toBe(2);
    expect(r.events.filter((e) => e.event === 'duplicate-ids')).toHaveLength(1);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });
});

describe('two versions of one id in a page (an upstream defect)', () => {
  it('an event keeps the version served last, whatever its key', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(30);
    const first = src.rows.find((r) => r.seq === 1000 && r.id === '0x000000')!;
    src.staleNext.set(first.id, { ...first, seq: 999, value: 'served second' });
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100 });
    const want = expectedRows(ds, src.rows);
    want.set(first.id, { id: first.id, timestamp: '999', value: 'served second' });
    expect(wh.rowsById()).toEqual(want);
    expect(r.stats.duplicates).toBe(1);
    expect(r.events.filter((e) => e.event === 'duplicate-ids').map((e) => e.fields)).toEqual([
      { dataset: 'fake.event', chainId: 56, count: 1, ids: [first.id] },
    ]);
  });

  it('a mutable entity keeps the later updatedAt, a non-null one over null, and the one served last on a tie', async () => {
    const ds = fakeDataset('mutable');
    const src = new FakeSubgraph(ds);
    src.rows = [
      { id: '0xa', seq: 7000, value: 'current a', changed: 1 },
      { id: '0xb', seq: null, value: 'current b', changed: 1 },
      { id: '0xc', seq: 7000, value: 'current c', changed: 1 },
      { id: '0xd', seq: 7000, value: 'current d', changed: 1 },
      { id: '0xe', seq: 7000, value: 'current e', changed: 1 },
      { id: '0xf', seq: 6000, value: 'current f', changed: 1 },
    ];
    src.staleNext = new Map([
      ['0xa', { id: '0xa', seq: 6999, value: 'older a', changed: 1 }],
      ['0xb', { id: '0xb', seq: 5, value: 'dated b', changed: 1 }],
      ['0xc', { id: '0xc', seq: null, value: 'undated c', changed: 1 }],
      ['0xd', { id: '0xd', seq: 7000, value: 'tie d', changed: 1 }],
      ['0xe', { id: '0xe', seq: 7001, value: 'newer e', changed: 1 }],
    ]);
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 100 }, pinAt(100, 9000));
    expect([...wh.rowsById().values()].map((x) => [x.id, x.updatedAt, x.value])).toEqual([
      ['0xa', '7000', 'current a'],
      ['0xb', '5', 'dated b'],
      ['0xc', '7000', 'current c'],
      ['0xd', '7000', 'tie d'],
      ['0xe', '7001', 'newer e'],
      ['0xf', '6000', 'current f'],
    ]);
    expect(r.stats.duplicates).toBe(5);
    // One log line per page, naming at most five ids.
    expect(r.events.filter((e) => e.event === 'duplicate-ids').map((e) => e.fields.ids)).toEqual([
      ['0xa', '0xb', '0xc', '0xd', '0xe'],
    ]);
  });

  it('counts events the upstream sent again in a later batch (an id stored already), and names five of them at warn', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    // Seven ids at keys 1000-1006, served again at keys 1100-1106 with other values, two batches later.
    const ids = ['0x01', '0x02', '0x03', '0x04', '0x05', '0x06', '0x07'];
    src.rows = [
      ...ids.map((id, i) => ({ id, seq: 1000 + i, value: `first ${id}`, changed: 1 })),
      ...rowsOf(13, 1050),
      ...ids.map((id, i) => ({ id, seq: 1100 + i, value: `again ${id}`, changed: 1 })),
    ];
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 10, batchRows: 10 });
    expect(r.stats.duplicates).toBe(7);
    expect(r.events.filter((e) => e.event === 'duplicate-ids')).toEqual([
      {
        event: 'duplicate-ids',
        fields: { dataset: ds.name, chainId: 56, count: 7, ids: ['0x01', '0x02', '0x03', '0x04', '0x05'] },
        level: 'warn',
      },
    ]);
    // The one served last is kept.
    expect(wh.rowsById().get('0x07')).toMatchObject({ value: 'again 0x07' });
  });
});

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

describe('snapshots and the liquidity list', () => {
  it('keeps one snapshot of every row per block', async () => {
    const ds = fakeDataset('snapshot');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(230);
    const wh = new FakeWarehouse(ds);
    await run(src, wh, { pageSize: 100 }, pinAt(100, 1));
    src.rows = src.rows.slice(5);
    await run(src, wh, { pageSize: 100 }, pinAt(101, 2));
    expect([...wh.snapshots.keys()]).toEqual([100, 101]);
    expect(wh.snapshots.get(100)!.length).toBe(230);
    expect(new Set(wh.snapshots.get(101)!.map((r) => r.id))).toEqual(new Set(src.rows.map((r) => r.id)));
  });

  it('takes every pool of the list, and refuses a list whose totalCount it cannot reach', async () => {
    const ds = fakeDataset('list');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(2345);
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh);
    expect(wh.snapshots.get(100)!.length).toBe(2345);
    expect(r.stats.requests).toBe(Math.ceil(2345 / LIST_PAGE_SIZE));
    src.listSurplus = 1;
    const e = await failure(run(src, wh, {}, pinAt(101, 2)));
    expect(e.message).toMatch(/returned 2345 distinct pools but totalCount 2346 \(the list changed while paging\)/);
    expect(wh.snapshots.has(101)).toBe(false);
  });
});

describe('the liquidity list', () => {
  const list = () => {
    const ds = fakeDataset('list');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(250);
    return { ds, src, wh: new FakeWarehouse(ds) };
  };

  it('asks for each page with the chain, the page, the configured pool types, oldest first', async () => {
    const { src, wh } = list();
    await run(src, wh, {}, pinAt(100, 1_767_225_600));
    const where = (currentPage: number) => ({
      chainIds: [56],
      currentPage,
      pageSize: LIST_PAGE_SIZE,
      refreshNow: false,
      filterState: { address: '', viewOnlyOwn: false, filterTypes: ['CLASSICAL'] },
      order: { orderBy: 'updatedAt', orderDirection: 'asc' },
    });
    expect(src.asked).toEqual([1, 2, 3].map((p) => ({ first: 100, where: where(p) })));
    // One snapshot, stamped with the pinned block's time.
    expect(wh.batches.map((b) => [b.replace, b.takenAt, b.checkpoint.next, b.count])).toEqual([
      [{ kind: 'snapshot' }, '2026-01-01T00:00:00.000Z', '{"block":100}', 250],
    ]);
  });

  it('stops at totalCount without asking for an empty page, and pages to a short page when totalCount is null', async () => {
    const exact = list();
    exact.src.rows = rowsOf(2 * LIST_PAGE_SIZE);
    await run(exact.src, exact.wh);
    expect(exact.src.requests).toBe(2);
    expect(exact.wh.snapshots.get(100)).toHaveLength(2 * LIST_PAGE_SIZE);
    const unknown = list();
    unknown.src.rows = rowsOf(2 * LIST_PAGE_SIZE);
    unknown.src.listShape = (_page, a) => ({ ...a, totalCount: null });
    await run(unknown.src, unknown.wh);
    expect(unknown.src.requests).toBe(3);
    expect(unknown.wh.snapshots.get(100)).toHaveLength(2 * LIST_PAGE_SIZE);
  });

  it('liquidity_list: null fails the pass naming the chain and page, and stores nothing', async () => {
    const { src, wh } = list();
    src.listShape = (page, a) => (page === 3 ? null : a);
    const e = await failure(run(src, wh));
    expect(e.cause).toBeInstanceOf(UpstreamError);
    expect((e.cause as UpstreamError).kind).toBe('garbage');
    expect((e.cause as Error).message).toBe(
      'the liquidity list answered liquidity_list: null for chain 56 (page 3); no snapshot is stored this run, and the next run asks again',
    );
    expect(src.requests).toBe(3);
    expect(wh.batches).toEqual([]);
  });

  it.each<[string, (page: number, a: ListAnswer) => unknown, string]>([
    [
      'lqList null on a page',
      (p, a) => (p === 2 ? { ...a, lqList: null } : a),
      '100 distinct pools but totalCount 250 (lqList was null on page 2)',
    ],
    [
      'null items',
      (p, a) => (p === 1 ? { ...a, lqList: a.lqList!.map((x, i) => (i < 3 ? null : x)) } : a),
      '247 distinct pools but totalCount 250 (3 of its items were null)',
    ],
  ])('%s fails the count check, saying why', async (_what, shape, why) => {
    const { src, wh } = list();
    src.listShape = shape;
    const e = await failure(run(src, wh));
    expect((e.cause as Error).message).toBe(`liquidity list of chain 56 returned ${why}`);
    expect(wh.batches).toEqual([]);
  });
});

describe('fetching', () => {
  it('halves the page size after each time-out, down to MIN_PAGE_SIZE, and still pages every row', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(500);
    src.failures.push(timeout(), timeout(), timeout(), timeout());
    const wh = new FakeWarehouse(ds);
    const r = await run(src, wh, { pageSize: 400, maxAttempts: 6 });
    // The source saw the page size of each request that reached it: 400 → 200 → 100 → 50 → 50 (the floor).
    expect(src.requests).toBe(4 + src.firsts.length);
    expect(src.firsts.every((f) => f === MIN_PAGE_SIZE)).toBe(true);
    expect(r.stats.retries).toBe(4);
    expect(wh.rowsById()).toEqual(expectedRows(ds, src.rows));
  });

  it('keeps the page size after an error that is not a time-out', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(150);
    src.failures.push(new UpstreamError('HTTP 502: bad gateway', { kind: 'http', retryable: true }));
    const wh = new FakeWarehouse(ds);
    await run(src, wh, { pageSize: 100 });
    expect(src.firsts).toEqual([100, 100]);
  });

  it('stops on request before the next page, as StopRequested', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(150);
    const stop = new AbortController();
    stop.abort();
    const e = await failure(run(src, new FakeWarehouse(ds), { signal: stop.signal }));
    expect(e.cause).toBeInstanceOf(StopRequested);
    expect(src.requests).toBe(0);
  });

  it('a request that fails after a stop was asked for ends as StopRequested, not as that failure', async () => {
    const ds = fakeDataset('event');
    const stop = new AbortController();
    class StoppedMidway extends FakeSubgraph {
      override async requestBody(...a: Parameters<FakeSubgraph['requestBody']>) {
        stop.abort();
        this.failures.push(new UpstreamError('HTTP 502: bad gateway', { kind: 'http', retryable: false }));
        return super.requestBody(...a);
      }
    }
    const src = new StoppedMidway(ds);
    src.rows = rowsOf(10);
    const e = await failure(run(src, new FakeWarehouse(ds), { signal: stop.signal }));
    expect(e.cause).toBeInstanceOf(StopRequested);
    expect(src.requests).toBe(1);
  });

  it('stops when another writer moved the checkpoint', async () => {
    const ds = fakeDataset('event');
    const src = new FakeSubgraph(ds);
    src.rows = rowsOf(150);
    const wh = new FakeWarehouse(ds);
    wh.checkpoints.set(ds.name, JSON.stringify({ seq: '1', id: '' }));
    const { task, deps } = fakeTask(src, wh);
    // The run read no checkpoint (another process wrote it after): its first commit must not overwrite it.
    const blind = {
      ...deps,
      checkpoints: { get: async () => undefined, shards: async () => [], idsReadSince: async () => [] },
    };
    const e = await failure(runTask(task, blind, pinAt(100, 10_000)));
    expect(e.cause).toBeInstanceOf(ConcurrentWriterError);
  });
});
