/**
 * Every report view against an independent oracle: the figures recomputed in TypeScript with decimal.js from the
 * sandbox's own rows (test/support/oracle.ts), never by running the view's SQL. Each compares every row of a chain,
 * so the edges (first and last days, pools with one trusted side, none, both) are all in. Tolerance: 1e-9 relative.
 */

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Decimal } from 'decimal.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { reportViews } from '../../src/reports/views.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import {
  byPool,
  D,
  dayOf,
  daySides,
  expectClose,
  listSides,
  matchRows,
  poolTracked,
  type TokenDay,
  tokenDays,
  tokenValue,
  trackedVolume,
  trusted,
} from '../support/oracle.ts';
import { allRows, post } from '../support/sandbox-client.ts';

const CHAIN = 56;
let sb: SandboxProcess;
let dir: string;
let env: Record<string, string>;
/** Raw rows of the chain, as the sandbox serves them. */
let raw: Record<string, Record<string, any>[]>;
/** The chain's liquidity-list items at the snapshot. */
let list: Record<string, any>[];

beforeAll(async () => {
  sb = await startSandbox(['--scale', '3000', '--chains', '56']);
  // Into the new day, so that the day's data and the snapshot meet on one day.
  await sb.control('advance', { blocks: 1200 });
  dir = mkdtempSync(join(tmpdir(), 'pool-export-reports-'));
  env = sandboxEnv(sb, join(dir, 'data'));
  const r = await cli(['run', '--chains', 'bsc'], env);
  if (r.code !== 0) throw new Error(r.stdout + r.stderr);
  raw = {};
  for (const e of [
    'PairDayData',
    'PairHourData',
    'TokenDayData',
    'Token',
    'Pair',
    'Swap',
    'OrderHistory',
    'LiquidityPosition',
    'CrowdPooling',
    'CrowdPoolingDayData',
  ]) {
    raw[e] = await allRows(sb, CHAIN, 'dodoex', e);
  }
  const types = '["CLASSICAL", "DVM", "DSP", "GSP", "DPP", "AMMV2", "AMMV3"]';
  const query = `{ liquidity_list(where: { chainIds: [${CHAIN}], pageSize: 1000, filterState: { filterTypes: ${types} } }) { lqList { id pair { type tvl baseReserve quoteReserve lastTradePrice baseToken { id symbol usdPrice } quoteToken { id symbol usdPrice } apy { transactionBaseApy transactionQuoteApy miningBaseApy miningQuoteApy } } } } }`;
  list = (await post(sb, `/graphql?opname=FetchLiquidityList&apikey=${sb.apiKey}`, { query })).body.data!.liquidity_list
    .lqList;
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** Every row of a report for the chain, as JSON. */
async function report(name: string): Promise<Record<string, any>[]> {
  const r = await cli(['report', name, '--chain', 'bsc', '--format', 'json'], env);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as Record<string, any>[];
}

/** The snapshot's day (the head's). */
const snapshotDay = () =>
  raw
    .Swap!.map((s) => dayOf(s.timestamp))
    .sort()
    .at(-1)!;

/** Tracked, untracked and service TVL of each list item. */
function listTvl(): Map<
  string,
  { item: Record<string, any>; tracked: Decimal; untracked: Decimal; base: Decimal; quote: Decimal }
> {
  const sides = listSides(CHAIN, snapshotDay(), list);
  const tokens = tokenDays(sides);
  const pools = byPool(sides);
  return new Map(
    list.map((i) => {
      const p = i.pair;
      const base = D(p.baseReserve).times(D(p.baseToken.usdPrice));
      const quote = D(p.quoteReserve).times(D(p.quoteToken.usdPrice));
      return [
        i.id as string,
        {
          item: i,
          base,
          quote,
          untracked: base.plus(quote),
          tracked: poolTracked(pools.get(`${snapshotDay()}/${i.id}`)!, tokens),
        },
      ];
    }),
  );
}

/** Every token's tracked price and backing per day (`<day>/<token>`), and every pool's tracked value (`<day>/<pool>`). */
function dayOracle(): { tokens: Map<string, TokenDay>; pools: Map<string, Decimal> } {
  const sides = daySides(CHAIN, raw.PairDayData!);
  const tokens = tokenDays(sides);
  return { tokens, pools: new Map([...byPool(sides)].map(([k, pair]) => [k, poolTracked(pair, tokens)])) };
}

describe('TVL reports', () => {
  it("tvl_daily: tracked and untracked value of every pool day, the service's TVL of that day and the difference", async () => {
    const svc = new Map(list.map((i) => [`${snapshotDay()}/${i.id}`, D(i.pair.tvl)]));
    const { pools } = dayOracle();
    const exact = new Map(
      raw.PairDayData!.map((d) => {
        const base = D(d.baseTokenReserve).times(D(d.baseUsdPrice));
        const quote = D(d.quoteTokenReserve).times(D(d.quoteUsdPrice));
        const key = `${dayOf(d.date)}/${d.pairAddress}`;
        return [key, { tracked: pools.get(key)!, untracked: base.plus(quote) }];
      }),
    );
    const rows = await report('tvl_daily');
    // Every combination of trusted sides is in the data: both, base only, quote only, neither.
    const cases = new Set(
      raw.PairDayData!.map((d) => `${trusted(CHAIN, d.baseToken)}/${trusted(CHAIN, d.quoteToken)}`),
    );
    expect([...cases].sort()).toEqual(['false/false', 'false/true', 'true/false', 'true/true']);
    let withService = 0;
    let oneSided = 0;
    for (const [r, e] of matchRows(rows, exact, (x) => `${x.day}/${x.pool}`, 'tvl_daily')) {
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool} ${r.day}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.pool} ${r.day}`);
      const service = svc.get(`${r.day}/${r.pool}`);
      if (service) {
        withService++;
        expectClose(r.tvl_service_usd, service, `service ${r.pool}`);
        expectClose(r.difference_usd, service.minus(e.tracked), `difference ${r.pool}`);
      } else expect(r.tvl_service_usd).toBeNull();
      if (!e.tracked.isZero() && !e.tracked.eq(e.untracked)) oneSided++;
    }
    expect(withService).toBeGreaterThan(0);
    expect(oneSided).toBeGreaterThan(0);
  });

  it("tvl_list and top_pools: tracked, untracked and the service's TVL at the snapshot; ranked by tracked TVL", async () => {
    const exact = listTvl();
    const rows = await report('tvl_list');
    for (const [r, e] of matchRows(rows, exact, (x) => x.pool, 'tvl_list')) {
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.pool}`);
      expectClose(r.tvl_service_usd, D(e.item.pair.tvl), `service ${r.pool}`);
      expect(r.tvl_service_text).toBe(e.item.pair.tvl);
    }
    const ranked = [...exact]
      .sort((a, b) => b[1].tracked.comparedTo(a[1].tracked) || (a[0] < b[0] ? -1 : 1))
      .map(([id]) => id);
    const top = (await report('top_pools')).sort((a, b) => a.rank - b.rank);
    expect(top.map((r) => r.pool)).toEqual(ranked);
    // The first pool is not the one with the largest untracked value: one price does not decide the ranking.
    const byUntracked = [...exact].sort((a, b) => b[1].untracked.comparedTo(a[1].untracked))[0]![0];
    expect(top[0]!.pool).not.toBe(byUntracked);
  });

  it('tvl_by_chain_type: pools and the sums of tracked and untracked TVL per pool type', async () => {
    const exact = new Map<string, { pools: number; tracked: Decimal; untracked: Decimal }>();
    for (const e of listTvl().values()) {
      const t = e.item.pair.type as string;
      const a = exact.get(t) ?? { pools: 0, tracked: D(0), untracked: D(0) };
      exact.set(t, {
        pools: a.pools + 1,
        tracked: a.tracked.plus(e.tracked),
        untracked: a.untracked.plus(e.untracked),
      });
    }
    for (const [r, e] of matchRows(await report('tvl_by_chain_type'), exact, (x) => x.pool_type, 'tvl_by_chain_type')) {
      expect(r.pools).toBe(e.pools);
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool_type}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.pool_type}`);
    }
  });

  it('tvl_by_token: value per token and day, at the derived price for an untrusted token, at most its backing', async () => {
    const { tokens } = dayOracle();
    let derived = 0;
    let bounded = 0;
    for (const [r, e] of matchRows(
      await report('tvl_by_token'),
      tokens,
      (x) => `${x.day}/${x.token}`,
      'tvl_by_token',
    )) {
      expectClose(r.reserve, e.reserve, `reserve ${r.token}`);
      expectClose(r.tvl_untracked_usd, e.untracked, `untracked ${r.token}`);
      expectClose(r.tvl_usd, tokenValue(e), `tracked ${r.token} ${r.day}`);
      if (e.price === null) expect(r.price_usd, `price ${r.token} ${r.day}`).toBeNull();
      else expectClose(r.price_usd, e.price, `price ${r.token} ${r.day}`);
      if (!e.trusted && e.price !== null) {
        derived++;
        if (e.reserve.times(e.price).gt(e.backing)) bounded++;
      }
    }
    // Both rules are at work on the sandbox's data: derived prices, and the bound (the 1e30-scale scam pool's tokens).
    expect(derived).toBeGreaterThan(0);
    expect(bounded).toBeGreaterThan(0);
  });

  it('suspicious_pools: pools whose claimed TVL is over ten times the tracked one, with the untrusted token behind it', async () => {
    const exact = new Map(
      [...listTvl()].flatMap(([id, e]) => {
        const claimed = Decimal.max(e.untracked, D(e.item.pair.tvl));
        if (claimed.lt(10_000) || claimed.lte(e.tracked.times(10))) return [];
        const sides = [
          ['base', e.base],
          ['quote', e.quote],
        ] as const;
        const suspect = sides
          .filter(([s]) => !trusted(CHAIN, e.item.pair[`${s}Token`].id))
          .sort((a, b) => b[1].comparedTo(a[1]))[0]!;
        return [[id, { ...e, claimed, suspect: e.item.pair[`${suspect[0]}Token`] }]];
      }),
    );
    const rows = await report('suspicious_pools');
    expect(rows.length).toBeGreaterThan(0);
    for (const [r, e] of matchRows(rows, exact, (x) => x.pool, 'suspicious_pools')) {
      expectClose(r.tvl_usd, e.tracked, `tracked ${r.pool}`);
      expect([r.suspect_token, r.suspect_symbol]).toEqual([e.suspect.id, e.suspect.symbol]);
      expectClose(r.suspect_price_usd, D(e.suspect.usdPrice), `price ${r.pool}`);
      if (e.tracked.isZero()) expect(r.times_tracked).toBeNull();
      else expectClose(r.times_tracked, e.claimed.div(e.tracked), `times ${r.pool}`);
    }
  });

  it('suspicious_tokens: untrusted tokens whose upstream price is over 10 times off the derived one', async () => {
    const { tokens } = dayOracle();
    const exact = new Map(
      [...tokens].filter(
        ([, t]) =>
          !t.trusted && t.price?.gt(0) && (t.upstream.gt(t.price.times(10)) || t.upstream.times(10).lt(t.price)),
      ),
    );
    const rows = await report('suspicious_tokens');
    // The sandbox's pumped token (its usdPrice set 1e24 times too high on some days) is among them.
    expect(rows.length).toBeGreaterThan(0);
    for (const [r, e] of matchRows(rows, exact, (x) => `${x.day}/${x.token}`, 'suspicious_tokens')) {
      expectClose(r.upstream_price_usd, e.upstream, `upstream ${r.token} ${r.day}`);
      expectClose(r.derived_price_usd, e.price!, `derived ${r.token} ${r.day}`);
      expectClose(r.times_derived, e.upstream.div(e.price!), `times ${r.token} ${r.day}`);
    }
  });
});

describe('volume reports', () => {
  it("volume_daily: tracked volume through trusted sides, the upstream's figure, fees, and the sum of swaps", async () => {
    const swaps = new Map<string, { n: number; base: Decimal; quote: Decimal }>();
    for (const s of raw.Swap!) {
      const k = `${dayOf(s.timestamp)}/${s.pair}`;
      const a = swaps.get(k) ?? { n: 0, base: D(0), quote: D(0) };
      swaps.set(k, { n: a.n + 1, base: a.base.plus(D(s.baseVolume)), quote: a.quote.plus(D(s.quoteVolume)) });
    }
    const exact = new Map(
      raw.PairDayData!.map((d) => {
        const [bt, qt] = [trusted(CHAIN, d.baseToken), trusted(CHAIN, d.quoteToken)];
        const volume = trackedVolume(
          D(d.volumeBase).times(D(d.baseUsdPrice)),
          D(d.volumeQuote).times(D(d.quoteUsdPrice)),
          bt,
          qt,
        );
        const fees = (bt ? D(d.feeBase).times(D(d.baseUsdPrice)) : D(0)).plus(
          qt ? D(d.feeQuote).times(D(d.quoteUsdPrice)) : D(0),
        );
        return [
          `${dayOf(d.date)}/${d.pairAddress}`,
          { d, volume, fees, swaps: swaps.get(`${dayOf(d.date)}/${d.pairAddress}`)! },
        ];
      }),
    );
    for (const [r, e] of matchRows(await report('volume_daily'), exact, (x) => `${x.day}/${x.pool}`, 'volume_daily')) {
      expectClose(r.volume_usd, e.volume, `tracked ${r.pool} ${r.day}`);
      expectClose(r.volume_untracked_usd, D(e.d.volumeUSD), `untracked ${r.pool}`);
      expectClose(r.volume_base, D(e.d.volumeBase), `base ${r.pool}`);
      expectClose(r.fees_usd, e.fees, `fees ${r.pool}`);
      expect(r.swaps).toBe(e.swaps.n);
      expectClose(r.swaps_volume_base, e.swaps.base, `swaps base ${r.pool}`);
      expectClose(r.swaps_volume_quote, e.swaps.quote, `swaps quote ${r.pool}`);
      expect(r.swaps_match, `swaps_match ${r.pool}`).toBe(
        e.swaps.base.minus(D(e.d.volumeBase)).abs().lte(D(e.d.volumeBase).abs().times(1e-9)),
      );
    }
  });

  it('volume_hourly: tracked volume per pool and hour', async () => {
    const exact = new Map(
      raw.PairHourData!.map((h) => [
        `${new Date(h.hour * 1000).toISOString()}/${h.pairAddress}`,
        trackedVolume(
          D(h.volumeBase).times(D(h.baseUsdPrice)),
          D(h.volumeQuote).times(D(h.quoteUsdPrice)),
          trusted(CHAIN, h.baseToken),
          trusted(CHAIN, h.quoteToken),
        ),
      ]),
    );
    for (const [r, e] of matchRows(
      await report('volume_hourly'),
      exact,
      (x) => `${new Date(x.time).toISOString()}/${x.pool}`,
      'volume_hourly',
    )) {
      expectClose(r.volume_usd, e, `tracked ${r.pool} ${r.time}`);
    }
  });

  it('volume_by_token: volume per token and day, in USD at its tracked price, at most the trusted volume behind it', async () => {
    const { tokens } = dayOracle();
    const symbols = new Map(raw.Token!.map((t) => [t.id, t.symbol]));
    const exact = new Map(raw.TokenDayData!.map((d) => [`${dayOf(d.date)}/${d.token}`, d]));
    for (const [r, d] of matchRows(
      await report('volume_by_token'),
      exact,
      (x) => `${x.day}/${x.token}`,
      'volume_by_token',
    )) {
      expectClose(r.volume, D(d.volume), `volume ${r.token}`);
      const t = tokens.get(`${r.day}/${r.token}`);
      const tracked = trusted(CHAIN, d.token)
        ? D(d.volume).times(D(d.usdPrice))
        : t?.price
          ? Decimal.min(D(d.volume).times(t.price), t.backingVolume)
          : D(0);
      expectClose(r.volume_usd, tracked, `tracked ${r.token} ${r.day}`);
      expectClose(r.volume_untracked_usd, D(d.volumeUSD), `untracked ${r.token}`);
      expect(r.symbol).toBe(symbols.get(d.token));
    }
  });

  it('smart_route_volume: orders, traders, volume valued by a trusted side, else a derived price (bounded)', async () => {
    const { tokens } = dayOracle();
    const exact = new Map<string, { orders: number; traders: Set<string>; tracked: Decimal; untracked: Decimal }>();
    // Per day and pricing token: the orders' value, and the bound when the price is a derived one.
    const byToken = new Map<string, { day: string; value: Decimal; bound: Decimal | null }>();
    for (const o of raw.OrderHistory!.filter((x) => x.source === 'SMART_ROUTE')) {
      const day = dayOf(o.timestamp);
      const a = exact.get(day) ?? { orders: 0, traders: new Set<string>(), tracked: D(0), untracked: D(0) };
      a.traders.add(o.from);
      exact.set(day, { ...a, orders: a.orders + 1, untracked: a.untracked.plus(D(o.volumeUSD)) });
      const from = { token: o.fromToken as string, amount: D(o.amountIn), t: tokens.get(`${day}/${o.fromToken}`) };
      const to = { token: o.toToken as string, amount: D(o.amountOut), t: tokens.get(`${day}/${o.toToken}`) };
      const by = [from, to].find((x) => x.t?.trusted) ?? [from, to].find((x) => x.t?.price);
      if (!by) continue;
      const g = byToken.get(`${day}/${by.token}`) ?? {
        day,
        value: D(0),
        bound: by.t!.trusted ? null : by.t!.backingVolume,
      };
      byToken.set(`${day}/${by.token}`, { ...g, value: g.value.plus(by.amount.times(by.t!.price!)) });
    }
    for (const g of byToken.values()) {
      const a = exact.get(g.day)!;
      exact.set(g.day, { ...a, tracked: a.tracked.plus(g.bound ? Decimal.min(g.value, g.bound) : g.value) });
    }
    for (const [r, e] of matchRows(await report('smart_route_volume'), exact, (x) => x.day, 'smart_route_volume')) {
      expect([r.orders, r.traders]).toEqual([e.orders, e.traders.size]);
      expectClose(r.volume_usd, e.tracked, `tracked ${r.day}`);
      expectClose(r.volume_untracked_usd, e.untracked, `untracked ${r.day}`);
    }
  });

  it("apy: tracked fees over tracked TVL, annualized, beside the service's APY of the day", async () => {
    const svc = new Map(list.map((i) => [`${snapshotDay()}/${i.id}`, i.pair.apy]));
    const { pools } = dayOracle();
    const exact = new Map(
      raw.PairDayData!.map((d) => {
        const [bt, qt] = [trusted(CHAIN, d.baseToken), trusted(CHAIN, d.quoteToken)];
        const tvl = pools.get(`${dayOf(d.date)}/${d.pairAddress}`)!;
        const fees = (bt ? D(d.feeBase).times(D(d.baseUsdPrice)) : D(0)).plus(
          qt ? D(d.feeQuote).times(D(d.quoteUsdPrice)) : D(0),
        );
        return [`${dayOf(d.date)}/${d.pairAddress}`, { tvl, fees }];
      }),
    );
    let service = 0;
    for (const [r, e] of matchRows(await report('apy'), exact, (x) => `${x.day}/${x.pool}`, 'apy')) {
      if (e.tvl.gt(0)) expectClose(r.fee_apy, e.fees.div(e.tvl).times(365), `fee_apy ${r.pool} ${r.day}`);
      else expect(r.fee_apy).toBeNull();
      const apy = svc.get(`${r.day}/${r.pool}`);
      if (apy?.transactionBaseApy) {
        service++;
        expectClose(r.transaction_base_apy, D(apy.transactionBaseApy), `service apy ${r.pool}`);
      }
    }
    expect(service).toBeGreaterThan(0);
  });
});

describe('tracked figures at scale', () => {
  it('every tracked USD column of every report stays below 1e13 on every row, while the untracked ones pass 1e30', async () => {
    const largest = async (sql: string) => {
      const r = await cli(['query', '--format', 'json', sql], env);
      expect(r.code, r.stderr).toBe(0);
      return Number((JSON.parse(r.stdout) as { m: number | null }[])[0]!.m ?? 0);
    };
    const columns = await cli(
      [
        'query',
        '--format',
        'json',
        "SELECT table_name AS view, column_name AS c FROM information_schema.columns WHERE table_schema = 'reports' AND column_name IN ('tvl_usd', 'volume_usd', 'fees_usd') ORDER BY 1, 2",
      ],
      env,
    );
    const names = new Set(reportViews().map((v) => v.name));
    const tracked = (JSON.parse(columns.stdout) as { view: string; c: string }[])
      .filter((x) => names.has(x.view))
      .map((x) => `${x.view}.${x.c}`);
    const union = tracked
      .map((vc) => `SELECT '${vc}' AS k, max(abs(${vc.split('.')[1]})) AS m FROM reports.${vc.split('.')[0]}`)
      .join(' UNION ALL ');
    const maxima = await cli(['query', '--format', 'json', union], env);
    const rows = JSON.parse(maxima.stdout) as { k: string; m: number | null }[];
    expect(rows.map((r) => r.k)).toEqual(tracked);
    for (const { k, m } of rows) expect(Number(m ?? 0), k).toBeLessThan(1e13);
    expect(tracked).toEqual(
      expect.arrayContaining([
        'tvl_by_token.tvl_usd',
        'volume_by_token.volume_usd',
        'smart_route_volume.volume_usd',
        'top_pools.tvl_usd',
      ]),
    );
    // The hostile data is there: the same views' untracked figures.
    expect(await largest('SELECT max(tvl_untracked_usd) AS m FROM reports.tvl_by_token')).toBeGreaterThan(1e30);
    expect(await largest('SELECT max(tvl_untracked_usd) AS m FROM reports.tvl_daily')).toBeGreaterThan(1e30);
  });
});

describe('pool, position and crowd-pool reports', () => {
  it('new_pools: every pool that is not VIRTUAL, with its creation time and block', async () => {
    const exact = new Map(raw.Pair!.filter((p) => p.type !== 'VIRTUAL').map((p) => [p.id as string, p]));
    for (const [r, p] of matchRows(await report('new_pools'), exact, (x) => x.pool, 'new_pools')) {
      expect([r.pool_type, r.day, r.block, r.base_symbol, r.creator]).toEqual([
        p.type,
        dayOf(p.createdAtTimestamp),
        Number(p.createdAtBlockNumber),
        p.baseSymbol,
        p.creator,
      ]);
    }
  });

  it('positions_by_user: every position with its balances, exact and as numbers', async () => {
    const exact = new Map(raw.LiquidityPosition!.map((p) => [`${p.user}/${p.pair}`, p]));
    for (const [r, p] of matchRows(
      await report('positions_by_user'),
      exact,
      (x) => `${x.user}/${x.pool}`,
      'positions_by_user',
    )) {
      expect([r.balance_text, r.in_mining_text, r.lp_token_id]).toEqual([
        p.liquidityTokenBalance,
        p.liquidityTokenInMining,
        p.lpToken,
      ]);
      expectClose(r.balance, D(p.liquidityTokenBalance), `balance ${r.user}`);
    }
  });

  it('crowdpooling_daily: invested and cancelled quote, bids and new investors per crowd pool and day', async () => {
    const pools = new Map(raw.CrowdPooling!.map((c) => [c.id, c]));
    const exact = new Map(raw.CrowdPoolingDayData!.map((d) => [`${dayOf(d.date)}/${d.crowdPooling}`, d]));
    for (const [r, d] of matchRows(
      await report('crowdpooling_daily'),
      exact,
      (x) => `${x.day}/${x.crowd_pool}`,
      'crowdpooling_daily',
    )) {
      expectClose(r.invested_quote, D(d.investedQuote), `invested ${r.crowd_pool}`);
      expectClose(r.canceled_quote, D(d.canceledQuote), `cancelled ${r.crowd_pool}`);
      expect([r.bids, r.new_investors, r.quote_token_id]).toEqual([
        Number(d.investCount),
        Number(d.newcome),
        pools.get(d.crowdPooling)!.quoteToken,
      ]);
    }
  });
});
