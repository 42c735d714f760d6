/**
 * FirstPages (src/export/first-pages.ts) against fakes: a batch's answer serves each task the page its own request
 * would have got, byte for byte; a failing dataset is split out, a failing route ends the batch; the tasks that ask
 * nothing, and how much one batch may hold.
 */
import pLimit from 'p-limit';
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import type { FirstAsk } from '../../src/export/first-batch.ts';
import { FirstPages } from '../../src/export/first-pages.ts';
import { HostLimited } from '../../src/export/host-limited.ts';
import { pageQuery } from '../../src/export/queries.ts';
import type { Endpoint } from '../../src/upstream/client.ts';
import { ENDPOINT, fourRoutes, quiet, Recording, readLogged } from '../support/first-pages-fixture.ts';
import { expectedRows, fakeTask } from '../support/task-fakes.ts';

describe('FirstPages', () => {
  it("answers each task's first page from one request, as the task's own request would, and the rest from the upstream", async () => {
    const { read, pin, asks, upstream } = await fourRoutes();
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
    await pages.read(asks, quiet);
    expect(upstream.requests).toBe(1);
    expect(pages.waiting).toBe(4);
    let requests = 0;
    for (const r of read) {
      // What the task's own request gets: the same bytes.
      const rec = new Recording(r.src);
      const ask = asks.find((a) => a.ds === r.ds)!;
      const vars = { first: 100, ...ask.request.vars };
      const direct = await rec.requestBody(ENDPOINT, pageQuery(r.ds, pin.root, ask.request.shape), vars);
      const served = await pages.requestBody(ENDPOINT, pageQuery(r.ds, pin.root, ask.request.shape), vars);
      expect(Buffer.from(served.body).toString()).toBe(Buffer.from(direct.body).toString());
      requests += served.requests ?? 1;
    }
    expect(requests).toBe(1);
    expect(pages.waiting).toBe(0);
  });

  it("knows a held page by its route, query and variables, whatever the variables' order", async () => {
    const { pin, asks, upstream } = await fourRoutes();
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
    await pages.read(asks, quiet);
    for (const a of asks) {
      const query = pageQuery(a.ds, pin.root, a.request.shape);
      const vars: Record<string, unknown> = { first: 100, ...a.request.vars };
      const reversed = Object.fromEntries(Object.entries(vars).reverse());
      expect(Object.keys(reversed)).not.toEqual(Object.keys(vars));
      expect(pages.holds(ENDPOINT, query, reversed)).toBe(true);
      // Another page size, or another block, is another request.
      expect(pages.holds(ENDPOINT, query, { ...vars, first: 99 })).toBe(false);
      expect(pages.holds(ENDPOINT, query, { ...vars, block: Number(vars.block) + 1 })).toBe(false);
    }
  });

  it('exports exactly with the batch in front: every row, and no request of their own for short first pages', async () => {
    const { read, pin, asks, upstream } = await fourRoutes();
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
    await pages.read(asks, quiet);
    for (const r of read) {
      const before = r.src.requests;
      const t = fakeTask(r.src, r.wh, { reorgWindowSecs: 60 });
      const done = await runTask(t.task, { ...t.deps, source: pages }, pin);
      if (r.ds.kind === 'snapshot')
        expect([...r.wh.snapshots.get(200)!.map((x) => x.id)].sort()).toEqual([
          ...expectedRows(r.ds, r.src.rows).keys(),
        ]);
      else expect(r.wh.rowsById()).toEqual(expectedRows(r.ds, r.src.rows));
      // No task asks anything itself: the batch held every first page, and which rows of the mutable one's window
      // are still there.
      expect(r.src.requests - before).toBe(0);
      expect(done.run.stats.requests).toBeLessThanOrEqual(1);
    }
  });

  it('splits a batch whose answer fails, so one failing dataset leaves the others answered', async () => {
    const { read, asks, upstream } = await fourRoutes();
    upstream.failing.add(read[2]!.src);
    const { pages, events } = await readLogged(asks, upstream);
    // [a0 a1 a2 a3] fails; [a0 a1] answers; [a2 a3] fails; [a2] fails alone; [a3] answers.
    expect(upstream.requests).toBe(5);
    expect(pages.waiting).toBe(3);
    expect(events).toEqual([
      expect.objectContaining({
        datasets: 4,
        answered: 3,
        requests: 5,
        left: 1,
        failure: 'the answer holds GraphQL errors',
      }),
    ]);
  });

  it.each([
    ['a page that is an object, not a list of rows', { a: '{"id":"0x000001"}' }],
    ['a presence that is an object, not a list of rows', { p: '{"id":"0x000001"}' }],
    ['a presence whose row has a number for its id', { p: '[{"id":7}]' }],
    ['a presence whose row is null', { p: '[null]' }],
  ])(
    'takes no page from a batch whose answer holds %s: that dataset is asked alone, then left to its task, which exports exactly',
    async (_what, text) => {
      const { read, pin, asks, upstream } = await fourRoutes();
      const mutable = read[2]!;
      upstream.hostile.set(mutable.src, text);
      const { pages, events } = await readLogged(asks, upstream);
      // [a0 a1 a2 a3] is refused; [a0 a1] answers; [a2 a3] is refused; [a2] is refused alone; [a3] answers.
      expect(upstream.requests).toBe(5);
      expect(pages.waiting).toBe(3);
      expect(events).toEqual([expect.objectContaining({ datasets: 4, answered: 3, requests: 5, left: 1 })]);
      expect(
        pages.holds(ENDPOINT, pageQuery(mutable.ds, pin.root, asks[2]!.request.shape), {
          first: 100,
          ...asks[2]!.request.vars,
        }),
      ).toBe(false);
      const t = fakeTask(mutable.src, mutable.wh, { reorgWindowSecs: 60 });
      await runTask(t.task, { ...t.deps, source: pages }, pin);
      expect(mutable.wh.rowsById()).toEqual(expectedRows(mutable.ds, mutable.src.rows));
    },
  );

  it('takes no page from an answer that holds errors beside its data', async () => {
    const { asks, upstream } = await fourRoutes();
    upstream.besideData = ',"errors":[{"message":"indexing error"}]';
    const { pages, events } = await readLogged(asks, upstream);
    expect(upstream.requests).toBe(5);
    expect(pages.waiting).toBe(0);
    expect(events).toEqual([
      expect.objectContaining({ answered: 0, left: 4, failure: 'the answer holds GraphQL errors' }),
    ]);
  });

  it('spends at most 1 + 2·log2(n) requests on a batch whose every answer fails, and leaves the rest to the tasks', async () => {
    const { read, asks, upstream } = await fourRoutes();
    for (const r of read) upstream.failing.add(r.src);
    const { pages, events } = await readLogged(asks, upstream);
    // [a0 a1 a2 a3], [a0 a1], [a0], [a1], [a2 a3]: the budget of 5 is spent; [a2] and [a3] are not asked.
    expect(upstream.requests).toBe(5);
    expect(pages.waiting).toBe(0);
    expect(events).toEqual([expect.objectContaining({ datasets: 4, answered: 0, requests: 5, left: 4 })]);
  });

  it('ends the batch at a failure of the route, leaving every task to meet it with its own retries', async () => {
    const { asks, upstream } = await fourRoutes();
    upstream.down = new UpstreamError('connection refused by fake', { kind: 'unreachable', retryable: true });
    const { pages, events } = await readLogged(asks, upstream);
    expect(upstream.requests).toBe(1);
    expect(pages.waiting).toBe(0);
    expect(events).toEqual([
      { endpoint: 'fake', datasets: 4, answered: 0, requests: 1, left: 4, failure: 'connection refused by fake' },
    ]);
  });

  it('asks at most maxAliases datasets in a request, and nothing with batching off (maxAliases 0)', async () => {
    const { asks, upstream } = await fourRoutes();
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 3 });
    const events: Record<string, unknown>[] = [];
    await pages.read(asks, { ...quiet, log: (_e, f) => events.push(f) });
    // Four datasets of one route: a batch of 3, then one of 1.
    expect(upstream.requests).toBe(2);
    expect(pages.waiting).toBe(4);
    expect(events.map((e) => e.datasets).sort()).toEqual([1, 3]);
    const off = new FirstPages(upstream, { pageSize: 100, maxAliases: 0 });
    await off.read(asks, quiet);
    expect(upstream.requests).toBe(2);
    expect(off.waiting).toBe(0);
  });
});

describe('FirstPages: the tasks that ask nothing', () => {
  it('knows which held first pages are short, and a task outside its host limit waits for a place only to ask', async () => {
    const { read, pin, asks, upstream } = await fourRoutes();
    // Pages of 60 rows: the event dataset's first page (its 30 new rows and the window) is full, the others short.
    const full = new FirstPages(upstream, { pageSize: 60, maxAliases: 32 });
    await full.read(asks, quiet);
    const short = asks.map((a) => full.holdsShort(a));
    const counts = await Promise.all(
      asks.map(async (a) => {
        const vars = { first: 60, ...a.request.vars };
        const sub = read.find((r) => r.ds === a.ds)!.src;
        const page = await sub.requestBody(ENDPOINT, pageQuery(a.ds, pin.root, a.request.shape), vars);
        return (JSON.parse(Buffer.from(page.body).toString()) as { data: { rows: unknown[] } }).data.rows.length;
      }),
    );
    expect(short).toEqual(counts.map((n) => n < 60));
    expect(short).toContain(true);
    expect(short).toContain(false);
    // Not held at all: not short.
    expect(new FirstPages(upstream, { pageSize: 60, maxAliases: 32 }).holdsShort(asks[0]!)).toBe(false);
    // The host's one place is taken: a held page is still served, a request waits until the place is free.
    const place = pLimit(1);
    let free!: () => void;
    void place(() => new Promise<void>((r) => (free = r)));
    const limited = new HostLimited(full, place);
    const a = asks[1]!;
    const vars = { first: 60, ...a.request.vars };
    const held = await limited.requestBody(ENDPOINT, pageQuery(a.ds, pin.root, a.request.shape), vars);
    expect(held.requests).toBe(1);
    let asked = false;
    const other = limited
      .requestBody(ENDPOINT, pageQuery(a.ds, pin.root, a.request.shape), { ...vars, first: 7 })
      .then(() => (asked = true));
    await new Promise((r) => setTimeout(r, 20));
    expect(asked).toBe(false);
    free();
    await other;
    expect(asked).toBe(true);
  });
});

describe('FirstPages: what the batches hold is bounded', () => {
  it('lets an answer over the bound go at once, and its tasks still export exactly on their own', async () => {
    const { read, pin, asks, upstream } = await fourRoutes();
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32, holdBytes: 1000 });
    const events: Record<string, unknown>[] = [];
    await pages.read(asks, { ...quiet, log: (_e, f) => events.push(f) });
    expect(upstream.requests).toBe(1);
    expect(pages.waiting).toBe(0);
    expect(pages.held).toBe(0);
    expect(events).toEqual([expect.objectContaining({ datasets: 4, answered: 0, left: 4 })]);
    for (const r of read) {
      const before = r.src.requests;
      const t = fakeTask(r.src, r.wh, { reorgWindowSecs: 60 });
      await runTask(t.task, { ...t.deps, source: pages }, pin);
      if (r.ds.kind === 'snapshot')
        expect([...r.wh.snapshots.get(200)!.map((x) => x.id)].sort()).toEqual([
          ...expectedRows(r.ds, r.src.rows).keys(),
        ]);
      else expect(r.wh.rowsById()).toEqual(expectedRows(r.ds, r.src.rows));
      expect(r.src.requests - before).toBeGreaterThan(0);
    }
  });

  it('holds one answer per first page: a page asked again replaces the one held, whose bytes go once all its pages are', async () => {
    const { asks, upstream } = await fourRoutes();
    // The bytes of each answer, held alone.
    const alone = async (some: readonly FirstAsk[]) => {
      const p = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
      await p.read(some, quiet);
      return p.held;
    };
    const [all, front, back] = [await alone(asks), await alone(asks.slice(0, 2)), await alone(asks.slice(2))];
    expect(Math.min(all, front, back)).toBeGreaterThan(0);
    upstream.requests = 0;
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
    await pages.read(asks, quiet);
    expect(pages.held).toBe(all);
    // The same four asked again in one request: its answer takes the place of the first, which is let go.
    await pages.read(asks, quiet);
    expect(pages.held).toBe(all);
    // Two of them asked again: the four-dataset answer still serves the other two, so both answers are held.
    await pages.read(asks.slice(0, 2), quiet);
    expect(pages.held).toBe(all + front);
    // The other two asked again: no page of the four-dataset answer is held any more, and its bytes go.
    await pages.read(asks.slice(2), quiet);
    expect(pages.held).toBe(front + back);
    expect(upstream.requests).toBe(4);
    expect(pages.waiting).toBe(4);
  });

  it('asks no more batches once the answers held reach the bound, and frees an answer when its last page is taken', async () => {
    const { asks, upstream } = await fourRoutes();
    // Two routes of two datasets each; one batch at a time, the first route's first.
    const other = { url: 'http://127.0.0.1:2/fake', label: 'other', host: '127.0.0.1:2' } as Endpoint;
    const two = asks.map((a, i) => (i < 2 ? a : { ...a, endpoint: other }));
    const alone = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
    await alone.read(two.slice(0, 2), quiet);
    const first = alone.held;
    expect(first).toBeGreaterThan(0);
    upstream.requests = 0;
    const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32, holdBytes: first });
    const events: Record<string, unknown>[] = [];
    await pages.read(two, { ...quiet, concurrency: 1, log: (_e, f) => events.push(f) });
    expect(upstream.requests).toBe(1);
    expect(pages.waiting).toBe(2);
    expect(pages.held).toBe(first);
    expect(events).toEqual([
      expect.objectContaining({ endpoint: 'fake', datasets: 2, answered: 2, requests: 1 }),
      expect.objectContaining({ endpoint: 'other', datasets: 2, answered: 0, requests: 0, left: 2 }),
    ]);
    for (const a of two.slice(0, 2)) {
      expect(pages.held).toBe(first);
      const query = pageQuery(a.ds, a.root, a.request.shape);
      await pages.requestBody(a.endpoint, query, { first: 100, ...a.request.vars });
    }
    expect(pages.held).toBe(0);
  });
});
