/**
 * What is new in one request per route (src/export/first-pages.ts): each foreseen first request is the one the
 * paginator sends; a batch's answer serves each task the page its own request would have got, byte for byte; a batch
 * whose answer fails for one dataset is split so the others are still answered; a route that fails ends the batch.
 */
import pLimit from 'p-limit';
import { describe, expect, inject, it } from 'vitest';
import { type CursorKind, type Dataset, findDataset } from '../../src/catalog/catalog.ts';
import { UpstreamError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import { commitOrder } from '../../src/export/commit-order.ts';
import { batchQuery, type FirstAsk } from '../../src/export/first-batch.ts';
import { FirstPages } from '../../src/export/first-pages.ts';
import { HostLimited } from '../../src/export/host-limited.ts';
import { firstRequest, windowPresenceFrom } from '../../src/export/paginate/first-request.ts';
import { pageQuery, selection } from '../../src/export/queries.ts';
import type { PageSource } from '../../src/export/seams.ts';
import type { Task } from '../../src/export/task.ts';
import type { Cursor } from '../../src/export/task-run.ts';
import { callControl } from '../../src/sandbox/spawn.ts';
import type { Answer, Endpoint } from '../../src/upstream/client.ts';
import { arrayLength, objectMembers, topMembers } from '../../src/util/json-members.ts';
import { post, subgraphPath } from '../support/sandbox-client.ts';
import {
  expectedRows,
  type FakeRow,
  FakeSubgraph,
  FakeWarehouse,
  fakeDataset,
  fakeTask,
  pinAt,
} from '../support/task-fakes.ts';

const ENDPOINT = { url: 'http://127.0.0.1:1/fake', label: 'fake', host: '127.0.0.1:1' } as Endpoint;

/** `n` rows whose keys and change blocks grow with `i`: the later ones are new to a run at a later block. */
function rowsOf(n: number): FakeRow[] {
  return Array.from({ length: n }, (_, i) => ({
    id: `0x${(i * 7919).toString(16).padStart(6, '0')}`,
    seq: 1000 + i * 10,
    value: `v${i}`,
    changed: 1 + i,
  }));
}

/** The members of an answer's `data`, each as its text (undefined when it is no such answer). */
function dataMembers(text: string): Map<string, string> | undefined {
  const body = Buffer.from(text);
  const data = topMembers(body)?.get('data');
  const members = data && objectMembers(body, data);
  return members && new Map([...members].map(([k, [a, b]]) => [k, body.subarray(a, b).toString('utf8')]));
}

/** A source that records every page request it passes on. */
class Recording implements PageSource {
  readonly asked: { query: string; vars: Record<string, unknown> }[] = [];
  constructor(readonly inner: PageSource) {}
  request<T>(e: Endpoint, q: string, v: Record<string, unknown>): Promise<Answer<T>> {
    return this.inner.request<T>(e, q, v);
  }
  requestBody(e: Endpoint, q: string, v: Record<string, unknown>) {
    this.asked.push({ query: q, vars: v });
    return this.inner.requestBody(e, q, v);
  }
  answerData<T>(e: Endpoint, body: Uint8Array): T {
    return this.inner.answerData<T>(e, body);
  }
}

/**
 * An upstream of several fake subgraphs (one per dataset, by its place in the batch) that answers a batched query as
 * graph-node does: every alias from one snapshot, or, when any alias fails, `errors` and no `data`. Each alias is
 * answered by its subgraph from the alias's own field text and variables, so the fake knows nothing of the batcher.
 */
class BatchUpstream implements PageSource {
  requests = 0;
  /** Subgraphs whose every field fails (a field the deployment lacks). */
  readonly failing = new Set<FakeSubgraph>();
  /** A failure of the route itself, thrown by every request. */
  down: UpstreamError | undefined;
  /** A hostile upstream: the text that stands in a batch's answer for a subgraph's page (`a`) or presence (`p`) alias. */
  readonly hostile = new Map<FakeSubgraph, { a?: string; p?: string }>();
  /** A hostile upstream: members written after `data` in a batch's answer (graph-node sends `data` or `errors`). */
  besideData = '';
  /** `subgraphs`: one per dataset, each selecting other fields. */
  constructor(readonly subgraphs: readonly FakeSubgraph[]) {}

  request<T>(e: Endpoint, q: string, v: Record<string, unknown>): Promise<Answer<T>> {
    return this.subgraphOf(q.slice(0, -2))!.request<T>(e, q, v);
  }

  /**
   * The fake datasets differ in what they select: a field's selection names its subgraph (a question of which ids are
   * still there, selecting ids alone, is the mutable dataset's: no other asks it).
   */
  private subgraphOf(field: string): FakeSubgraph | undefined {
    const named = this.subgraphs.find((x) => field.endsWith(`{ ${selection(x.ds)} }`));
    return named ?? (field.endsWith('{ id }') ? this.subgraphs.find((x) => x.ds.kind === 'mutable') : undefined);
  }

  answerData<T>(e: Endpoint, body: Uint8Array): T {
    return this.subgraphs[0]!.answerData<T>(e, body);
  }

  async requestBody(e: Endpoint, q: string, v: Record<string, unknown>) {
    this.requests++;
    if (this.down) throw this.down;
    if (!q.startsWith('query FirstPages(')) return this.subgraphOf(q.slice(0, -2))!.requestBody(e, q, v);
    const body = q.slice(q.indexOf(') { ') + 4, -2);
    const fields = body.split(/ (?=[ap]\d+: )/);
    const data: string[] = [];
    const byIndex = new Map<number, FakeSubgraph>();
    for (const f of fields) {
      const [, kind, n] = /^([ap])(\d+): /.exec(f)!;
      const alias = `${kind}${n}`;
      // The fake datasets differ in what they select: a page field's selection names its subgraph, and the question
      // of ids' presence after it (`p<i>`) is its page field's (`a<i>`).
      const sub = kind === 'a' ? this.subgraphOf(f) : byIndex.get(Number(n));
      if (!sub) throw new Error(`alias ${alias} names no subgraph`);
      byIndex.set(Number(n), sub);
      if (this.failing.has(sub)) {
        const errors = [{ message: 'Type `Fake` has no field `value`' }];
        return { body: Buffer.from(JSON.stringify({ errors })), bytes: 0 };
      }
      const field = f.slice(f.indexOf(': ') + 2).replaceAll(`$${alias}_`, '$');
      const vars = Object.fromEntries(
        Object.entries(v)
          .filter(([k]) => k.startsWith(`${alias}_`))
          .map(([k, x]) => [k.slice(`${alias}_`.length), x]),
      );
      const one = await sub.requestBody(e, `query Page($first: Int!) { rows: ${field} }`, vars);
      const text = this.hostile.get(sub)?.[kind as 'a' | 'p'];
      data.push(`"${alias}":${text ?? dataMembers(Buffer.from(one.body).toString('utf8'))!.get('rows')}`);
    }
    const answer = Buffer.from(`{"data":{${data.join(',')}}${this.besideData}}`);
    return { body: answer, bytes: answer.byteLength };
  }
}

/** A task of `kind` that has read every row up to block 100, with the rows of `n`; the cursor it left. */
async function readUpTo100(kind: CursorKind, n: number, changeBlock = true, ds = fakeDataset(kind)) {
  const src = new FakeSubgraph(ds);
  src.rows = rowsOf(n);
  const wh = new FakeWarehouse(ds);
  const first = fakeTask(src, wh, { reorgWindowSecs: 60 });
  const r = await runTask(first.task, first.deps, pinAt(100, 10_000, changeBlock));
  return { ds, src, wh, cursor: JSON.parse(r.run.cursor!) as Cursor };
}

describe('the first request of a task, foreseen', () => {
  /** A subgraph's mutable entity with no field to page by but its id (`subgraphDatasetsOf` in `src/catalog/catalog.ts`). */
  const idOnly = (): Dataset => {
    const { seq: _seq, seqType: _type, ...ds } = fakeDataset('mutable');
    return { ...ds, columns: ds.columns.filter((c) => c.field !== 'updatedAt') };
  };
  const cases: [string, boolean, () => Dataset][] = [
    ['event', true, () => fakeDataset('event')],
    ['bucket', true, () => fakeDataset('bucket')],
    ['mutable', true, () => fakeDataset('mutable')],
    ['mutable', false, () => fakeDataset('mutable')],
    ['mutable with no keyset field', false, idOnly],
    ['snapshot', true, () => fakeDataset('snapshot')],
  ];
  it.each(cases)('is the one the paginator sends (%s, _change_block %s)', async (_kind, changeBlock, dataset) => {
    const given = dataset();
    const { ds, src, wh, cursor } = await readUpTo100(given.kind, 40, changeBlock, given);
    const pin = pinAt(200, 10_500, changeBlock);
    const foreseen = firstRequest(ds, cursor, { block: pin.block, changeBlock, windowSecs: 60 });
    expect(foreseen).toBeDefined();
    const rec = new Recording(src);
    const next = fakeTask(src, wh, { reorgWindowSecs: 60 });
    await runTask(next.task, { ...next.deps, source: rec }, pin);
    expect(rec.asked[0]!.query).toBe(pageQuery(ds, pin.root, foreseen!.shape));
    expect(rec.asked[0]!.vars).toEqual({ first: next.deps.config.pageSize, ...foreseen!.vars });
  });

  it('is not foreseen for a backfill, a resumed full pass or the list', () => {
    const at = { block: { number: 5, timestamp: 9 }, changeBlock: true, windowSecs: 60 };
    expect(firstRequest(fakeDataset('event'), {}, at)).toBeUndefined();
    expect(firstRequest(fakeDataset('mutable'), { mode: 'full', id: '0x01' }, at)).toBeUndefined();
    expect(firstRequest(fakeDataset('list'), {}, at)).toBeUndefined();
    expect(firstRequest(fakeDataset('list'), { mode: 'incremental', seq: '9', block: 4 }, at)).toBeUndefined();
  });

  it('asks which rows are still upstream from the window of an incremental mutable pass only', () => {
    // 100 blocks in 500 s since the last run: 0.2 a second, so a window of 60 s is 12 blocks, and the check starts
    // one block before them: 100 - 12 - 1.
    const at = { block: { number: 200, timestamp: 10_500 }, changeBlock: true, windowSecs: 60 };
    const cursor = { mode: 'incremental' as const, seq: '10000', block: 100 };
    expect(windowPresenceFrom(fakeDataset('mutable'), cursor, at)).toBe(87);
    expect(windowPresenceFrom(fakeDataset('event'), cursor, at)).toBeUndefined();
    expect(windowPresenceFrom(fakeDataset('mutable'), { ...cursor, mode: 'full' }, at)).toBeUndefined();
    // No block since the last run: a reorganisation to the same height may have taken rows back (the task runs only
    // when the head's hash moved), over the window at the fastest pace: 600 blocks, from block 0.
    expect(windowPresenceFrom(fakeDataset('mutable'), { ...cursor, block: 200 }, at)).toBe(0);
  });
});

/** Four datasets read up to block 100, with new rows since; their asks at block 200 and a batch upstream over them. */
async function fourRoutes() {
  const kinds: CursorKind[] = ['event', 'bucket', 'mutable', 'snapshot'];
  const read = await Promise.all(kinds.map((k) => readUpTo100(k, 30)));
  // Rows past the last run's, in every dataset: the batch must bring them.
  for (const r of read) r.src.rows = rowsOf(60).map((x, i) => (i < 30 ? x : { ...x, changed: 101 + i }));
  // And one row of the mutable dataset that the last run read is gone upstream (a reorg reverted the block that made it).
  read[2]!.src.rows.splice(7, 1);
  const pin = pinAt(200, 10_500);
  const at = { block: pin.block, changeBlock: true, windowSecs: 60 };
  const asks: FirstAsk[] = [];
  for (const r of read) {
    const from = windowPresenceFrom(r.ds, r.cursor, at);
    const present = from === undefined ? [] : await r.wh.idsReadSince(56, r.ds, { from, exceptRun: 'this run' });
    const request = firstRequest(r.ds, r.cursor, at)!;
    asks.push({ endpoint: ENDPOINT, ds: r.ds, root: pin.root, request, ...(present.length ? { present } : {}) });
  }
  expect(asks.find((a) => a.ds.kind === 'mutable')!.present).toHaveLength(30);
  const upstream = new BatchUpstream(read.map((r) => r.src));
  return { read, pin, asks, upstream };
}

const quiet = { concurrency: 2, log: () => undefined, signal: new AbortController().signal };

/** The first pages of `asks` read from `upstream` in batches of up to 32, with the lines the read logged. */
async function readLogged(asks: FirstAsk[], upstream: PageSource) {
  const pages = new FirstPages(upstream, { pageSize: 100, maxAliases: 32 });
  const events: Record<string, unknown>[] = [];
  await pages.read(asks, { ...quiet, log: (_e, f) => events.push(f) });
  return { pages, events };
}

describe('the batched query, against the sandbox', () => {
  const sb = inject('sharedSandbox');
  /** One GraphQL request to the sandbox's DODO subgraph of BNB Chain: its `data` and `errors`. */
  const ask = async (query: string, variables: Record<string, unknown>) =>
    (await post(sb, subgraphPath(sb, 56, 'dodoex'), { query, variables })).body;

  it('is one query the upstream accepts, whose every alias holds what its own page query answers', async () => {
    const info = await callControl<{ chains: { chainId: number; head: number; timestamp: number }[] }>(sb.url, 'info');
    const head = info.chains.find((c) => c.chainId === 56)!;
    const at = { block: { number: head.head, timestamp: head.timestamp }, changeBlock: true, windowSecs: 3600 };
    const day = 86_400;
    // The root fields are graph-node's names for the entity types (the schema's `Swap` is asked as `swaps`).
    const datasets: [string, string, Cursor][] = [
      ['dodoex.swaps', 'swaps', { seq: String(head.timestamp - day) }],
      [
        'dodoex.pairs',
        'pairs',
        { mode: 'incremental', seq: String(head.timestamp - 30 * day), block: head.head - 50_000 },
      ],
      ['dodoex.pair_day_datas', 'pairDayDatas', { seq: String(head.timestamp - 3 * day) }],
      ['dodoex.dodo_zoos', 'dodoZoos', {}],
    ];
    // Some pairs the upstream holds, and an id it does not.
    const held = ((await ask('{ pairs(first: 3) { id } }', {})).data!.pairs as { id: string }[]).map((r) => r.id);
    expect(held).toHaveLength(3);
    const asks: FirstAsk[] = datasets.map(([name, root, cursor]) => {
      const ds = findDataset(name)!;
      const present = ds.kind === 'mutable' ? { present: [...held, '0x00000000000000000000000000000000000dead'] } : {};
      return { endpoint: ENDPOINT, ds, root, request: firstRequest(ds, cursor, at)!, ...present };
    });
    const { query, vars } = batchQuery(asks, 100);
    const batch = await ask(query, vars);
    expect(batch.errors).toBeUndefined();
    for (const [i, a] of asks.entries()) {
      const own = await ask(pageQuery(a.ds, a.root, a.request.shape), { first: 100, ...a.request.vars });
      expect(own.errors).toBeUndefined();
      expect(own.data!.rows!.length).toBeGreaterThan(0);
      expect(batch.data![`a${i}`]).toEqual(own.data!.rows);
    }
    expect((batch.data!.p1 as { id: string }[]).map((r) => r.id).sort()).toEqual([...held].sort());
    expect(Object.keys(batch.data!).sort()).toEqual(['a0', 'a1', 'a2', 'a3', 'p1']);
  });
});

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

describe('json-members', () => {
  it('cuts each member of `data` out as the bytes that came, whatever its strings hold', () => {
    const rows = '[{"id":"a\\"]}","v":1,"v":2},{"id":"b","n":[1,{"x":"}"}],"s":"名前🦄"}]';
    const text = `{ "data" : { "a0" : ${rows} , "a1":[], "a2" : null } }\n`;
    const m = dataMembers(text)!;
    expect(m.get('a0')).toBe(rows);
    expect(JSON.parse(m.get('a0')!)).toHaveLength(2);
    expect(m.get('a1')).toBe('[]');
    expect(m.get('a2')).toBe('null');
    expect(dataMembers('{"errors":[{"message":"x"}]}')).toBeUndefined();
    expect(dataMembers('{"data":[1]}')).toBeUndefined();
    // Broken structure, anywhere the scan walks: no members.
    for (const broken of [
      '{"data":{"a0":[1]',
      '{"data":{"a0":[1}}}',
      '{"data":{"a0" [1]}}',
      '{"data":{"a0":[1]}} x',
      '{"data":{"a0":}}',
    ])
      expect(dataMembers(broken), broken).toBeUndefined();
  });

  it('counts the rows of a page as JSON.parse does, up to a bound, and refuses what is no list', () => {
    const rows = '[{"id":"a,\\"]}","n":[1,2,{"x":"]"}]} , {"id":"b"},\n{"id":"名前🦄"}]';
    expect(JSON.parse(rows)).toHaveLength(3);
    const bytes = (t: string) => Buffer.from(t);
    expect(arrayLength(bytes(rows))).toBe(3);
    expect(arrayLength(bytes(rows), 2)).toBe(2);
    expect(arrayLength(bytes(rows), 100)).toBe(3);
    expect(arrayLength(bytes(' [ ] '))).toBe(0);
    expect(arrayLength(bytes('[1]'))).toBe(1);
    for (const broken of ['{"a":1}', '[1,]', '[1 2]', '[1', '[1]x', 'null', ''])
      expect(arrayLength(bytes(broken)), broken).toBeUndefined();
  });
});

describe('commitOrder', () => {
  it('queues the tasks that only commit a held first page dataset by dataset across chains, the others in plan order', () => {
    const ds = (name: string) => ({ name }) as Task['ds'];
    const [a, b] = [ds('dodoex.swaps'), ds('dodoex.pairs')];
    // The plan's order: chain by chain. `short` marks the tasks whose first page a batch holds whole.
    const plan = [
      { ds: a, chainId: 56, short: true },
      { ds: b, chainId: 56, short: true },
      { ds: a, chainId: 1, short: false },
      { ds: b, chainId: 1, short: true },
      { ds: a, chainId: 137, short: true },
      { ds: b, chainId: 137, short: false },
      { ds: a, chainId: 10, short: true },
    ];
    const tasks = plan.map((p) => ({ ds: p.ds, chainId: p.chainId }) as Task);
    const order = commitOrder(tasks, (t) => plan[tasks.indexOf(t)]!.short);
    expect(order.map((i) => `${plan[i]!.ds.name}@${plan[i]!.chainId}`)).toEqual([
      'dodoex.pairs@1',
      'dodoex.pairs@56',
      'dodoex.swaps@10',
      'dodoex.swaps@56',
      'dodoex.swaps@137',
      'dodoex.swaps@1',
      'dodoex.pairs@137',
    ]);
    // Every task once.
    expect([...order].sort((x, y) => x - y)).toEqual(plan.map((_, i) => i));
  });

  it('keeps that order at a real plan’s size, where the sort merges runs (300 tasks)', () => {
    const names = ['dodoex.swaps', 'dodoex.pairs', 'dodoex.tokens', 'dodoex.pair_day_datas', 'dodoex.users'];
    const chains = [1, 10, 56, 137, 8453, 42161];
    const tasks: Task[] = [];
    const isShort = new Set<Task>();
    // Chain by chain, as a plan; whether a batch holds a task's page whole follows a fixed pseudo-random pattern.
    for (let i = 0; i < 300; i++) {
      const t = { ds: { name: names[i % 5] }, chainId: chains[Math.floor(i / 50)]! * 1000 + (i % 7) } as Task;
      tasks.push(t);
      if ((i * 37) % 11 < 6) isShort.add(t);
    }
    // The expected order, built another way: the short tasks grouped by dataset name, each group by chain, then the
    // others as the plan has them.
    const byName = new Map<string, number[]>();
    tasks.forEach((t, i) => {
      if (isShort.has(t)) byName.set(t.ds.name, [...(byName.get(t.ds.name) ?? []), i]);
    });
    const expected = [
      ...[...byName.keys()]
        .sort()
        .flatMap((n) => byName.get(n)!.sort((x, y) => tasks[x]!.chainId - tasks[y]!.chainId || x - y)),
      ...tasks.map((_, i) => i).filter((i) => !isShort.has(tasks[i]!)),
    ];
    expect(isShort.size).toBeGreaterThan(100);
    expect(commitOrder(tasks, (t) => isShort.has(t))).toEqual(expected);
  });
});
