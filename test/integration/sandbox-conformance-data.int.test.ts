/**
 * Conformance of the sandbox's generated data, against the sandbox started as a real process: its consistency, the
 * liquidity list, and the query shapes the documentation shows.
 */

import { describe, expect, it } from 'vitest';
import { LIQUIDITY_LIST_BODY, SEED_QUERIES } from '../../src/sandbox/seed-queries.ts';
import * as X from '../../src/util/exact.ts';
import { sb, useConformanceSandbox } from '../support/conformance-sandbox.ts';
import { allRows, post, query } from '../support/sandbox-client.ts';

useConformanceSandbox();

describe('consistency of the generated data', () => {
  it('day and hour data are the sums of their swaps', async () => {
    const swaps = await allRows(sb, 42161, 'dodoex', 'Swap');
    for (const [entity, field, secs] of [
      ['PairDayData', 'date', 86400],
      ['PairHourData', 'hour', 3600],
    ] as const) {
      const buckets = await allRows(sb, 42161, 'dodoex', entity);
      expect(buckets.length).toBeGreaterThan(0);
      for (const b of buckets.filter((_, i) => i % 17 === 0)) {
        const mine = swaps.filter(
          (s) => s.pair === b.pairAddress && Math.floor(Number(s.timestamp) / secs) * secs === b[field],
        );
        const sum = (k: string) => X.format(mine.reduce<X.Dec>((a, s) => X.add(a, X.parse(s[k])), X.dec(0)));
        expect([b.volumeBase, b.volumeQuote, b.volumeUSD, b.feeBase, b.feeQuote, b.txns]).toEqual([
          sum('baseVolume'),
          sum('quoteVolume'),
          sum('volumeUSD'),
          sum('feeBase'),
          sum('feeQuote'),
          String(mine.length),
        ]);
      }
    }
  });

  it('dodoZoos counters match the rows, and swaps name pools and tokens that exist', async () => {
    const zoo = (await query(sb, 1313161554, 'dodoex', '{ dodoZoos { id pairCount tokenCount crowdpoolingCount } }'))
      .dodoZoos[0];
    const pairs = await allRows(sb, 1313161554, 'dodoex', 'Pair');
    const tokens = new Set((await allRows(sb, 1313161554, 'dodoex', 'Token')).map((t) => t.id));
    expect(zoo.id).toBe('dodoex-v2-aurora');
    expect(Number(zoo.pairCount)).toBe(pairs.filter((p) => p.type !== 'VIRTUAL').length);
    expect(Number(zoo.tokenCount)).toBe(tokens.size);
    expect(Number(zoo.crowdpoolingCount)).toBe((await allRows(sb, 1313161554, 'dodoex', 'CrowdPooling')).length);
    const pairIds = new Set(pairs.map((p) => p.id));
    for (const s of await allRows(sb, 1313161554, 'dodoex', 'Swap')) {
      expect(pairIds.has(s.pair)).toBe(true);
      expect(tokens.has(s.fromToken) && tokens.has(s.toToken)).toBe(true);
    }
  });

  it('keeps the counters of the mappings that verify reads: per day, per pool and day, per crowd pool, in all', async () => {
    // Each identity as the mapping's handlers make it hold (DODOEX/dodoex_v2_subgraph at 0eb5baca: transaction.ts
    // addTransaction, dayUpdates.ts updatePairDayData/updateUserDayData, helpers.ts createToken/createUser,
    // crowdPooling.ts handleBid, token/factory.ts handleNewERC20), counted here from every row.
    const c = 56;
    const day = (ts: string | number) => Math.floor(Number(ts) / 86400) * 86400;
    const tally = (keys: string[]) => keys.reduce((m, k) => m.set(k, (m.get(k) ?? 0) + 1), new Map<string, number>());
    const rows = (e: string, schema = 'dodoex') => allRows(sb, c, schema, e);
    const days = await rows('DodoDayData');
    const txs = tally((await rows('Transaction')).map((t) => String(day(t.timestamp))));
    const userDays = tally((await rows('UserDayData')).map((u) => String(u.date)));
    expect(days.length).toBeGreaterThan(3);
    for (const d of days) {
      expect(Number(d.txCount), `day ${d.date}`).toBe(txs.get(String(d.date)) ?? 0);
      expect(Number(d.uniqueUsersCount), `day ${d.date}`).toBe(userDays.get(String(d.date)) ?? 0);
    }
    expect(days.map((d) => String(d.date)).sort()).toEqual([...txs.keys()].sort());
    const swaps = tally((await rows('Swap')).map((s) => `${s.pair}-${day(s.timestamp)}`));
    const pairDays = await rows('PairDayData');
    expect(new Map(pairDays.map((p) => [`${p.pairAddress}-${p.date}`, Number(p.txns)]))).toEqual(swaps);
    const zoo = (await query(sb, c, 'dodoex', '{ dodoZoos { tokenCount uniqueUsersCount } }')).dodoZoos[0];
    expect(Number(zoo.tokenCount)).toBe((await rows('Token')).length);
    expect(Number(zoo.uniqueUsersCount)).toBe((await rows('User')).length);
    const positions = tally((await rows('BidPosition')).map((b) => b.cp));
    const pools = await rows('CrowdPooling');
    expect([...positions.values()].reduce((a, b) => a + b, 0)).toBeGreaterThan(pools.length);
    for (const cp of pools) expect(Number(cp.investorsCount), cp.id).toBe(positions.get(cp.id) ?? 0);
    const dodoToken = (await query(sb, c, 'token', '{ dodoTokens { tokens } }')).dodoTokens[0];
    expect(Number(dodoToken.tokens)).toBe((await rows('Token', 'token')).length);
  });

  it('leaves rows out of answers silently when asked: pages stay full, and every row left out is listed', async () => {
    const c = 128;
    const all = (await allRows(sb, c, 'dodoex', 'Swap')).map((s) => s.id).sort();
    await post(sb, '/_sandbox/dropped', {});
    const set = await post(sb, '/_sandbox/faults', { silentDrop: 0.05, silentDropEntities: ['Swap'] });
    expect(set.body).toMatchObject({ silentDrop: 0.05, silentDropEntities: ['Swap'] });
    try {
      const served: string[] = [];
      const sizes: number[] = [];
      for (let after = ''; ; ) {
        const page = (
          await query(
            sb,
            c,
            'dodoex',
            'query ($id: ID!) { swaps(first: 100, orderBy: id, where: { id_gt: $id }) { id } }',
            {
              id: after,
            },
          )
        ).swaps as { id: string }[];
        sizes.push(page.length);
        served.push(...page.map((s) => s.id));
        // Another entity is never touched.
        expect((await query(sb, c, 'dodoex', '{ tokens(first: 5) { id } }')).tokens).toHaveLength(5);
        if (page.length < 100) break;
        after = page.at(-1)!.id;
      }
      const dropped = (await (await fetch(`${sb.url}/_sandbox/dropped`)).json()) as {
        dropped: { chainId: number; entity: string; row: { id: string } }[];
      };
      const left = dropped.dropped.map((d) => d.row.id);
      expect(dropped.dropped.every((d) => d.chainId === c && d.entity === 'Swap')).toBe(true);
      // About 5% left out, each once, none of them served; what was served and what was left out make every row.
      expect(left.length).toBeGreaterThan(all.length * 0.02);
      expect(left.length).toBeLessThan(all.length * 0.1);
      expect(new Set(left).size).toBe(left.length);
      expect(served.filter((id) => left.includes(id))).toEqual([]);
      expect([...served, ...left].sort()).toEqual(all);
      // Every page but the last is full.
      expect(sizes.slice(0, -1).every((n) => n === 100)).toBe(true);
    } finally {
      await post(sb, '/_sandbox/faults', { silentDrop: 0, silentDropEntities: [] });
    }
    const bad = await post(sb, '/_sandbox/faults', { silentDrop: 2 });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('silentDrop must be a number from 0 to 1, but is "2"');
  });

  it('holds the hostile values the exporter must survive', async () => {
    const tokens = await allRows(sb, 1, 'dodoex', 'Token');
    expect(tokens.some((t) => t.symbol.includes("'") && t.symbol.includes('DROP TABLE'))).toBe(true);
    expect(tokens.some((t) => /\p{Extended_Pictographic}/u.test(t.symbol))).toBe(true);
    expect(tokens.some((t) => X.compare(X.parse(t.usdPrice), X.parse('1e-17')) < 0)).toBe(true);
    const pairs = await allRows(sb, 1, 'dodoex', 'Pair');
    expect(pairs.some((p) => X.compare(X.parse(p.baseReserve), X.parse('1e30')) >= 0)).toBe(true);
    const digits = (v: string) => v.replace(/[-.]/g, '').replace(/^0+/, '').length;
    expect(
      [...pairs.map((p) => p.lastTradePrice), ...tokens.map((t) => t.usdPrice)].some((v: string) => digits(v) === 34),
    ).toBe(true);
  });
});

describe('the liquidity list', () => {
  const listPath = () => `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`;

  it('answers the documented request body, consistent with the subgraph', async () => {
    const a = await post(sb, listPath(), LIQUIDITY_LIST_BODY);
    expect(a.status).toBe(200);
    const info = a.body.data!.liquidity_list;
    expect(info.__typename).toBe('LiquidityListInfo');
    expect([info.currentPage, info.pageSize]).toEqual([1, 8]);
    expect(info.lqList).toHaveLength(8);
    const pairs = new Map((await allRows(sb, 56, 'dodoex', 'Pair')).map((p) => [p.id, p]));
    const expectedCount = [...pairs.values()].filter((p) => ['CLASSICAL', 'DVM', 'DSP'].includes(p.type)).length;
    expect(info.totalCount).toBe(expectedCount);
    for (const item of info.lqList) {
      expect(item.__typename).toBe('LiquidityLqList');
      expect(item.pair.__typename).toBe('LiquidityPair');
      expect(item.pair.baseToken.__typename).toBe('LiquidityToken');
      expect(item.pair.apy.__typename).toBe('LiquidityApyData');
      expect(item.isMyLiquidity).toBeNull();
      const row = pairs.get(item.id)!;
      expect([item.pair.baseReserve, item.pair.quoteReserve, item.pair.chainId]).toEqual([
        row.baseReserve,
        row.quoteReserve,
        56,
      ]);
      const tvl = X.add(
        X.mul(X.parse(row.baseReserve), X.parse(item.pair.baseToken.usdPrice)),
        X.mul(X.parse(row.quoteReserve), X.parse(item.pair.quoteToken.usdPrice)),
      );
      expect(item.pair.tvl).toBe(X.format(tvl));
    }
  });

  it('pages exactly: every pool once across pages, totalCount exact', async () => {
    const ids: string[] = [];
    let total = 0;
    for (let page = 1; ; page++) {
      const body = {
        ...LIQUIDITY_LIST_BODY,
        variables: { where: { chainIds: [1, 137], currentPage: page, pageSize: 7 } },
      };
      const info = (await post(sb, listPath(), body)).body.data!.liquidity_list;
      total = info.totalCount;
      ids.push(...info.lqList.map((i: { id: string }) => i.id));
      if (page * 7 >= total) break;
    }
    expect(ids).toHaveLength(total);
    expect(new Set(ids).size).toBe(total);
  });

  it('follows user: isMyLiquidity and viewOnlyOwn', async () => {
    const pos = (await allRows(sb, 56, 'dodoex', 'LiquidityPosition'))[0]!;
    const where = { chainIds: [56], currentPage: 1, pageSize: 100, user: pos.user, filterState: { viewOnlyOwn: true } };
    const info = (await post(sb, listPath(), { ...LIQUIDITY_LIST_BODY, variables: { where } })).body.data!
      .liquidity_list;
    expect(info.lqList.map((i: { id: string }) => i.id)).toContain(pos.pair);
    expect(info.lqList.every((i: { isMyLiquidity: boolean }) => i.isMyLiquidity === true)).toBe(true);
  });
});

describe('the documented query shapes', () => {
  it.each(Object.entries(SEED_QUERIES))('%s returns data', async (_purpose, q) => {
    const pair = (await query(sb, 1, 'dodoex', '{ pairs(first: 1, where: { type_not: "VIRTUAL" }) { id } }')).pairs[0]
      .id;
    const user = (await query(sb, 1, 'dodoex', '{ swaps(first: 1) { from } }')).swaps[0].from;
    const data = await query(
      sb,
      1,
      'dodoex',
      q.replace('$PAIR', pair).replace('$USER', user).replace('$SINCE', '1766000000'),
    );
    const value = Object.values(data)[0];
    expect(Array.isArray(value) ? value.length : value ? 1 : 0).toBeGreaterThan(0);
  });
});
