/** Event tables: swaps, transactions, orders, liquidity and bid histories, fees, slippages, rewards. */
import * as X from '../../util/exact.ts';
import { pick } from '../hash.ts';
import { eventHash, eventTable } from '../table-kinds.ts';
import type { EventStream } from '../timeline.ts';
import { TAG } from '../world-entities.ts';
import { type DodoexContext, fmt, type Put } from './context.ts';

/** Event tables: swaps, transactions, orders, liquidity and bid histories, fees, slippages, rewards. */
export function eventTables(cx: DodoexContext, put: Put): void {
  const { w, tl, seed, c, E, ts, swap, swapId, bidFacts, positionPair, lpTokenOf } = cx;
  /**
   * An event table whose rows change with their block: `row` gets the event's index, block and the block's salt; each
   * row then carries `updatedAt` (the block's time) and `__block`.
   */
  const timed = (
    name: string,
    stream: EventStream,
    tag: number,
    row: (i: number, b: number, s: number) => Record<string, unknown> & { id: string },
  ) =>
    put(
      eventTable(E(name), stream, tag, 'timestamp', (i) => {
        const b = stream.blockOf(i);
        return { ...row(i, b, w.salt(b)), updatedAt: ts(b), __block: b };
      }),
    );
  put(
    eventTable(E('Swap'), w.swaps, TAG.swap, 'timestamp', (i) => {
      const f = swap(i);
      const id = swapId(f);
      const [fromT, toT] = f.sellBase ? [f.pair.base, f.pair.quote] : [f.pair.quote, f.pair.base];
      return {
        id,
        hash: id.slice(0, 66),
        timestamp: String(f.ts),
        pair: f.pair.id,
        sender: w.router,
        from: f.user,
        to: f.user,
        fromToken: fromT.id,
        toToken: toT.id,
        logIndex: id.slice(67),
        amountIn: fmt(f.sellBase ? f.baseVolume : f.quoteVolume),
        amountOut: fmt(f.sellBase ? f.quoteVolume : f.baseVolume),
        feeBase: fmt(f.feeBase),
        feeQuote: fmt(f.feeQuote),
        baseVolume: fmt(f.baseVolume),
        quoteVolume: fmt(f.quoteVolume),
        volumeUSD: fmt(f.volumeUSD),
        updatedAt: String(f.ts),
        __block: f.block,
      };
    }),
  );

  put(
    eventTable(E('Transaction'), w.swaps, TAG.swap, 'timestamp', (i) => {
      const f = swap(i);
      return {
        id: swapId(f),
        timestamp: String(f.ts),
        from: f.user,
        to: f.pair.id,
        sender: w.router,
        type: pick(20, seed, c, i) === 0 ? 'SWAP-SWAP' : 'SWAP',
        tokens: [f.pair.base.id, f.pair.quote.id],
        volumeUSD: fmt(f.volumeUSD),
        address: f.pair.id,
        updatedAt: String(f.ts),
        __block: f.block,
      };
    }),
  );

  timed('OrderHistory', w.orders, TAG.order, (i, b, s) => {
    const tokens = w.tokenCount(b);
    const from = pick(tokens, seed, c, TAG.order, i, s, 1);
    const to = (from + 1 + pick(tokens - 1, seed, c, TAG.order, i, s, 2)) % tokens;
    const ft = w.token(from, b);
    const tt = w.token(to, b);
    const amountIn = X.normalize(X.dec(1 + pick(1_000_000_000, seed, c, TAG.order, i, s, 3), 4));
    const usd = X.normalize(X.mul(amountIn, ft.price));
    const hash = eventHash(tl, TAG.order, i, s);
    const logIndex = pick(200, seed, c, TAG.order, i, 4);
    const user = w.userId(pick(w.userCount(b), seed, c, TAG.order, i, s, 5));
    return {
      id: `${hash}-${logIndex}`,
      source: pick(4, seed, c, TAG.order, i, 6) === 0 ? 'DODO_POOL' : 'SMART_ROUTE',
      hash,
      block: String(b),
      timestamp: ts(b),
      sender: w.router,
      from: user,
      to: user,
      fromToken: ft.id,
      toToken: tt.id,
      logIndex: String(logIndex),
      amountIn: fmt(amountIn),
      amountOut: fmt(X.div(usd, tt.price, 18)),
      volumeUSD: fmt(X.normalize(X.mul(amountIn, ft.usdPrice))),
      tradingReward: pick(10, seed, c, TAG.order, i, 7) === 0 ? '0.5' : '0',
    };
  });

  timed('LiquidityHistory', w.lps, TAG.lp, (i, b, s) => {
    const u = 3 * pick(Math.ceil(w.userCount(b) / 3), seed, c, TAG.lp, i, s, 1);
    const p = w.pair(positionPair(u), b);
    const lp = lpTokenOf(p, 'base') ?? p.id;
    const hash = eventHash(tl, TAG.lp, i, s);
    const amount = X.dec(1 + pick(1_000_000, seed, c, TAG.lp, i, s, 2), 2);
    const deposit = pick(3, seed, c, TAG.lp, i, 3) !== 0;
    const nullable = pick(2, seed, c, TAG.lp, i, 4) === 0;
    return {
      id: `${hash}-${pick(100, seed, c, TAG.lp, i, 5)}`,
      type: deposit ? 'DEPOSIT' : 'WITHDRAW',
      hash,
      block: String(b),
      timestamp: ts(b),
      user: w.userId(u),
      lpToken: lp,
      from: w.userId(u),
      amount: fmt(amount),
      balance: fmt(X.mul(amount, X.dec(3))),
      baseAmountChange: nullable ? null : fmt(amount),
      quoteAmountChange: nullable ? null : fmt(X.mul(amount, p.lastTradePrice)),
      baseReserve: fmt(p.baseReserve),
      quoteReserve: fmt(p.quoteReserve),
      lpTokenTotalSupply: fmt(X.add(p.baseReserve, p.quoteReserve)),
      baseTokenPrice: null,
      quoteTokenPrice: null,
      pair: p.id,
    };
  });

  put(
    eventTable(E('BidHistory'), w.bids, TAG.bid, 'timestamp', (i) => {
      const f = bidFacts(i);
      const hash = eventHash(tl, TAG.bid, i, f.s);
      return {
        id: `${hash}-${pick(100, seed, c, TAG.bid, i, 5)}`,
        user: w.userId(f.u),
        cp: w.cpId(f.cp),
        action: f.bid ? 'bid' : 'cancel',
        hash,
        block: String(f.b),
        timestamp: ts(f.b),
        quote: fmt(f.quote),
        share: fmt(X.mul(f.quote, X.dec(10n ** 15n))),
        fee: fmt(X.mul(f.quote, X.dec(1, 3))),
        updatedAt: ts(f.b),
        __block: f.b,
      };
    }),
  );

  put(
    eventTable(E('MaintainerFeeTx'), w.mtfees, TAG.mtfee, undefined, (i) => {
      const b = w.mtfees.blockOf(i);
      const s = w.salt(b);
      const t = w.token(pick(w.tokenCount(b), seed, c, TAG.mtfee, i, s, 1), b);
      const amount = X.dec(1 + pick(1_000_000, seed, c, TAG.mtfee, i, s, 2), 6);
      const hash = eventHash(tl, TAG.mtfee, i, s);
      // The upstream's mapping never sets updatedAt on this entity (classicPoolFromV1.ts handleChargeMaintainerFee).
      return {
        id: `${hash}-${pick(100, seed, c, TAG.mtfee, i, 3)}`,
        hash,
        token: t.id,
        amount: fmt(amount),
        volumeUSD: fmt(X.mul(amount, t.usdPrice)),
        updatedAt: null,
        __block: b,
      };
    }),
  );

  timed('PositiveSlippage', w.slips, TAG.slip, (i, b, s) => {
    const hash = eventHash(tl, TAG.slip, i, s);
    const t = w.token(pick(w.tokenCount(b), seed, c, TAG.slip, i, s, 1), b);
    return {
      id: `${hash}-${pick(100, seed, c, TAG.slip, i, 2)}`,
      hash,
      block: String(b),
      timestamp: ts(b),
      token: t.id,
      amount: fmt(X.dec(1 + pick(100_000, seed, c, TAG.slip, i, s, 3), 5)),
    };
  });

  timed('IncentiveRewardHistory', w.rewards, TAG.reward, (i, b, s) => {
    const amount = X.dec(1 + pick(1_000_000, seed, c, TAG.reward, i, s, 1), 6);
    return {
      id: eventHash(tl, TAG.reward, i, s),
      user: w.userId(pick(w.userCount(b), seed, c, TAG.reward, i, s, 2)),
      amount: fmt(amount),
      totalAmount: fmt(X.dec(500_000 * (i + 1), 6)),
      timestamp: ts(b),
      times: String(i + 1),
      totalUser: String(Math.min(i + 1, w.userCount(b))),
    };
  });
}
