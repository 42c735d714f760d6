/**
 * `runTask` and every paginator against in-memory fakes of the source, sink and checkpoints (test/support/task-fakes.ts):
 * each test checks the stored rows against the subgraph's own rows, an oracle that knows nothing of the paginators.
 * This file: events and buckets, and two versions of one id in a page; progress and sharded backfills, mutable
 * entities, snapshots, the liquidity list and fetching are in the by-kind-*.test.ts beside it.
 */
import { describe, expect, it } from 'vitest';
import { failure, rowsOf, run } from '../support/by-kind-run.ts';
import { expectedRows, FakeSubgraph, FakeWarehouse, fakeDataset, pinAt } from '../support/task-fakes.ts';

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
