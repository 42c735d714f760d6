/**
 * The routed source as a `PageSource` of its own (a decorator of the task's source), tested with the source fakes:
 * answered as the fake answers, its requests retried and counted, the page size halved after time-outs, and requests
 * to another route sent there without failover. (Failover through it: failover.test.ts.)
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import { pageQuery } from '../../src/export/queries.ts';
import { RouteHealth } from '../../src/export/routing/route-health.ts';
import { MIN_PAGE_SIZE } from '../../src/export/routing/routed-requests.ts';
import { RoutedSource } from '../../src/export/routing/routed-source.ts';
import { emptyStats } from '../../src/export/task.ts';
import type { Endpoint } from '../../src/upstream/client.ts';
import {
  type FakeRow,
  FakeSubgraph,
  FakeWarehouse,
  fakeDataset,
  fakeTask,
  pinAt,
  timeout,
} from '../support/task-fakes.ts';

const ds = fakeDataset('event');
const ROWS: FakeRow[] = Array.from({ length: 30 }, (_, i) => ({
  id: `0x${(i + 1).toString(16).padStart(3, '0')}`,
  seq: 500 + i,
  value: `v${i}`,
  changed: 1,
}));
const QUERY = pageQuery(ds, 'fakes', 'seq-next');
const VARS = { from: '500', seq: '499', id: '', until: '10000' };

function routed(opts: { pageSize?: number; maxAttempts?: number; timeoutMs?: number; routes?: RouteHealth } = {}) {
  const sub = new FakeSubgraph(ds);
  sub.rows = ROWS;
  const { routes, ...sizes } = opts;
  const made = fakeTask(sub, new FakeWarehouse(ds), { pageSize: 10, maxAttempts: 3, ...sizes });
  const { task, events } = made;
  const deps = routes ? { ...made.deps, routes } : made.deps;
  const stats = emptyStats();
  const source = new RoutedSource({ task, deps, pin: pinAt(100, 10_000), failovers: [], stats });
  return { sub, source, stats, events, endpoint: task.endpoint };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('the routed source as a PageSource', () => {
  it('answers a page as the source it routes does, with the page size as `first`', async () => {
    const { sub, source, endpoint, stats } = routed();
    const direct = new FakeSubgraph(ds);
    direct.rows = ROWS;
    const want = await direct.requestBody(endpoint, QUERY, { ...VARS, first: 10 });
    const got = await source.requestBody(endpoint, QUERY, VARS);
    expect(Buffer.from(got.body).toString()).toBe(Buffer.from(want.body).toString());
    expect(got.bytes).toBe(want.bytes);
    // The rows of the answer are the first ten by key, judged by the fake itself.
    const data = source.answerData<{ rows: { id: string }[] }>(endpoint, got.body);
    expect(data.rows.map((r) => r.id)).toEqual(ROWS.slice(0, 10).map((r) => r.id));
    const answer = await source.request<{ rows: unknown[] }>(endpoint, QUERY, VARS);
    expect(answer.data).toEqual(direct.answerData(endpoint, want.body));
    expect(sub.firsts).toEqual([10, 10]);
    expect(stats).toMatchObject({ requests: 2, retries: 0, bytes: want.bytes * 2 });
    // A request that sets its own `first` keeps it.
    await source.request(endpoint, QUERY, { ...VARS, first: 3 });
    expect(sub.firsts.at(-1)).toBe(3);
  });

  it('retries a failed request, counting each attempt, and halves the page size after a time-out down to its floor', async () => {
    const { sub, source, stats, events, endpoint } = routed({ pageSize: 120, maxAttempts: 4 });
    sub.failures.push(timeout(), timeout());
    const got = await source.requestBody(endpoint, QUERY, VARS);
    // 120 halved twice is 30, under the floor: the third attempt asks for the floor.
    expect(sub.firsts).toEqual([MIN_PAGE_SIZE]);
    expect(source.size).toBe(MIN_PAGE_SIZE);
    expect(stats).toMatchObject({ requests: 3, retries: 2, bytes: got.bytes });
    expect(events.filter((e) => e.event === 'retry').map((e) => e.fields.attempt)).toEqual([1, 2]);
    // A failure that is not a time-out leaves the size alone.
    sub.failures.push(new UpstreamError('HTTP 502', { kind: 'http', retryable: true }));
    await source.request(endpoint, QUERY, VARS);
    expect(sub.firsts.at(-1)).toBe(MIN_PAGE_SIZE);
    // A retry after a time-out is a wait, shown on a terminal (warn); one after an HTTP error is not (info).
    expect(events.filter((e) => e.event === 'retry').map((e) => `${e.fields.kind} ${e.level}`)).toEqual([
      'timeout warn',
      'timeout warn',
      'http info',
    ]);
  });

  it('a route whose request ended its retries on time-outs is given up: the run’s other requests there fail at once', async () => {
    const health = new RouteHealth();
    const first = routed({ maxAttempts: 2, routes: health });
    first.sub.failures.push(timeout(), timeout());
    const message =
      "no answer within 10 ms from fake (gave up after 2 attempts); the route stopped answering during the run and is given up until the next run: check the service's status, or raise timeoutMs (config) if its answers are only slow";
    const failed = await first.source.request(first.endpoint, QUERY, VARS).catch((x: unknown) => x);
    expect((failed as Error).message).toBe(message);
    // Each wait was on the terminal's level, with its attempt.
    expect(first.events.filter((e) => e.event === 'retry').map((e) => [e.fields.attempt, e.fields.of])).toEqual([
      [1, 2],
    ]);
    // Another task on the same route: the same error, and no request sent.
    const other = routed({ maxAttempts: 8, routes: health });
    const e = await other.source.requestBody(other.endpoint, QUERY, VARS).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UpstreamError);
    expect([(e as UpstreamError).message, (e as UpstreamError).kind, (e as UpstreamError).retryable]).toEqual([
      message,
      'timeout',
      false,
    ]);
    expect(other.sub.requests).toBe(0);
    expect(other.stats.requests).toBe(0);
    // Errors of the request, not of the route, give nothing up.
    const kept = new RouteHealth();
    const third = routed({ maxAttempts: 2, routes: kept });
    third.sub.failures.push(
      new UpstreamError('HTTP 502', { kind: 'http', retryable: true }),
      new UpstreamError('HTTP 502', { kind: 'http', retryable: true }),
    );
    await expect(third.source.request(third.endpoint, QUERY, VARS)).rejects.toThrow('HTTP 502');
    const fourth = routed({ routes: kept });
    await fourth.source.request(fourth.endpoint, QUERY, VARS);
    expect(fourth.sub.requests).toBe(1);
  });

  it('an attempt unanswered for 5 s says what it waits for, once per time limit for the route', async () => {
    vi.useFakeTimers();
    const health = new RouteHealth();
    const a = routed({ routes: health, timeoutMs: 30_000 });
    const b = routed({ routes: health, timeoutMs: 30_000 });
    let answer = () => {};
    const gate = new Promise<void>((r) => (answer = r));
    a.sub.gate = gate;
    b.sub.gate = gate;
    const waits = () => [...a.events, ...b.events].filter((e) => e.event === 'waiting');
    const asked = [a, b].map((t) => t.source.request(t.endpoint, QUERY, VARS));
    await vi.advanceTimersByTimeAsync(4_900);
    expect(waits()).toEqual([]);
    await vi.advanceTimersByTimeAsync(200);
    // Two requests wait on the route: one line, with the host, the task, the attempt and the time limit.
    expect(waits().map((e) => e.fields)).toEqual([
      { host: '127.0.0.1:1', for: `${ds.name} on bsc`, attempt: 1, of: 3, seconds: 5, limitMs: 30_000 },
    ]);
    answer();
    await Promise.all(asked);
    // Answered: nothing more is said, and a request answered within 5 s says nothing.
    a.sub.gate = undefined;
    await a.source.request(a.endpoint, QUERY, VARS);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(waits()).toHaveLength(1);
  });

  it('a lone attempt unanswered for 5 s says so at warn; none answered sooner, none under a limit of 5 s, none without route health', async () => {
    vi.useFakeTimers();
    const waits = (t: ReturnType<typeof routed>) => t.events.filter((e) => e.event === 'waiting');
    /** A request of `t` answered after `ms`, and what it logged 60 s on. */
    const answeredAfter = async (t: ReturnType<typeof routed>, ms: number) => {
      let answer = () => {};
      t.sub.gate = new Promise<void>((r) => (answer = r));
      const asked = t.source.request(t.endpoint, QUERY, VARS);
      await vi.advanceTimersByTimeAsync(ms);
      const before = waits(t).map((e) => `${e.fields.attempt} ${e.level}`);
      answer();
      await asked;
      await vi.advanceTimersByTimeAsync(60_000);
      return { before, after: waits(t).length };
    };
    // Alone on its route, unanswered at 5.1 s: one line, at the level a terminal shows.
    expect(await answeredAfter(routed({ routes: new RouteHealth(), timeoutMs: 30_000 }), 5_100)).toEqual({
      before: ['1 warn'],
      after: 1,
    });
    // Answered at 1 s: nothing, then or later.
    expect(await answeredAfter(routed({ routes: new RouteHealth(), timeoutMs: 30_000 }), 1_000)).toEqual({
      before: [],
      after: 0,
    });
    // A time limit of 5 s or less says it itself; a source with no route health (a repair) has no face.
    expect(await answeredAfter(routed({ routes: new RouteHealth(), timeoutMs: 5_000 }), 5_100)).toEqual({
      before: [],
      after: 0,
    });
    expect(await answeredAfter(routed({ timeoutMs: 30_000 }), 5_100)).toEqual({ before: [], after: 0 });
  });

  it('requests of one route that end their retries together fail with one message, the same as later ones', async () => {
    const health = new RouteHealth();
    // One attempt each, both sent before either fails: they end their retries together.
    const a = routed({ maxAttempts: 1, routes: health });
    const b = routed({ maxAttempts: 1, routes: health });
    a.sub.failures.push(timeout());
    b.sub.failures.push(timeout());
    const errors = await Promise.all(
      [a, b].map((t) => t.source.request(t.endpoint, QUERY, VARS).catch((x: unknown) => (x as Error).message)),
    );
    const later = routed({ routes: health });
    errors.push(await later.source.request(later.endpoint, QUERY, VARS).catch((x: unknown) => (x as Error).message));
    expect(new Set(errors).size, errors.join('\n')).toBe(1);
    expect(errors[0]).toMatch(/gave up after 1 attempt\); the route stopped answering during the run/);
    // An unreachable route's message names no time limit.
    const refused = new RouteHealth();
    const c = routed({ maxAttempts: 1, routes: refused });
    c.sub.failures.push(new UpstreamError('connection refused by fake', { kind: 'unreachable', retryable: true }));
    const m = await c.source.request(c.endpoint, QUERY, VARS).catch((x: unknown) => (x as Error).message);
    expect(m).toBe(
      "connection refused by fake (gave up after 1 attempt); the route stopped answering during the run and is given up until the next run: check the service's status",
    );
  });

  it('gives up after its attempts with the route’s error, and does not retry an error that is not retryable', async () => {
    const { sub, source, stats, endpoint } = routed({ maxAttempts: 2 });
    sub.failures.push(timeout(), timeout());
    await expect(source.request(endpoint, QUERY, VARS)).rejects.toThrow(
      'no answer within 10 ms from fake (gave up after 2 attempts)',
    );
    expect(stats.requests).toBe(2);
    sub.failures.push(new UpstreamError('HTTP 401: Invalid API key', { kind: 'auth', retryable: false }));
    await expect(source.requestBody(endpoint, QUERY, VARS)).rejects.toThrow('HTTP 401: Invalid API key');
    expect(stats.requests).toBe(3);
    expect(sub.firsts).toEqual([]);
  });

  it('reads a page the checker leaves to it (extensions beside the data) as its rows, and names rows that are no list', async () => {
    const { sub, source, stats } = routed();
    const request = sub.requestBody.bind(sub);
    // The answer as the route sends it, given the fake's data; it says it cost 3 requests (as an answer of a batch
    // read does).
    let answer = (data: unknown): unknown => ({ data, extensions: { cost: 1 } });
    const sent: number[] = [];
    sub.requestBody = async (e, q, v) => {
      const { body } = await request(e, q, v);
      const text = JSON.stringify(answer(JSON.parse(Buffer.from(body).toString('utf8')).data));
      sent.push(Buffer.byteLength(text));
      return { body: Buffer.from(text), bytes: Buffer.byteLength(text), requests: 3 };
    };
    const page = await source.fetchPage('seq-next', VARS);
    expect(page.count).toBe(10);
    expect(page.kept).toBeUndefined();
    expect((page.rows as { id: string }[]).map((r) => r.id)).toEqual(ROWS.slice(0, 10).map((r) => r.id));
    expect([page.first?.id, page.last?.id]).toEqual([ROWS[0]!.id, ROWS[9]!.id]);
    expect(stats).toMatchObject({ requests: 3, bytes: sent[0] });
    // Rows that are an object: a GarbageError that shows the first 80 characters of what came.
    answer = () => ({ data: { rows: { note: 'x'.repeat(200) } } });
    const err = await source.fetchPage('seq-next', VARS).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.name).toBe('GarbageError');
    expect(err?.message).toContain(`field "rows": expected a list of Fake rows, got {"note":"${'x'.repeat(71)}. `);
  });

  it('sends a request to another route there, retried but as asked (no `first` added)', async () => {
    const { sub, source, stats } = routed();
    const other: Endpoint = { url: 'http://127.0.0.1:1/other', label: 'other', host: '127.0.0.1:1' } as Endpoint;
    const asked: string[] = [];
    const request = sub.request.bind(sub);
    sub.request = async (e, q, v) => {
      asked.push(e.label);
      return request(e, q, v);
    };
    sub.failures.push(timeout());
    await source.request(other, QUERY, { ...VARS, first: 7 });
    expect(asked).toEqual(['other', 'other']);
    expect(sub.asked.at(-1)).toEqual({ ...VARS, first: 7 });
    expect(stats).toMatchObject({ requests: 2, retries: 1 });
    // A batch read's body there alike: to that route, with no `first` added.
    const requestBody = sub.requestBody.bind(sub);
    sub.requestBody = async (e, q, v) => {
      asked.push(`${e.label} body`);
      return requestBody(e, q, v);
    };
    sub.failures.push(timeout());
    await source.requestBody(other, QUERY, VARS);
    expect(asked.slice(2)).toEqual(['other body', 'other body']);
    expect(sub.asked.at(-1)).toEqual(VARS);
    expect(stats).toMatchObject({ requests: 4, retries: 2 });
  });
});

describe('the face of a route that keeps a request waiting', () => {
  it('is due once per interval per route, however many of its requests wait', () => {
    const health = new RouteHealth();
    const [a, b] = ['http://127.0.0.1:1/a', 'http://127.0.0.1:1/b'];
    expect(health.faceDue(a, 1_000, 5_000)).toBe(true);
    // Another request of the same route within the interval: no second line; another route's is its own.
    expect(health.faceDue(a, 5_999, 5_000)).toBe(false);
    expect(health.faceDue(b, 5_999, 5_000)).toBe(true);
    // The interval run out: due again, and the next interval counts from then.
    expect(health.faceDue(a, 6_000, 5_000)).toBe(true);
    expect(health.faceDue(a, 10_999, 5_000)).toBe(false);
    expect(health.faceDue(a, 11_000, 5_000)).toBe(true);
  });
});
