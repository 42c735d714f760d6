/**
 * Volume, pool, position and crowd-pool report views against an independent oracle: the figures recomputed in
 * TypeScript with decimal.js from the sandbox's own rows (test/support/oracle.ts), never by running the view's SQL.
 * Tolerance: 1e-9 relative.
 */

import { Decimal } from 'decimal.js';
import { describe, expect, it } from 'vitest';
import { CHAIN, dayOracle, list, raw, report, snapshotDay, useExportedReports } from '../support/exported-reports.ts';
import { D, dayOf, expectClose, matchRows, trackedVolume, trusted } from '../support/oracle.ts';

useExportedReports();

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
