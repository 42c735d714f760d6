/**
 * Conformance of the sandbox with the service, against the sandbox started as a real process: auth, routes and the
 * gateway; faults, rate limits and counters.
 */
import { GraphQLClient, gql } from 'graphql-request';
import { describe, expect, it } from 'vitest';
import { LIQUIDITY_LIST_BODY } from '../../src/sandbox/seed-queries.ts';
import { sb, useConformanceSandbox } from '../support/conformance-sandbox.ts';
import { post, query, subgraphPath } from '../support/sandbox-client.ts';

useConformanceSandbox();

describe('auth, routes and the gateway', () => {
  it('answers a missing or unknown key with 401 and the service texts', async () => {
    const q = { query: '{ swaps { id } }' };
    const none = await post(sb, '/subgraph/graphql?chainId=1&schemaName=dodoex', q);
    expect([none.status, none.body.message]).toEqual([401, 'Missing API key in request']);
    const bad = await post(sb, '/subgraph/graphql?chainId=1&schemaName=dodoex&apikey=nope', q);
    expect([bad.status, bad.body.message]).toEqual([401, 'Invalid API key in request']);
    const list = await post(sb, '/graphql?opname=FetchLiquidityList', LIQUIDITY_LIST_BODY);
    expect(list.status).toBe(401);
  });

  it('accepts the schema spellings exchange and mine', async () => {
    expect((await query(sb, 1, 'exchange', '{ dodoZoos { id } }')).dodoZoos[0].id).toBe('dodoex-v2');
    expect(await query(sb, 1, 'mine', '{ minePools(first: 1) { id } }')).toHaveProperty('minePools');
  });

  it('serves the gateway route with its key rules and error texts', async () => {
    const info = await sb.control<{ subgraphs: { chainId: number; schema: string; subgraphId: string }[] }>('info');
    const id = info.subgraphs.find((s) => s.chainId === 56 && s.schema === 'dodoex')!.subgraphId;
    const q = { query: '{ dodoZoos { id } }' };
    const msg = async (key: string, sid = id) =>
      (await post(sb, `/api/${key}/subgraphs/id/${sid}`, q)).body.errors?.[0]?.message;
    expect(await msg('abc')).toBe('auth error: malformed API key');
    expect(await msg('0'.repeat(32))).toBe('auth error: API key not found');
    expect(await msg(sb.apiKey, 'NoSuchSubgraph')).toBe('subgraph not found: NoSuchSubgraph');
    const ok = await post(sb, `/api/${sb.apiKey}/subgraphs/id/${id}`, q);
    expect(ok.body.data!.dodoZoos[0].id).toBe('dodoex-v2-bsc');
    const range = await post(sb, `/api/${sb.apiKey}/subgraphs/id/${id}`, { query: '{ swaps(first: 5000) { id } }' });
    expect(range.body.errors![0]!.message).toMatch(
      /^bad indexers: \{0x[0-9a-f]{40}: BadResponse\(unattestable response: The `first` argument must be between 0 and 1000, but is 5000\)\}$/,
    );
  });

  it('supports introspection, so a GraphQL client can read the schema', async () => {
    const client = new GraphQLClient(`${sb.url}${subgraphPath(sb, 1, 'token')}`);
    const r = await client.request<{ __schema: { types: { name: string }[] } }>(gql`{ __schema { types { name } } }`);
    const names = r.__schema.types.map((t) => t.name);
    expect(names).toEqual(expect.arrayContaining(['Token', 'Token_filter', 'Token_orderBy', '_Meta_', 'Block_height']));
    const tokens = await client.request<{ tokens: { id: string; symbol: string }[] }>(
      gql`query T($n: Int!) { tokens(first: $n) { id symbol } }`,
      { n: 2 },
    );
    expect(tokens.tokens).toHaveLength(2);
  });
});

describe('faults, rate limits and counters', () => {
  it('limits the rate with 429 and Retry-After, injects faults on request, and counts what it served', async () => {
    await sb.control('stats', {});
    await sb.control('faults', { rateLimit: 5 });
    const statuses: number[] = [];
    let retryAfter: string | null = null;
    for (let i = 0; i < 12; i++) {
      const a = await post(
        sb,
        subgraphPath(sb, 1, 'dodoex'),
        { query: '{ _meta { block { number } } }' },
        { 'user-agent': 'dodo-dev42' },
      );
      statuses.push(a.status);
      if (a.status === 429) retryAfter = a.headers.get('retry-after');
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    await sb.control('faults', { rateLimit: 0, faults: 'http500=1' });
    const res = await fetch(`${sb.url}${subgraphPath(sb, 1, 'dodoex')}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"query":"{ _meta { deployment } }"}',
    });
    expect(res.status).toBe(500);
    await sb.control('faults', { faults: 'indexing=1' });
    const idx = await post(sb, subgraphPath(sb, 1, 'dodoex'), {
      query: '{ swaps(first: 1) { id } _meta { hasIndexingErrors } }',
    });
    expect(idx.body.errors![0]!.message).toBe('indexing_error');
    expect(idx.body.data).toEqual({ _meta: { hasIndexingErrors: true } });
    await sb.control('faults', { faults: '' });
    const stats = await sb.control<{
      requests: number;
      rateLimited: number;
      userAgents: Record<string, number>;
      faults: Record<string, number>;
    }>('stats');
    expect(stats.requests).toBe(14);
    expect(stats.userAgents['dodo-dev42']).toBe(12);
    expect(stats.faults).toEqual({ http500: 1, indexing: 1 });
  });
});
