/**
 * The routes of a run (`run-routes.ts`): one probe per route, the block each pins, what a host that never answers
 * makes the run say, and one choice per chain and schema. The upstream is an in-memory client that answers the probe
 * and the block-by-hash lookup and counts them, under fake timers, so that the five seconds before a wait is shown and
 * the time limits of three attempts pass at once. (The same stall against a real server that never answers, through
 * the real client: `test/integration/terminal.int.test.ts`; routes chosen against real sandboxes: `routes.test.ts`.)
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { UpstreamError } from '../../src/errors.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import { chooseRoutes, probeRoutes } from '../../src/export/routing/run-routes.ts';
import type { Answer, Endpoint, UpstreamClient } from '../../src/upstream/client.ts';
import { BLOCK_BY_HASH_QUERY, PROBE_QUERY } from '../../src/upstream/endpoint-probe.ts';

const KEY = 'k'.repeat(32);
/** 2026-11-29T00:00:00Z in seconds: 20,786 days after 1970-01-01, each of 86,400 s. */
const NOW_SECS = 1_795_910_400;
const SELF = 'http://127.0.0.1:7';
const OTHER = 'http://127.0.0.1:8';
const url = (base: string, schema: string) => `${base}/subgraph/graphql?chainId=56&schemaName=${schema}&apikey=${KEY}`;

type Head = { number: number; hash: string | null; timestamp: number | null };

/** The probe's answer for a route at `head`, without entities, with or without `_change_block` filters. */
const probeAnswer = (head: Head, changeBlock = true) => ({
  _meta: { block: head, deployment: 'Qm', hasIndexingErrors: false },
  __schema: { queryType: { fields: [] } },
  changeBlock: changeBlock ? { name: 'BlockChangedFilter' } : null,
});

/** Answers by URL: a head, or a function of the request. Counts every request by kind. */
class FakeUpstream {
  readonly probes: string[] = [];
  readonly lookups: { url: string; hash: unknown }[] = [];
  constructor(
    private readonly heads: Record<string, Head | ((timeoutMs: number) => Promise<never>)>,
    private readonly timeoutMs = 20_000,
  ) {}

  asClient(): UpstreamClient {
    return { request: (e: Endpoint, q: string, v: Record<string, unknown>) => this.request(e, q, v) } as never;
  }

  async request<T>(endpoint: Endpoint, query: string, v: Record<string, unknown>): Promise<Answer<T>> {
    if (query === BLOCK_BY_HASH_QUERY) {
      this.lookups.push({ url: endpoint.url, hash: v.hash });
      return { data: { _meta: { block: { number: 1 } } } as T, bytes: 1 };
    }
    expect(query).toBe(PROBE_QUERY);
    this.probes.push(endpoint.url);
    const head = this.heads[endpoint.url];
    if (typeof head === 'function') return head(this.timeoutMs);
    if (!head) throw new Error(`no head for ${endpoint.url}`);
    return { data: probeAnswer(head) as T, bytes: 1 };
  }
}

/** An attempt that takes the connection and never answers: the client's own time limit ends it. */
const stalled = (label: string) => (timeoutMs: number) =>
  new Promise<never>((_, reject) =>
    setTimeout(
      () =>
        reject(
          new UpstreamError(`no answer within ${timeoutMs} ms from ${label}`, { kind: 'timeout', retryable: true }),
        ),
      timeoutMs,
    ),
  );

function setup(overrides: Record<string, unknown>, datasets: string[]) {
  const config = loadConfig({
    env: {},
    overrides: { apiKey: KEY, baseUrl: SELF, chains: ['56'], timeoutMs: 20_000, ...overrides },
  });
  const tasks = buildPlan(config, { jobs: [], datasets });
  const events: { event: string; fields: Record<string, unknown>; level: string }[] = [];
  const log = (event: string, fields: Record<string, unknown>, level = 'info') => {
    events.push({ event, fields, level });
  };
  return { config, tasks, events, log };
}

/** The exchange subgraph's label on a route: its address without the key. */
const label = (base: string) => `${base}/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=***`;

/** Two routes for BNB Chain's exchange subgraph: the first at block 1000, the second at `otherHead`, one chain. */
async function twoRoutes(datasets: string[], otherHead: number) {
  const routes = { '56/dodoex': [{ kind: 'self' }, { kind: 'self', baseUrl: OTHER }] };
  const { config, tasks, log, events } = setup({ routes }, datasets);
  const up = new FakeUpstream({
    [url(SELF, 'dodoex')]: { number: 1000, hash: '0xa', timestamp: 1 },
    [url(OTHER, 'dodoex')]: { number: otherHead, hash: '0xb', timestamp: 2 },
  });
  const client = up.asClient();
  const chosen = await chooseRoutes({ config, tasks, log, client }, await probeRoutes({ config, tasks, log, client }));
  return { tasks, events, up, chosen };
}

describe('the routes of a run', () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: NOW_SECS * 1000 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('probes each route once, pins it at its head less the confirmations (not below 0), at the head’s time or now', async () => {
    const { config, tasks, log, events } = setup({ confirmations: 5 }, [
      'list.liquidity',
      'dodoex.swaps',
      'dodoex.pairs',
      'token.tokens',
    ]);
    const up = new FakeUpstream({
      [url(SELF, 'dodoex')]: { number: 1000, hash: '0xaa', timestamp: 1_700_000_000 },
      // A route without block times (some graph-node versions) and barely started.
      [url(SELF, 'token')]: { number: 3, hash: null, timestamp: null },
    });
    const probed = await probeRoutes({ config, tasks, log, client: up.asClient() });
    // The list is stamped with the exchange route's head: it adds no probe.
    expect(up.probes.sort()).toEqual([url(SELF, 'dodoex'), url(SELF, 'token')]);
    const blocks = Object.fromEntries([...probed].map(([u, p]) => [u, p instanceof Error ? p : p.block]));
    expect(blocks).toEqual({
      [url(SELF, 'dodoex')]: { number: 995, timestamp: 1_700_000_000 },
      [url(SELF, 'token')]: { number: 0, timestamp: NOW_SECS },
    });
    expect(events).toEqual([]);
  });

  it.each([
    [8, 3, '3 times'],
    [1, 1, 'once'],
  ])(
    'a host that never answers (maxAttempts %i): it says after 5 s what it waits for, each attempt, then fails all its routes in one line',
    async (maxAttempts, attempts, times) => {
      // The list alone asks for the exchange subgraph's head, and names that subgraph.
      const { config, tasks, log, events } = setup({ maxAttempts }, ['list.liquidity', 'token.tokens']);
      const selfLabel = (schema: string) => `${SELF}/subgraph/graphql?chainId=56&schemaName=${schema}&apikey=***`;
      const up = new FakeUpstream({
        [url(SELF, 'dodoex')]: stalled(selfLabel('dodoex')),
        [url(SELF, 'token')]: stalled(selfLabel('token')),
      });
      const done = probeRoutes({ config, tasks, log, client: up.asClient() });
      await vi.runAllTimersAsync();
      const probed = await done;
      // The first route of the host (the list's: the exchange subgraph) is asked; the token route is not.
      expect(up.probes).toEqual(Array(attempts).fill(url(SELF, 'dodoex')));
      const what = 'the head block of dodoex on bsc';
      expect(events.filter((e) => e.event === 'waiting')).toEqual(
        Array.from({ length: attempts }, (_, i) => ({
          event: 'waiting',
          fields: { host: '127.0.0.1:7', for: what, attempt: i + 1, of: attempts, seconds: 5, limitMs: 20_000 },
          level: 'warn',
        })),
      );
      expect(events.filter((e) => e.event === 'retry').map((e) => [e.fields.attempt, e.fields.kind])).toEqual(
        Array.from({ length: attempts - 1 }, (_, i) => [i + 1, 'timeout']),
      );
      const message = `the upstream host 127.0.0.1:7 took the connection but sent no answer to ${what} within 20000 ms, ${times}: check that 127.0.0.1:7 is the service's address and that the service is up (the time limit is timeoutMs)`;
      expect(events.filter((e) => e.level === 'error')).toEqual([
        { event: 'host-stalled', fields: { host: '127.0.0.1:7', endpoints: 2, error: message }, level: 'error' },
      ]);
      for (const u of [url(SELF, 'dodoex'), url(SELF, 'token')]) {
        const p = probed.get(u);
        expect(p).toBeInstanceOf(UpstreamError);
        expect([(p as UpstreamError).message, (p as UpstreamError).kind]).toEqual([message, 'timeout']);
      }
    },
  );

  it('a body that trickles past the time limit is named in its own words, not as a host that never answered', async () => {
    const { config, tasks, log, events } = setup({ maxAttempts: 1 }, ['dodoex.swaps']);
    const trickle = 'the answer did not finish within 20000 ms (its headers came, its body did not)';
    const up = new FakeUpstream({
      [url(SELF, 'dodoex')]: () => Promise.reject(new UpstreamError(trickle, { kind: 'timeout', retryable: true })),
    });
    const probed = await probeRoutes({ config, tasks, log, client: up.asClient() });
    const error = `${trickle} (gave up after 1 attempt)`;
    expect((probed.get(url(SELF, 'dodoex')) as Error).message).toBe(error);
    expect(events).toEqual([
      { event: 'host-stalled', fields: { host: '127.0.0.1:7', endpoints: 1, error }, level: 'error' },
    ]);
  });

  it('a host that answers in time says nothing of waiting, even with a time limit over 5 s', async () => {
    const { config, tasks, log, events } = setup({}, ['dodoex.swaps']);
    const up = new FakeUpstream({
      [url(SELF, 'dodoex')]: () =>
        new Promise((r) =>
          setTimeout(
            () => r({ data: probeAnswer({ number: 9, hash: '0x9', timestamp: 5 }, false), bytes: 1 } as never),
            4_999,
          ),
        ),
    });
    const done = probeRoutes({ config, tasks, log, client: up.asClient() });
    await vi.runAllTimersAsync();
    const p = (await done).get(url(SELF, 'dodoex'))!;
    expect(p instanceof Error ? p : [p.block, p.info.changeBlock]).toEqual([{ number: 9, timestamp: 5 }, false]);
    // The face of the wait is cleared with the answer: none shows later either.
    await vi.advanceTimersByTimeAsync(60_000);
    expect(events).toEqual([]);
  });

  it('chooses once per chain and schema for all of its tasks; the list keeps its own endpoint, at the chosen head', async () => {
    const { tasks, events, up, chosen } = await twoRoutes(['list.liquidity', 'dodoex.swaps', 'dodoex.pairs'], 1010);
    // One look at the second route for the first's head (are they on one chain?), for the three tasks.
    expect(up.lookups).toEqual([{ url: url(OTHER, 'dodoex'), hash: '0xa' }]);
    for (const t of tasks) {
      const r = chosen.get(t)!;
      expect(r.route, t.ds.name).toBe(label(SELF));
      expect(r.endpoint, t.ds.name).toEqual(t.endpoint);
      expect(r.standby!.map((s) => s.endpoint.label)).toEqual([label(OTHER)]);
      expect(r.views!.map((v) => [v.state, v.lagBlocks])).toEqual([
        ['chosen', 10],
        ['standby', 0],
      ]);
    }
    // The list reads the service's list endpoint, not a subgraph.
    expect(tasks[0]!.endpoint.label).not.toContain('subgraph');
    // The first route, chosen, is no news.
    expect(events).toEqual([]);
  });

  it('passes over a route further behind than maxLagBlocks: the subgraph tasks read the chosen route, the list its own endpoint', async () => {
    const { tasks, events, chosen } = await twoRoutes(['list.liquidity', 'dodoex.swaps'], 1051);
    const [list, swaps] = tasks.map((t) => chosen.get(t)!);
    expect([list!.route, swaps!.route]).toEqual([label(OTHER), label(OTHER)]);
    expect(list!.endpoint).toEqual(tasks[0]!.endpoint);
    expect(swaps!.endpoint.label).toBe(label(OTHER));
    // Both are pinned at the chosen route's head.
    for (const r of [list!, swaps!]) expect(r.probe instanceof Error ? r.probe : r.probe.block.number).toBe(1051);
    expect(swaps!.standby).toEqual([]);
    const passedOver = [
      {
        label: label(SELF),
        head: 1000,
        lagBlocks: 51,
        state: 'behind',
        note: '51 blocks behind the freshest route (maxLagBlocks 50)',
      },
    ];
    expect(events.filter((e) => e.event === 'route-chosen')).toEqual(
      ['list.liquidity', 'dodoex.swaps'].map((dataset) => ({
        event: 'route-chosen',
        fields: { dataset, chain: 'bsc', chainId: 56, route: label(OTHER), passedOver },
        level: 'warn',
      })),
    );
  });
});
