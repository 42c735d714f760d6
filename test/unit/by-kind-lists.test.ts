/**
 * `runTask` against in-memory fakes (test/support/task-fakes.ts) for snapshots, the liquidity list, and how pages are
 * fetched: the stored rows checked against the subgraph's own rows.
 */
import { describe, expect, it } from 'vitest';
import { LIST_PAGE_SIZE } from '../../src/catalog/liquidity-list.ts';
import { ConcurrentWriterError, StopRequested, UpstreamError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import { MIN_PAGE_SIZE } from '../../src/export/routing/routed-requests.ts';
import { failure, rowsOf, run } from '../support/by-kind-run.ts';
import {
  expectedRows,
  FakeSubgraph,
  FakeWarehouse,
  fakeDataset,
  fakeTask,
  type ListAnswer,
  pinAt,
  timeout,
} from '../support/task-fakes.ts';

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
