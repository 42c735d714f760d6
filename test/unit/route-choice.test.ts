/**
 * The choice of a task's route among several, on probes written out here: health, forks (same block, different
 * hash; or a hash the other route does not know), lag against the freshest, and the two modes.
 */
import { describe, expect, it } from 'vitest';
import { UpstreamError } from '../../src/errors.ts';
import {
  chooseRoute,
  type HashLookup,
  hasBlock,
  noRouteMessage,
  type RouteProbe,
} from '../../src/export/routing/route-choice.ts';
import type { PageSource } from '../../src/export/seams.ts';
import type { Endpoint } from '../../src/upstream/client.ts';

const endpoint = (name: string): Endpoint => ({ url: `http://127.0.0.1:1/${name}`, label: name, host: '127.0.0.1:1' });

/** A route whose head is `n` with `hash` (by default one shared chain: `0x<n>`). */
function at(name: string, n: number, hash = `0x${n.toString(16)}`): RouteProbe {
  return {
    endpoint: endpoint(name),
    probe: {
      block: { number: n, timestamp: 1_000 + n },
      info: {
        head: { number: n, hash, timestamp: 1_000 + n },
        deployment: 'Qm',
        hasIndexingErrors: false,
        roots: new Map(),
        changeBlock: true,
      },
    },
  };
}
const down = (name: string, message = 'the upstream host could not be reached'): RouteProbe => ({
  endpoint: endpoint(name),
  probe: new Error(message),
});

/** Every route on one chain whose blocks hash to `0x<n>`, except hashes listed as unknown to a route. */
function chain(unknown: Record<string, string[]> = {}): { lookup: HashLookup; asked: string[] } {
  const asked: string[] = [];
  return {
    asked,
    lookup: async (e, hash) => {
      asked.push(`${e.label}:${hash}`);
      return !(unknown[e.label] ?? []).includes(hash);
    },
  };
}

const choose = (routes: RouteProbe[], o: Partial<Parameters<typeof chooseRoute>[1]> = {}) =>
  chooseRoute(routes, { maxLagBlocks: 50, mode: 'first-healthy', lookup: chain().lookup, ...o });

describe('choosing a route', () => {
  it('takes the first healthy route in order, within maxLagBlocks of the freshest', async () => {
    const c = await choose([down('a'), at('b', 1000), at('c', 1050)]);
    expect(c.chosen?.endpoint.label).toBe('b');
    expect(c.views).toEqual([
      { label: 'a', head: null, lagBlocks: null, state: 'unhealthy', note: 'the upstream host could not be reached' },
      { label: 'b', head: 1000, lagBlocks: 50, state: 'chosen', note: null },
      { label: 'c', head: 1050, lagBlocks: 0, state: 'standby', note: null },
    ]);
  });

  it('passes over a route more than maxLagBlocks behind the freshest', async () => {
    const c = await choose([at('a', 500), at('b', 1000)]);
    expect(c.chosen?.endpoint.label).toBe('b');
    expect(c.views[0]).toEqual({
      label: 'a',
      head: 500,
      lagBlocks: 500,
      state: 'behind',
      note: '500 blocks behind the freshest route (maxLagBlocks 50)',
    });
    expect((await choose([at('a', 949), at('b', 1000)])).chosen?.endpoint.label).toBe('b');
    expect((await choose([at('a', 950), at('b', 1000)])).chosen?.endpoint.label).toBe('a');
    expect((await choose([at('a', 1000), at('b', 1000)], { maxLagBlocks: 0 })).chosen?.endpoint.label).toBe('a');
  });

  it('in freshest mode takes the highest head, the earlier route on a tie', async () => {
    const mode = 'freshest' as const;
    expect((await choose([at('a', 990), at('b', 1000), at('c', 995)], { mode })).chosen?.endpoint.label).toBe('b');
    expect((await choose([at('a', 1000), at('b', 1000)], { mode })).chosen?.endpoint.label).toBe('a');
    expect((await choose([down('a'), at('b', 10)], { mode })).chosen?.endpoint.label).toBe('b');
  });

  it('refuses a route with another hash at the same block, naming both', async () => {
    const c = await choose([at('a', 1000, '0xaaa'), at('b', 1000, '0xbbb')]);
    expect(c.chosen?.endpoint.label).toBe('a');
    expect(c.views[1]).toEqual({
      label: 'b',
      head: 1000,
      lagBlocks: 0,
      state: 'forked',
      note: 'on another fork than a: at block 1000 its hash is 0xbbb, there 0xaaa',
    });
  });

  it('asks the route with the higher head whether it has the lower head\u2019s block, and refuses when it has not', async () => {
    const same = chain();
    const c = await choose([at('a', 1000), at('b', 1010)], { lookup: same.lookup });
    expect(c.chosen?.endpoint.label).toBe('a');
    expect(same.asked).toEqual(['b:0x3e8']);
    const forked = chain({ a: ['0x3f2'] });
    const d = await choose([at('a', 1020), at('b', 1010)], { lookup: forked.lookup });
    expect(forked.asked).toEqual(['a:0x3f2']);
    expect(d.views[1]).toMatchObject({
      state: 'forked',
      note: 'on another fork than a: block 1010 has hash 0x3f2 on b, which a does not have (its head 1020 has hash 0x3fc)',
    });
    // A forked route does not count as the freshest: the first route is not behind it.
    const e = await choose([at('a', 900), at('b', 1000, '0xf0')], { lookup: chain({ b: ['0x384'] }).lookup });
    expect(e.chosen?.endpoint.label).toBe('a');
    expect(e.views.map((v) => [v.state, v.lagBlocks])).toEqual([
      ['chosen', 0],
      ['forked', 0],
    ]);
  });

  it('keeps a route whose fork cannot be told: no hash, or a lookup that failed', async () => {
    expect((await choose([at('a', 1000, ''), at('b', 1000, '0xb')])).views[1]!.state).toBe('standby');
    const c = await choose([at('a', 1000), at('b', 1010)], { lookup: async () => undefined });
    expect(c.views[1]!.state).toBe('standby');
  });

  it('spends no request on a single route or on routes at one block with one hash', async () => {
    const one = chain();
    await choose([at('a', 1000)], { lookup: one.lookup });
    await choose([at('a', 1000), at('b', 1000)], { lookup: one.lookup });
    expect(one.asked).toEqual([]);
  });

  it('chooses none when every route is passed over, and says why each was', async () => {
    const c = await choose([down('a', 'indexing errors'), down('b', 'auth error')]);
    expect(c.chosen).toBeUndefined();
    expect(noRouteMessage(c.views)).toBe(
      'no route can serve it: route 1 (a): unhealthy, indexing errors; route 2 (b): unhealthy, auth error',
    );
    // A route passed over with nothing more to say is named with its state alone.
    const bare = { label: 'c', head: 900, lagBlocks: 100, state: 'behind', note: null } as const;
    expect(noRouteMessage([bare])).toBe('no route can serve it: route 1 (c): behind');
  });
});

describe('asking a route for a block by hash', () => {
  /** A route that answers the lookup with `answer`: data, or an error thrown. */
  const route = (answer: unknown): Pick<PageSource, 'request'> => ({
    request: async <T>() => {
      if (answer instanceof Error) throw answer;
      return { data: answer as T, bytes: 1 };
    },
  });
  const graphql = (m: string) => new UpstreamError(m, { kind: 'graphql', retryable: false });

  it('yes when it answers, no only when graph-node says it has no such block, unknown on any other failure', async () => {
    const e = endpoint('r');
    expect(await hasBlock(route({ _meta: { block: { number: 5 } } }), e, '0xab')).toBe(true);
    // graph-node's text for a hash it does not have (graph-node-semantics.md).
    expect(
      await hasBlock(
        route(graphql('GraphQL error: Failed to decode `block.hash` value: `no block with that hash found`')),
        e,
        '0xab',
      ),
    ).toBe(false);
    expect(await hasBlock(route(graphql('GraphQL error: store error: timeout')), e, '0xab')).toBeUndefined();
    expect(
      await hasBlock(route(new UpstreamError('HTTP 502: bad gateway', { kind: 'http', retryable: true })), e, '0xab'),
    ).toBeUndefined();
    // The same words outside an upstream answer (a bug of ours) prove nothing about the route.
    expect(await hasBlock(route(new Error('no block with that hash found')), e, '0xab')).toBeUndefined();
  });
});
