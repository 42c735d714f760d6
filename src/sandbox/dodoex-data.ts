/** Generated tables of the `dodoex` schema for one chain: every entity, related like the real subgraph. */
import * as X from '../util/exact.ts';
import { hexOf, pick } from '../util/hash.ts';
import type { SchemaModel } from '../schemas/entity-model.ts';
import { bucketTable, emptyTable, eventHash, eventTable } from './table-kinds.ts';
import { materializedTable, type Row, type Table } from './table.ts';
import { TAG, type PairState, type World } from './world.ts';

const fmt = X.format;
const ZERO = X.dec(0);
const DAY = 86_400;
const HOUR = 3_600;

/** The numeric facts of one swap, shared by the swap row and the buckets that sum it. */
interface SwapFacts {
  i: number;
  block: number;
  ts: number;
  pair: PairState;
  user: string;
  sellBase: boolean;
  baseVolume: X.Dec;
  quoteVolume: X.Dec;
  feeBase: X.Dec;
  feeQuote: X.Dec;
  volumeUSD: X.Dec;
}

/** The `dodoZoo` id per chain, as the upstream names it. */
export function zooId(chainName: string, chainId: number): string {
  return chainId === 1 ? 'dodoex-v2' : `dodoex-v2-${chainName}`;
}

/** Builds every table of the `dodoex` schema for one chain. */
export function dodoexTables(model: SchemaModel, w: World): Map<string, Table> {
  const tl = w.tl;
  const seed = w.opts.seed;
  const c = w.chainId;
  const E = (name: string) => model.byName.get(name)!;
  const ts = (b: number) => String(tl.ts(b));
  const tables = new Map<string, Table>();
  const put = (t: Table) => tables.set(t.entity.name, t);

  const swap = (i: number): SwapFacts => {
    const block = w.swaps.blockOf(i);
    const s = w.salt(block);
    const pair = w.pair(w.realPair(block, seed, c, TAG.swap, i, s, 1), block);
    const sellBase = pick(2, seed, c, TAG.swap, i, s, 4) === 0;
    const baseVolume = X.normalize(X.dec(1 + pick(1_000_000_000, seed, c, TAG.swap, i, s, 3), 6 - pair.magnitude));
    const quoteVolume = X.normalize(X.mul(baseVolume, pair.lastTradePrice));
    return {
      i, block, ts: tl.ts(block), pair, sellBase, baseVolume, quoteVolume,
      user: w.userId(pick(w.userCount(block), seed, c, TAG.swap, i, s, 5)),
      feeBase: sellBase ? ZERO : X.normalize(X.mul(baseVolume, pair.lpFeeRate)),
      feeQuote: sellBase ? X.normalize(X.mul(quoteVolume, pair.lpFeeRate)) : ZERO,
      volumeUSD: X.normalize(X.mul(baseVolume, pair.base.price)),
    };
  };
  const swapId = (f: SwapFacts) => `${eventHash(tl, TAG.swap, f.i, w.salt(f.block))}-${pick(300, seed, c, TAG.swap, f.i, 2)}`;

  put(eventTable(E('Swap'), w.swaps, TAG.swap, 'timestamp', (i) => {
    const f = swap(i);
    const id = swapId(f);
    const [fromT, toT] = f.sellBase ? [f.pair.base, f.pair.quote] : [f.pair.quote, f.pair.base];
    return {
      id, hash: id.slice(0, 66), timestamp: String(f.ts), pair: f.pair.id, sender: w.router, from: f.user, to: f.user,
      fromToken: fromT.id, toToken: toT.id, logIndex: id.slice(67),
      amountIn: fmt(f.sellBase ? f.baseVolume : f.quoteVolume), amountOut: fmt(f.sellBase ? f.quoteVolume : f.baseVolume),
      feeBase: fmt(f.feeBase), feeQuote: fmt(f.feeQuote), baseVolume: fmt(f.baseVolume), quoteVolume: fmt(f.quoteVolume),
      volumeUSD: fmt(f.volumeUSD), updatedAt: String(f.ts), __block: f.block,
    };
  }));

  put(eventTable(E('Transaction'), w.swaps, TAG.swap, 'timestamp', (i) => {
    const f = swap(i);
    return {
      id: swapId(f), timestamp: String(f.ts), from: f.user, to: f.pair.id, sender: w.router, type: pick(20, seed, c, i) === 0 ? 'SWAP-SWAP' : 'SWAP',
      tokens: [f.pair.base.id, f.pair.quote.id], volumeUSD: fmt(f.volumeUSD), address: f.pair.id, updatedAt: String(f.ts), __block: f.block,
    };
  }));

  put(eventTable(E('OrderHistory'), w.orders, TAG.order, 'timestamp', (i) => {
    const b = w.orders.blockOf(i);
    const s = w.salt(b);
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
      id: `${hash}-${logIndex}`, source: pick(4, seed, c, TAG.order, i, 6) === 0 ? 'DODO_POOL' : 'SMART_ROUTE', hash, block: String(b), timestamp: ts(b),
      sender: w.router, from: user, to: user, fromToken: ft.id, toToken: tt.id, logIndex: String(logIndex), amountIn: fmt(amountIn),
      amountOut: fmt(X.div(usd, tt.price, 18)), volumeUSD: fmt(usd), tradingReward: pick(10, seed, c, TAG.order, i, 7) === 0 ? '0.5' : '0',
      updatedAt: ts(b), __block: b,
    };
  }));

  // Liquidity: users whose index is a multiple of 3 hold one position each, in a pool chosen when they appear.
  // Positions are held in pools with an LP token (private DPP pools have none); pool 0 always has one.
  const positionPair = (u: number) => {
    let k = w.realPair(w.userCreated(u), seed, c, TAG.user, u, 9);
    while (k > 0 && ['DPP', 'VIRTUAL'].includes(w.pair(k, w.userCreated(u)).type)) k--;
    return k;
  };
  const lpTokenOf = (p: PairState, side: 'base' | 'quote') =>
    p.type === 'DPP' || p.type === 'VIRTUAL' ? null : p.type === 'CLASSICAL' ? hexOf(5, seed, c, TAG.pair, p.index, side === 'base' ? 21 : 22) : p.id;
  put(eventTable(E('LiquidityHistory'), w.lps, TAG.lp, 'timestamp', (i) => {
    const b = w.lps.blockOf(i);
    const s = w.salt(b);
    const u = 3 * pick(Math.ceil(w.userCount(b) / 3), seed, c, TAG.lp, i, s, 1);
    const p = w.pair(positionPair(u), b);
    const lp = lpTokenOf(p, 'base') ?? p.id;
    const hash = eventHash(tl, TAG.lp, i, s);
    const amount = X.dec(1 + pick(1_000_000, seed, c, TAG.lp, i, s, 2), 2);
    const deposit = pick(3, seed, c, TAG.lp, i, 3) !== 0;
    const nullable = pick(2, seed, c, TAG.lp, i, 4) === 0;
    return {
      id: `${hash}-${pick(100, seed, c, TAG.lp, i, 5)}`, type: deposit ? 'DEPOSIT' : 'WITHDRAW', hash, block: String(b), timestamp: ts(b),
      user: w.userId(u), lpToken: lp, from: w.userId(u), amount: fmt(amount), balance: fmt(X.mul(amount, X.dec(3))),
      baseAmountChange: nullable ? null : fmt(amount), quoteAmountChange: nullable ? null : fmt(X.mul(amount, p.lastTradePrice)),
      baseReserve: fmt(p.baseReserve), quoteReserve: fmt(p.quoteReserve), lpTokenTotalSupply: fmt(X.add(p.baseReserve, p.quoteReserve)),
      baseTokenPrice: null, quoteTokenPrice: null, pair: p.id, updatedAt: ts(b), __block: b,
    };
  }));

  const bidFacts = (i: number) => {
    const b = w.bids.blockOf(i);
    const s = w.salt(b);
    const cp = pick(Math.max(1, w.cpCount(b)), seed, c, TAG.bid, i, s, 1);
    const u = 5 * pick(Math.ceil(w.userCount(b) / 5), seed, c, TAG.bid, i, s, 2) + 1;
    const bid = pick(5, seed, c, TAG.bid, i, s, 3) !== 0;
    const quote = X.dec(1 + pick(10_000_000, seed, c, TAG.bid, i, s, 4), 3);
    return { b, s, cp, u, bid, quote };
  };
  put(eventTable(E('BidHistory'), w.bids, TAG.bid, 'timestamp', (i) => {
    const f = bidFacts(i);
    const hash = eventHash(tl, TAG.bid, i, f.s);
    return {
      id: `${hash}-${pick(100, seed, c, TAG.bid, i, 5)}`, user: w.userId(f.u), cp: w.cpId(f.cp), action: f.bid ? 'bid' : 'cancel', hash,
      block: String(f.b), timestamp: ts(f.b), quote: fmt(f.quote), share: fmt(X.mul(f.quote, X.dec(10n ** 15n))), fee: fmt(X.mul(f.quote, X.dec(1, 3))),
      updatedAt: ts(f.b), __block: f.b,
    };
  }));

  put(eventTable(E('MaintainerFeeTx'), w.mtfees, TAG.mtfee, undefined, (i) => {
    const b = w.mtfees.blockOf(i);
    const s = w.salt(b);
    const t = w.token(pick(w.tokenCount(b), seed, c, TAG.mtfee, i, s, 1), b);
    const amount = X.dec(1 + pick(1_000_000, seed, c, TAG.mtfee, i, s, 2), 6);
    const hash = eventHash(tl, TAG.mtfee, i, s);
    // The upstream's mapping never sets updatedAt on this entity (classicPoolFromV1.ts handleChargeMaintainerFee).
    return { id: `${hash}-${pick(100, seed, c, TAG.mtfee, i, 3)}`, hash, token: t.id, amount: fmt(amount), volumeUSD: fmt(X.mul(amount, t.price)), updatedAt: null, __block: b };
  }));

  put(eventTable(E('PositiveSlippage'), w.slips, TAG.slip, 'timestamp', (i) => {
    const b = w.slips.blockOf(i);
    const s = w.salt(b);
    const hash = eventHash(tl, TAG.slip, i, s);
    const t = w.token(pick(w.tokenCount(b), seed, c, TAG.slip, i, s, 1), b);
    return { id: `${hash}-${pick(100, seed, c, TAG.slip, i, 2)}`, hash, block: String(b), timestamp: ts(b), token: t.id, amount: fmt(X.dec(1 + pick(100_000, seed, c, TAG.slip, i, s, 3), 5)), updatedAt: ts(b), __block: b };
  }));

  put(eventTable(E('IncentiveRewardHistory'), w.rewards, TAG.reward, 'timestamp', (i) => {
    const b = w.rewards.blockOf(i);
    const s = w.salt(b);
    const amount = X.dec(1 + pick(1_000_000, seed, c, TAG.reward, i, s, 1), 6);
    return {
      id: eventHash(tl, TAG.reward, i, s), user: w.userId(pick(w.userCount(b), seed, c, TAG.reward, i, s, 2)), amount: fmt(amount),
      totalAmount: fmt(X.dec(500_000 * (i + 1), 6)), timestamp: ts(b), times: String(i + 1), totalUser: String(Math.min(i + 1, w.userCount(b))),
      updatedAt: ts(b), __block: b,
    };
  }));

  // Mutable entities: versioned rows computed from their index, materialized per block.
  const tokenRow = (k: number, at: number): Row => {
    const t = w.token(k, at);
    const v = t.version;
    return {
      id: t.id, untrackedVolume: '0', tradeVolume: fmt(X.dec(v * 1_234_567 + k, 3)), tradeVolumeBridge: '0', volumeUSD: fmt(X.dec(v * 7_654_321 + k, 4)),
      volumeUSDBridge: '0', totalLiquidityOnDODO: '0', usdPrice: fmt(t.price), txCount: String(v * 3 + 1), traderCount: String(v + 1),
      priceUpdateTimestamp: ts(t.updated), decimals: String(t.decimals), totalSupply: (k === 5 ? 10n ** 40n : 10n ** BigInt(t.decimals + 9)).toString(),
      timestamp: ts(t.created), symbol: t.symbol, name: t.name, updatedAt: ts(t.updated), __block: t.updated,
    };
  };
  put(materializedTable(E('Token'), (v) => range(w.tokenCount(v.at)).map((k) => tokenRow(k, v.at))));

  const pairRow = (k: number, at: number): Row => {
    const p = w.pair(k, at);
    const v = p.version;
    const virtual = p.type === 'VIRTUAL';
    const vol = (m: number, s: number) => fmt(X.dec(BigInt(v) * BigInt(m), s - p.magnitude));
    return {
      id: p.id, type: p.type, source: p.index % 23 === 7 ? 'NFT' : null, creator: p.creator, owner: virtual ? null : p.creator,
      baseToken: p.base.id, quoteToken: p.quote.id, baseSymbol: p.base.symbol, quoteSymbol: p.quote.symbol,
      i: virtual ? null : X.mul(p.lastTradePrice, X.dec(10n ** 18n)).m.toString(), k: virtual ? null : (BigInt(pick(10, seed, c, TAG.pair, k, 8)) * 10n ** 17n).toString(),
      lpFeeRate: fmt(p.lpFeeRate), baseLpToken: lpTokenOf(p, 'base'), quoteLpToken: lpTokenOf(p, 'quote'),
      baseReserve: fmt(p.baseReserve), quoteReserve: fmt(p.quoteReserve), lastTradePrice: fmt(p.lastTradePrice),
      untrackedBaseVolume: '0', untrackedQuoteVolume: '0', volumeBaseToken: vol(1_000_003, 3), volumeQuoteToken: vol(2_000_003, 3), volumeUSD: vol(3_000_017, 2),
      feeBase: vol(3_001, 3), feeQuote: vol(6_007, 3), feeUSD: vol(9_011, 3), mtFeeBase: '0', mtFeeQuote: '0', mtFeeUSD: '0',
      txCount: String(v * 2), createdAtTimestamp: ts(p.created), createdAtBlockNumber: String(p.created), liquidityProviderCount: '0', mtFeeRate: '0',
      traderCount: String(v), mtFeeRateModel: hexOf(5, seed, c, 77), maintainer: hexOf(5, seed, c, TAG.pair, k, 30),
      isTradeAllowed: true, isDepositBaseAllowed: p.type !== 'DPP', isDepositQuoteAllowed: p.type !== 'DPP', updatedAt: ts(p.updated), __block: p.updated,
    };
  };
  put(materializedTable(E('Pair'), (v) => range(w.pairCount(v.at)).map((k) => pairRow(k, v.at))));
  const realPairs = (at: number) => range(w.pairCount(at)).filter((k) => !w.isVirtual(k)).map((k) => w.pair(k, at));

  put(materializedTable(E('PairDetail'), (v) => realPairs(v.at).map((p) => {
    const raw = (d: X.Dec, dec: number) => X.mul(d, X.dec(10n ** BigInt(dec))).m / 10n ** BigInt(Math.max(0, X.mul(d, X.dec(1)).s));
    return {
      id: p.id, pair: p.id, i: X.mul(p.lastTradePrice, X.dec(10n ** 18n)).m.toString(), k: '100000000000000000', b: raw(p.baseReserve, p.base.decimals).toString(),
      q: raw(p.quoteReserve, p.quote.decimals).toString(), b0: raw(p.baseReserve, p.base.decimals).toString(), q0: raw(p.quoteReserve, p.quote.decimals).toString(),
      r: String(p.version % 3), updatedAt: ts(p.updated), __block: p.updated,
    };
  })));

  put(materializedTable(E('LpToken'), (v) => realPairs(v.at).flatMap((p) => {
    const sides: ('base' | 'quote')[] = p.type === 'CLASSICAL' ? ['base', 'quote'] : ['base'];
    return sides.flatMap((side) => {
      const id = lpTokenOf(p, side);
      if (!id) return [];
      const t = side === 'base' ? p.base : p.quote;
      // Created without updatedAt (helpers.ts createLpToken); only a later deposit or withdrawal of the token sets it
      // (classicPoolFromV1.ts, pool.ts). Here: never for a third of the pools, and not before a pool's second change.
      const updatedAt = p.index % 3 === 1 || p.version < 2 ? null : ts(p.updated);
      return [{ id, pair: p.id, symbol: `${t.symbol}_LP`, name: `${t.symbol} LP Token`, decimals: String(t.decimals), totalSupply: X.mul(p.baseReserve, X.dec(10n ** BigInt(t.decimals))).m.toString(), updatedAt, __block: p.updated }];
    });
  })));

  put(materializedTable(E('DPPOracleAdmin'), (v) => realPairs(v.at).filter((p) => p.type === 'DPP' && p.index % 2 === 0).map((p) => ({
    id: hexOf(5, seed, c, TAG.pair, p.index, 40), pair: p.id, previousOwner: p.index % 4 === 0 ? null : p.creator, newOwner: p.creator, updatedAt: ts(p.created), __block: p.created,
  }))));

  const userPeriod = 2000;
  const userRow = (u: number, at: number): Row => {
    const created = w.userCreated(u);
    const { version, updated } = w.version(created, userPeriod + (u % 7) * 100, at);
    return { id: w.userId(u), txCount: String(version + 1), tradingRewardRecieved: fmt(X.dec(version * 5, 1)), timestamp: ts(created), updatedAt: ts(updated), __block: updated };
  };
  put(materializedTable(E('User'), (v) => range(w.userCount(v.at)).map((u) => userRow(u, v.at))));

  put(materializedTable(E('LiquidityPosition'), (v) => range(w.userCount(v.at)).filter((u) => u % 3 === 0).map((u) => {
    const created = w.userCreated(u);
    const { version, updated } = w.version(created, 900 + (u % 5) * 100, v.at);
    const p = w.pair(positionPair(u), v.at);
    const lp = lpTokenOf(p, 'base') ?? p.id;
    return {
      id: `${w.userId(u)}-${lp}`, user: w.userId(u), pair: p.id, lpToken: lp, liquidityTokenBalance: fmt(X.dec(1 + pick(1e9, seed, c, TAG.user, u, version), 4)),
      liquidityTokenInMining: u % 2 === 0 ? '0' : fmt(X.dec(version, 1)), lastTxTime: ts(updated), updatedAt: ts(updated), __block: updated,
    };
  })));

  put(materializedTable(E('PairTrader'), (v) => range(w.userCount(v.at)).map((u) => {
    const created = w.userCreated(u);
    const { updated } = w.version(created, 1500, v.at);
    const p = w.pair(w.realPair(created, seed, c, TAG.user, u, 11), created);
    return { id: `${w.userId(u)}-${p.id}`, pair: p.id, trader: w.userId(u), lastTxTime: ts(updated), updatedAt: ts(updated), __block: updated };
  })));

  put(materializedTable(E('TokenTrader'), (v) => range(w.userCount(v.at)).map((u) => {
    const created = w.userCreated(u);
    const { updated } = w.version(created, 1700, v.at);
    const t = w.token(pick(w.tokenCount(created), seed, c, TAG.user, u, 12), created);
    return { id: `${t.id}-${w.userId(u)}`, token: t.id, trader: w.userId(u), lastTxTime: ts(updated), updatedAt: ts(updated), __block: updated };
  })));

  put(materializedTable(E('MaintainerEarnings'), (v) => realPairs(v.at).filter((p) => p.index % 3 === 0).map((p) => ({
    id: `${hexOf(5, seed, c, TAG.pair, p.index, 30)}-${p.base.id}`, maintainer: hexOf(5, seed, c, TAG.pair, p.index, 30), token: p.base.id,
    // Its amounts grow, but the upstream's mapping never sets updatedAt on it (classicPoolFromV1.ts handleChargeMaintainerFee).
    amount: fmt(X.dec(p.version * 13, 2)), amountUSD: fmt(X.normalize(X.mul(X.dec(p.version * 13, 2), w.token(p.base.index, p.updated).price))), updatedAt: null, __block: p.updated,
  }))));

  const cpRow = (k: number, at: number): Row => {
    const created = w.createdBlock(w.every.cp, k);
    const { version, updated } = w.version(created, 300, at);
    const tokens = w.tokenCount(created);
    const start = tl.ts(created);
    const v2 = k % 2 === 0;
    return {
      id: w.cpId(k), version: v2 ? '2' : '1', feeRate: v2 ? '1000000000000000' : null, tokenCliffRate: v2 ? '0' : null, tokenClaimDuration: v2 ? '86400' : null,
      tokenVestingDuration: v2 ? '604800' : null, isOvercapStop: v2 ? k % 4 === 0 : null, serialNumber: String(k + 1), createTime: String(start),
      bidStartTime: String(start + 3600), bidEndTime: String(start + 3 * 86400), calmEndTime: String(start + 4 * 86400), freezeDuration: '0', vestingDuration: '0',
      i: '1000000000000000000', k: '0', investorsCount: String(version), creator: w.userId(pick(w.userCount(created), seed, c, TAG.cp, k, 1)),
      mtFeeRateModel: hexOf(5, seed, c, 77), liquidator: hexOf(5, seed, c, 78), baseToken: w.token(1 + pick(tokens - 1, seed, c, TAG.cp, k, 2), at).id,
      quoteToken: w.token(0, at).id, totalShares: fmt(X.dec(BigInt(version) * 10n ** 18n)), totalBase: fmt(X.dec(1_000_000)), poolQuote: fmt(X.dec(version * 1234, 1)),
      poolQuoteCap: fmt(X.dec(10_000_000)), settled: version > 800, dvm: version > 800 ? w.pair(w.realPair(created, seed, c, TAG.cp, k, 3), at).id : null,
      updatedAt: ts(updated), __block: updated,
    };
  };
  put(materializedTable(E('CrowdPooling'), (v) => range(w.cpCount(v.at)).map((k) => cpRow(k, v.at))));

  put(materializedTable(E('BidPosition'), (v) => range(w.userCount(v.at)).filter((u) => u % 5 === 1).map((u) => {
    const created = w.userCreated(u);
    const { version, updated } = w.version(created, 1100, v.at);
    const cp = pick(Math.max(1, w.cpCount(created)), seed, c, TAG.user, u, 13);
    return {
      id: `${w.userId(u)}-${w.cpId(cp)}`, user: w.userId(u), cp: w.cpId(cp), shares: fmt(X.dec(version * 10, 0)), investedQuote: fmt(X.dec(version * 25, 1)),
      lastTxTime: ts(updated), claimed: version > 5, updatedAt: ts(updated), __block: updated,
    };
  })));

  put(materializedTable(E('TradingIncentive'), (v) => [{
    id: hexOf(5, seed, c, 79), totalAmount: fmt(X.dec(500_000 * w.rewards.count(v.at), 6)), totalUser: String(Math.min(w.rewards.count(v.at), w.userCount(v.at))),
    updatedAt: ts(v.at), __block: v.at,
  }]));

  put(materializedTable(E('Pool'), (v) => range(5).map((k) => {
    const { updated } = w.version(tl.spec.startBlock, 4000 + k * 500, v.at);
    return { id: String(k), lpToken: hexOf(5, seed, c, 80, k), staked: fmt(X.dec(1 + pick(1e9, seed, c, 80, k, updated), 3)), updatedAt: ts(updated), __block: updated };
  })));

  put(materializedTable(E('DodoZoo'), (v) => {
    const pairs = w.pairCount(v.at);
    const real = pairs - Math.floor((pairs + 0) / 10);
    const txs = w.swaps.count(v.at);
    return [{
      id: zooId(tl.spec.name, c), pairCount: String(real), tokenCount: String(w.tokenCount(v.at)), crowdpoolingCount: String(w.cpCount(v.at)),
      txCount: String(txs + w.orders.count(v.at) + w.bids.count(v.at)), uniqueUsersCount: String(w.userCount(v.at)),
      volumeUSD: fmt(X.dec(w.orders.count(v.at) * 1337, 2)), feeUSD: fmt(X.dec(txs * 17, 3)), maintainerFeeUSD: fmt(X.dec(w.mtfees.count(v.at) * 3, 2)),
      DIP3MaintainerFeeUSD: '0', updatedAt: ts(v.at), __block: v.at,
    }];
  }));

  putBuckets(put, model, w, swap, bidFacts);
  put(emptyTable(E('FlashLoan')));
  put(emptyTable(E('MiningPool')));
  return tables;
}

/** Day and hour tables: each row is the sum of its bucket's events. */
function putBuckets(
  put: (t: Table) => void,
  model: SchemaModel,
  w: World,
  swap: (i: number) => SwapFacts,
  bid: (i: number) => { b: number; cp: number; u: number; bid: boolean; quote: X.Dec },
): void {
  const E = (name: string) => model.byName.get(name)!;
  const parseId = (secs: number) => (id: string) => {
    const at = id.lastIndexOf('-');
    const n = Number(id.slice(at + 1));
    return at < 0 || !Number.isInteger(n) ? undefined : { key: id.slice(0, at), bucket: n };
  };
  type PairAcc = { last: SwapFacts | undefined; vb: X.Dec; vq: X.Dec; usd: X.Dec; fb: X.Dec; fq: X.Dec; n: number };
  for (const [name, seq, secs] of [['PairDayData', 'date', DAY], ['PairHourData', 'hour', HOUR]] as const) {
    put(bucketTable<PairAcc>({
      entity: E(name), seq, secs, stream: w.swaps,
      keys: (i) => [swap(i).pair.id],
      start: () => ({ last: undefined, vb: ZERO, vq: ZERO, usd: ZERO, fb: ZERO, fq: ZERO, n: 0 }),
      add: (a, i) => {
        const f = swap(i);
        a.last = f;
        a.vb = X.add(a.vb, f.baseVolume);
        a.vq = X.add(a.vq, f.quoteVolume);
        a.usd = X.add(a.usd, f.volumeUSD);
        a.fb = X.add(a.fb, f.feeBase);
        a.fq = X.add(a.fq, f.feeQuote);
        a.n++;
      },
      finish: (a, key, bucket) => {
        const p = a.last!.pair;
        return {
          id: `${key}-${bucket}`, [seq]: bucket * secs, pairAddress: key, pair: name === 'PairHourData' ? null : key, baseToken: p.base.id, quoteToken: p.quote.id,
          baseTokenReserve: fmt(p.baseReserve), quoteTokenReserve: fmt(p.quoteReserve), baseUsdPrice: fmt(p.base.price), quoteUsdPrice: fmt(p.quote.price),
          baseLpTokenTotalSupply: p.type === 'DPP' ? '0' : fmt(p.baseReserve), quoteLpTokenTotalSupply: p.type === 'DPP' ? '0' : fmt(p.quoteReserve),
          untrackedBaseVolume: '0', untrackedQuoteVolume: '0', volumeBase: fmt(a.vb), volumeQuote: fmt(a.vq), volumeUSD: fmt(a.usd),
          feeBase: fmt(a.fb), feeQuote: fmt(a.fq), lpFeeRate: fmt(p.lpFeeRate), txns: String(a.n), traders: String(a.n),
          updatedAt: String(a.last!.ts), __block: a.last!.block,
        };
      },
      parseId: parseId(secs),
    }));
  }

  type TokenAcc = { last: SwapFacts | undefined; vol: X.Dec; usd: X.Dec; fee: X.Dec; n: number; traders: Set<string> };
  put(bucketTable<TokenAcc>({
    entity: E('TokenDayData'), seq: 'date', secs: DAY, stream: w.swaps,
    keys: (i) => { const p = swap(i).pair; return [p.base.id, p.quote.id]; },
    start: () => ({ last: undefined, vol: ZERO, usd: ZERO, fee: ZERO, n: 0, traders: new Set() }),
    add: (a, i, key) => {
      const f = swap(i);
      const isBase = f.pair.base.id === key;
      a.last = f;
      a.vol = X.add(a.vol, isBase ? f.baseVolume : f.quoteVolume);
      a.usd = X.add(a.usd, f.volumeUSD);
      a.fee = X.add(a.fee, isBase ? f.feeBase : f.feeQuote);
      a.n++;
      a.traders.add(f.user);
    },
    finish: (a, key, bucket) => {
      const p = a.last!.pair;
      const t = p.base.id === key ? p.base : p.quote;
      return {
        id: `${key}-${bucket}`, date: bucket * DAY, token: key, untrackedVolume: '0', usdPrice: fmt(t.price), volume: fmt(a.vol), volumeBridge: '0',
        volumeUSD: fmt(a.usd), totalLiquidityToken: '0', fee: fmt(a.fee), maintainerFee: '0', maintainerFeeUSD: '0', txns: String(a.n),
        traders: String(a.traders.size), updatedAt: String(a.last!.ts), __block: a.last!.block,
      };
    },
    parseId: parseId(DAY),
  }));

  type ZooAcc = { last: SwapFacts | undefined; usd: X.Dec; fee: X.Dec; n: number; users: Set<string> };
  put(bucketTable<ZooAcc>({
    entity: E('DodoDayData'), seq: 'date', secs: DAY, stream: w.swaps,
    keys: () => ['day'],
    start: () => ({ last: undefined, usd: ZERO, fee: ZERO, n: 0, users: new Set() }),
    add: (a, i) => {
      const f = swap(i);
      a.last = f;
      a.usd = X.add(a.usd, f.volumeUSD);
      a.fee = X.add(a.fee, X.add(X.mul(f.feeBase, f.pair.base.price), X.mul(f.feeQuote, f.pair.quote.price)));
      a.n++;
      a.users.add(f.user);
    },
    finish: (a, _key, bucket) => ({
      id: String(bucket), date: bucket * DAY, txCount: String(a.n), uniqueUsersCount: String(a.users.size), volumeUSD: fmt(a.usd), feeUSD: fmt(a.fee),
      maintainerFeeUSD: '0', updatedAt: String(a.last!.ts), __block: a.last!.block,
    }),
    parseId: (id) => (/^\d+$/.test(id) ? { key: 'day', bucket: Number(id) } : undefined),
  }));

  type UserAcc = { last: SwapFacts | undefined; n: number };
  put(bucketTable<UserAcc>({
    entity: E('UserDayData'), seq: 'date', secs: DAY, stream: w.swaps,
    keys: (i) => [swap(i).user],
    start: () => ({ last: undefined, n: 0 }),
    add: (a, i) => {
      a.last = swap(i);
      a.n++;
    },
    finish: (a, key, bucket) => ({
      id: `${key}-${bucket}`, date: bucket * DAY, tradeCount: String(a.n), addLPCount: '0', removeLPCount: '0', bidCount: '0', cancelCount: '0', claimCount: '0',
      updatedAt: String(a.last!.ts), __block: a.last!.block,
    }),
    parseId: parseId(DAY),
  }));

  type CpAcc = { last: number; inv: X.Dec; canc: X.Dec; bids: number; users: Set<number> };
  for (const [name, seq, secs] of [['CrowdPoolingDayData', 'date', DAY], ['CrowdPoolingHourData', 'hour', HOUR]] as const) {
    put(bucketTable<CpAcc>({
      entity: E(name), seq, secs, stream: w.bids,
      keys: (i) => [w.cpId(bid(i).cp)],
      start: () => ({ last: 0, inv: ZERO, canc: ZERO, bids: 0, users: new Set() }),
      add: (a, i) => {
        const f = bid(i);
        a.last = f.b;
        if (f.bid) {
          a.inv = X.add(a.inv, f.quote);
          a.bids++;
        } else a.canc = X.add(a.canc, f.quote);
        a.users.add(f.u);
      },
      finish: (a, key, bucket) => ({
        id: `${key}-${bucket}`, [seq]: bucket * secs, crowdPooling: key, investedQuote: fmt(a.inv), canceledQuote: fmt(a.canc), poolQuote: fmt(X.sub(a.inv, a.canc)),
        investCount: String(a.bids), newcome: String(a.users.size), investors: String(a.users.size), updatedAt: String(w.tl.ts(a.last)), __block: a.last,
      }),
      parseId: parseId(secs),
    }));
  }
}

function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
