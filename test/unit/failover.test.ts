/**
 * A task's move to a standby route after its route fails past its retries, against in-memory routes: each route
 * serves the same rows under its own collection field, answers `_meta` with its own head, hash and indexing errors,
 * and knows the hashes of its own chain's blocks. Every accepted move must leave the stored rows equal to the
 * routes' rows; every refused one must name its reason and read nothing from that route.
 * (The same rules against real sandbox processes: routes.test.ts.)
 */
import { describe, expect, it } from 'vitest';
import { type TaskError, UpstreamError } from '../../src/errors.ts';
import { runTask } from '../../src/export/by-kind.ts';
import { pageQuery } from '../../src/export/queries.ts';
import { RoutedSource } from '../../src/export/routing/routed-source.ts';
import type { PageSource } from '../../src/export/seams.ts';
import { emptyStats, type Failover, type StandbyRoute, type TaskPin } from '../../src/export/task.ts';
import type { Answer, Endpoint } from '../../src/upstream/client.ts';
import type { EndpointInfo } from '../../src/upstream/endpoint-probe.ts';
import {
  expectedRows,
  type FakeRow,
  FakeSubgraph,
  FakeWarehouse,
  fakeDataset,
  fakeTask,
} from '../support/task-fakes.ts';

const ds = fakeDataset('event');
const ROWS: FakeRow[] = Array.from({ length: 120 }, (_, i) => ({
  id: `0x${(i * 37).toString(16).padStart(4, '0')}`,
  seq: 1000 + i,
  value: `v${i}`,
  changed: 1,
}));
/** The task's pinned block; the first route's head is 5 blocks above it. */
const BLOCK = 100;

/** One route: its rows and failures (a FakeSubgraph), its collection field, `_meta` answer and known block hashes. */
interface FakeRoute {
  readonly sub: FakeSubgraph;
  readonly root: string;
  meta: { number: number; hash: string | null; errors: boolean } | Error;
  readonly hashes: Set<string>;
  /** Lookups that fail (neither yes nor no). */
  lookupFails?: boolean;
  metaAsked: number;
  lookups: string[];
}

/** Routes by endpoint label; page queries must name the route's own collection field. */
class Routes implements PageSource {
  readonly byLabel = new Map<string, FakeRoute>();

  add(label: string, opts: Partial<Pick<FakeRoute, 'root' | 'meta' | 'lookupFails'>> & { hashes?: string[] } = {}) {
    const sub = new FakeSubgraph(ds);
    sub.rows = ROWS;
    const route: FakeRoute = {
      sub,
      root: opts.root ?? `fakes_${label}`,
      meta: opts.meta ?? { number: BLOCK + 5, hash: '0xhead', errors: false },
      hashes: new Set(opts.hashes ?? ['0xhead']),
      metaAsked: 0,
      lookups: [],
      ...(opts.lookupFails ? { lookupFails: true } : {}),
    };
    this.byLabel.set(label, route);
    return route;
  }

  async request<T>(endpoint: Endpoint, query: string, v: Record<string, unknown>): Promise<Answer<T>> {
    const r = this.byLabel.get(endpoint.label)!;
    if (query.includes('_meta(block: { hash')) {
      const hash = String(v.hash);
      r.lookups.push(hash);
      if (r.lookupFails) throw new UpstreamError('HTTP 502 from the route', { kind: 'http', retryable: true });
      if (!r.hashes.has(hash))
        throw new UpstreamError(`GraphQL error: no block with that hash found`, { kind: 'graphql', retryable: false });
      return { data: { _meta: { block: { number: 1 } } } as T, bytes: 1 };
    }
    if (query.includes('_meta')) {
      r.metaAsked++;
      if (r.meta instanceof Error) throw r.meta;
      const m = r.meta;
      return {
        data: { _meta: { block: { number: m.number, hash: m.hash }, hasIndexingErrors: m.errors } } as T,
        bytes: 1,
      };
    }
    return this.pageRoute(endpoint, query).sub.request<T>(endpoint, query, v);
  }

  async requestBody(endpoint: Endpoint, query: string, v: Record<string, unknown>) {
    return this.pageRoute(endpoint, query).sub.requestBody(endpoint, query, v);
  }

  answerData<T>(endpoint: Endpoint, body: Uint8Array): T {
    return this.byLabel.get(endpoint.label)!.sub.answerData<T>(endpoint, body);
  }

  /** The route of a page query, which must name the route's own collection field. */
  private pageRoute(endpoint: Endpoint, query: string): FakeRoute {
    const r = this.byLabel.get(endpoint.label)!;
    if (!query.includes(`rows: ${r.root}(`))
      throw new UpstreamError(`GraphQL error: Type \`Query\` has no field in ${query}`, {
        kind: 'graphql',
        retryable: false,
      });
    return r;
  }
}

const endpointOf = (label: string): Endpoint => ({ url: `http://127.0.0.1:1/${label}`, label, host: '127.0.0.1:1' });

function standbyOf(routes: Routes, label: string, over: Partial<EndpointInfo> = {}): StandbyRoute {
  const r = routes.byLabel.get(label)!;
  return {
    endpoint: endpointOf(label),
    info: {
      head: { number: 0, hash: null, timestamp: null },
      deployment: label,
      hasIndexingErrors: false,
      roots: new Map([[ds.entity, r.root]]),
      changeBlock: true,
      ...over,
    },
  };
}

const down = () => new UpstreamError('connection reset by the route', { kind: 'network', retryable: true });
/** The message of `down()` once the retries (one attempt) are spent. */
const GAVE_UP = 'connection reset by the route (gave up after 1 attempt)';

/**
 * Runs a task on route `fake` (the first), which serves `pagesFirst` pages and then fails for good, with the standby
 * routes in order. One attempt per request: the retry budget is spent at the first failure.
 */
async function failingOver(
  routes: Routes,
  standby: StandbyRoute[],
  opts: { pagesFirst?: number; failure?: () => Error; head?: TaskPin['head'] } = {},
) {
  const first = routes.add('fake', { root: 'fakes' });
  const pages = opts.pagesFirst ?? 2;
  const failure = opts.failure ?? down;
  // The first route answers its first pages, then fails every request.
  const request = first.sub.requestBody.bind(first.sub);
  first.sub.requestBody = async (e, q, v) => {
    if (first.sub.firsts.length >= pages) throw failure();
    return request(e, q, v);
  };
  const wh = new FakeWarehouse(ds);
  const { task, deps, events } = fakeTask(first.sub, wh, { pageSize: 20, batchRows: 20, maxAttempts: 1 });
  const pin: TaskPin = {
    block: { number: BLOCK, timestamp: 10_000 },
    root: 'fakes',
    changeBlock: true,
    head: opts.head === undefined ? { number: BLOCK + 5, hash: '0xhead' } : opts.head,
    // As a run pins a task: no standby list when no route stands by.
    ...(standby.length ? { standby } : {}),
  };
  const result = await runTask(task, { ...deps, source: routes }, pin).then(
    (r) => ({ ok: true as const, stats: r.run.stats }),
    (e: unknown) => ({ ok: false as const, error: e as TaskError<{ failovers: Failover[] }> }),
  );
  const failovers = result.ok ? result.stats.failovers : result.error.progress.stats.failovers;
  return { result, wh, events, failovers, first };
}

/** The stored rows equal every row of the routes. */
const exact = (wh: FakeWarehouse) => expect(wh.rowsById()).toEqual(expectedRows(ds, ROWS));
const moved = (to: string, refused?: string): Failover => ({
  from: 'fake',
  to,
  block: BLOCK,
  reason: GAVE_UP,
  ...(refused ? { refused } : {}),
});

describe('failover to a standby route', () => {
  it('continues on the next route under its own collection field, repeating and skipping no row, and logs the move', async () => {
    const routes = new Routes();
    const b = routes.add('b', { root: 'fakeItems' });
    const r = await failingOver(routes, [standbyOf(routes, 'b')]);
    expect(r.result.ok).toBe(true);
    exact(r.wh);
    // Two pages of 20 from the first route, the other 80 rows from b, which was asked from where the first stopped.
    expect(r.first.sub.firsts).toEqual([20, 20]);
    expect(b.sub.asked[0]).toMatchObject({ seq: '1039', id: ROWS[39]!.id });
    expect(r.failovers).toEqual([moved('b')]);
    const logged = r.events.filter((e) => e.event.startsWith('failover'));
    // At the level a terminal shows.
    expect(logged).toEqual([
      { event: 'failover', fields: { dataset: ds.name, chainId: 56, ...moved('b') }, level: 'warn' },
    ]);
  });

  it('fails with its route’s own error when no route stands by', async () => {
    const r = await failingOver(new Routes(), []);
    expect(r.result.ok).toBe(false);
    expect(!r.result.ok && r.result.error.message).toBe(GAVE_UP);
    expect(r.failovers).toEqual([]);
    // What the first route served before it failed is kept.
    expect(r.wh.table.size).toBe(40);
  });

  it('does not move on an error that is not the route’s (an auth error), nor on one that is not an upstream error', async () => {
    for (const failure of [
      () => new UpstreamError('HTTP 401: Invalid API key', { kind: 'auth', retryable: false }),
      () => new Error('a bug'),
    ]) {
      const routes = new Routes();
      const b = routes.add('b');
      const r = await failingOver(routes, [standbyOf(routes, 'b')], { failure });
      expect(r.result.ok).toBe(false);
      expect(r.failovers).toEqual([]);
      expect(b.metaAsked + b.sub.requests).toBe(0);
    }
  });

  it.each([
    ['lacks the entity', { roots: new Map() }, {}, 'it has no Fake entity'],
    ['filters otherwise', { changeBlock: false }, {}, 'it differs from the current route in `_change_block` filters'],
    ['does not answer', {}, { meta: new Error('socket hang up') }, 'it did not answer (socket hang up)'],
    [
      'reports indexing errors',
      {},
      { meta: { number: 105, hash: '0xhead', errors: true } },
      'it reports indexing errors',
    ],
    [
      'is behind the pinned block',
      {},
      { meta: { number: 99, hash: '0xold', errors: false } },
      "it has indexed only up to block 99, before the task's block 100",
    ],
    [
      'has another hash at the same block',
      {},
      { meta: { number: 105, hash: '0xother', errors: false } },
      'it is on another fork: at block 105 its hash is 0xother, on fake 0xhead',
    ],
    [
      'is further on but lacks the block by hash',
      {},
      { meta: { number: 110, hash: '0xnew', errors: false }, hashes: ['0xnew'] },
      'it is on another fork: it has no block with hash 0xhead (block 105 on fake); its head 110 has hash 0xnew',
    ],
    [
      'is further on and its hash lookup fails',
      {},
      { meta: { number: 110, hash: '0xnew', errors: false }, lookupFails: true },
      'it is on another fork: it has no block with hash 0xhead (block 105 on fake); its head 110 has hash 0xnew',
    ],
  ] as const)(
    'refuses a route that %s, naming why, reads nothing from it, and takes the next',
    async (_why, info, route, refused) => {
      const routes = new Routes();
      const bad = routes.add('bad', route as Parameters<Routes['add']>[1]);
      const good = routes.add('good');
      const r = await failingOver(routes, [standbyOf(routes, 'bad', info), standbyOf(routes, 'good')]);
      expect(r.result.ok).toBe(true);
      exact(r.wh);
      expect(bad.sub.requests).toBe(0);
      // The good route is at the first route's head with its hash: nothing to look up.
      expect(good.lookups).toEqual([]);
      expect(r.failovers).toEqual([moved('bad', refused), moved('good')]);
      expect(r.events.filter((e) => e.event.startsWith('failover'))).toEqual([
        {
          event: 'failover-refused',
          fields: { dataset: ds.name, chainId: 56, ...moved('bad'), refused },
          level: 'warn',
        },
        { event: 'failover', fields: { dataset: ds.name, chainId: 56, ...moved('good') }, level: 'warn' },
      ]);
    },
  );

  it('takes a route further on that has the block by hash, and one behind the first route’s head but past the pinned block', async () => {
    const routes = new Routes();
    const ahead = routes.add('ahead', {
      meta: { number: 110, hash: '0xnew', errors: false },
      hashes: ['0xnew', '0xhead'],
    });
    let r = await failingOver(routes, [standbyOf(routes, 'ahead')]);
    expect(r.result.ok).toBe(true);
    exact(r.wh);
    expect(ahead.lookups).toEqual(['0xhead']);
    expect(r.failovers).toEqual([moved('ahead')]);

    // Behind the first route's head (105) but at or past the pinned block (100): no block of its own to compare, so
    // the comparison made at the start stands, and no lookup is spent.
    const routes2 = new Routes();
    const behind = routes2.add('behind', { meta: { number: 100, hash: '0xpinned', errors: false }, hashes: [] });
    r = await failingOver(routes2, [standbyOf(routes2, 'behind')]);
    expect(r.result.ok).toBe(true);
    exact(r.wh);
    expect(behind.lookups).toEqual([]);
  });

  it('compares nothing when the first route gave no hash, and compares with the new route’s head after a second move', async () => {
    const routes = new Routes();
    // No hash known for the first route's head: nothing to compare, the route is taken as it is.
    const b = routes.add('b', { meta: { number: 105, hash: '0xunrelated', errors: false }, hashes: [] });
    const r = await failingOver(routes, [standbyOf(routes, 'b')], { head: { number: 105, hash: null } });
    expect(r.result.ok).toBe(true);
    expect(b.lookups).toEqual([]);
    exact(r.wh);

    // b takes over at head 107 (hash 0xb107), then fails too; c is at 107 with another hash: c is compared with b's
    // head, not the first route's, and refused.
    const routes2 = new Routes();
    const b2 = routes2.add('b', { meta: { number: 107, hash: '0xb107', errors: false } });
    routes2.add('c', { meta: { number: 107, hash: '0xc107', errors: false } });
    const request = b2.sub.requestBody.bind(b2.sub);
    b2.sub.requestBody = async (e, q, v) => {
      if (b2.sub.firsts.length >= 1) throw down();
      return request(e, q, v);
    };
    const r2 = await failingOver(routes2, [standbyOf(routes2, 'b'), standbyOf(routes2, 'c')]);
    expect(r2.result.ok).toBe(false);
    expect(r2.failovers).toEqual([
      moved('b'),
      {
        from: 'b',
        to: 'c',
        block: BLOCK,
        reason: GAVE_UP,
        refused: 'it is on another fork: at block 107 its hash is 0xc107, on b 0xb107',
      },
    ]);
    // The failed task keeps what it committed: the first route's two pages and b's one.
    expect(r2.wh.table.size).toBe(60);
  });

  it('moves through the routed source as a PageSource: a request to the first route goes, after the move, to the standby under its field', async () => {
    const routes = new Routes();
    const first = routes.add('fake', { root: 'fakes' });
    const b = routes.add('b', { root: 'fakeItems' });
    first.sub.failures.push(down());
    const { task, deps } = fakeTask(first.sub, new FakeWarehouse(ds), { pageSize: 20, maxAttempts: 1 });
    const pin: TaskPin = {
      block: { number: BLOCK, timestamp: 10_000 },
      root: 'fakes',
      changeBlock: true,
      head: { number: BLOCK + 5, hash: '0xhead' },
      standby: [standbyOf(routes, 'b')],
    };
    const failovers: Failover[] = [];
    const source = new RoutedSource({ task, deps: { ...deps, source: routes }, pin, failovers, stats: emptyStats() });
    const vars = { from: '0', seq: '0', id: '', until: '10000' };
    const body = await source.requestBody(task.endpoint, pageQuery(ds, 'fakes', 'seq-next'), vars);
    expect(failovers).toEqual([moved('b')]);
    expect(source.endpoint.label).toBe('b');
    expect(b.sub.firsts).toEqual([20]);
    // The body is b's, judged by b, though asked of the first route.
    const rows = source.answerData<{ rows: { id: string }[] }>(task.endpoint, body.body).rows;
    expect(rows.map((r) => r.id)).toEqual(ROWS.slice(0, 20).map((r) => r.id));
    // Later requests to the first route go to b without trying the first route again.
    await source.request(task.endpoint, pageQuery(ds, 'fakes', 'seq-next'), { ...vars, seq: '1019', id: ROWS[19]!.id });
    expect(first.sub.requests).toBe(1);
    expect(b.sub.firsts).toEqual([20, 20]);
  });
});
