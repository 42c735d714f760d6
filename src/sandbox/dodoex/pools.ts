/** Tokens, pools and what hangs on a pool: details, LP tokens, oracle admins, maintainer earnings. */
import * as X from '../../util/exact.ts';
import { hexOf, pick } from '../hash.ts';
import { materializedTable, type Row } from '../table.ts';
import { TAG } from '../world-entities.ts';
import { type DodoexContext, fmt, type Put, range } from './context.ts';

/** Tokens, pools and what hangs on a pool: details, LP tokens, oracle admins, maintainer earnings. */
export function poolTables(cx: DodoexContext, put: Put): void {
  const { w, seed, c, E, ts, lpTokenOf, realPairs } = cx;
  // Mutable entities: versioned rows computed from their index, materialized per block.
  const tokenRow = (k: number, at: number): Row => {
    const t = w.token(k, at);
    const v = t.version;
    return {
      id: t.id,
      untrackedVolume: '0',
      tradeVolume: fmt(X.dec(v * 1_234_567 + k, 3)),
      tradeVolumeBridge: '0',
      volumeUSD: fmt(X.dec(v * 7_654_321 + k, 4)),
      volumeUSDBridge: '0',
      totalLiquidityOnDODO: '0',
      usdPrice: fmt(t.usdPrice),
      txCount: String(v * 3 + 1),
      traderCount: String(v + 1),
      priceUpdateTimestamp: ts(t.updated),
      decimals: String(t.decimals),
      totalSupply: (k === 5 ? 10n ** 40n : 10n ** BigInt(t.decimals + 9)).toString(),
      timestamp: ts(t.created),
      symbol: t.symbol,
      name: t.name,
      updatedAt: ts(t.updated),
      __block: t.updated,
    };
  };
  put(materializedTable(E('Token'), (v) => range(w.tokenCount(v.at)).map((k) => tokenRow(k, v.at))));

  const pairRow = (k: number, at: number): Row => {
    const p = w.pair(k, at);
    const v = p.version;
    const virtual = p.type === 'VIRTUAL';
    const vol = (m: number, s: number) => fmt(X.dec(BigInt(v) * BigInt(m), s - p.magnitude));
    return {
      id: p.id,
      type: p.type,
      source: p.index % 23 === 7 ? 'NFT' : null,
      creator: p.creator,
      owner: virtual ? null : p.creator,
      baseToken: p.base.id,
      quoteToken: p.quote.id,
      baseSymbol: p.base.symbol,
      quoteSymbol: p.quote.symbol,
      i: virtual ? null : X.mul(p.lastTradePrice, X.dec(10n ** 18n)).m.toString(),
      k: virtual ? null : (BigInt(pick(10, seed, c, TAG.pair, k, 8)) * 10n ** 17n).toString(),
      lpFeeRate: fmt(p.lpFeeRate),
      baseLpToken: lpTokenOf(p, 'base'),
      quoteLpToken: lpTokenOf(p, 'quote'),
      baseReserve: fmt(p.baseReserve),
      quoteReserve: fmt(p.quoteReserve),
      lastTradePrice: fmt(p.lastTradePrice),
      untrackedBaseVolume: '0',
      untrackedQuoteVolume: '0',
      volumeBaseToken: vol(1_000_003, 3),
      volumeQuoteToken: vol(2_000_003, 3),
      volumeUSD: vol(3_000_017, 2),
      feeBase: vol(3_001, 3),
      feeQuote: vol(6_007, 3),
      feeUSD: vol(9_011, 3),
      mtFeeBase: '0',
      mtFeeQuote: '0',
      mtFeeUSD: '0',
      txCount: String(v * 2),
      createdAtTimestamp: ts(p.created),
      createdAtBlockNumber: String(p.created),
      liquidityProviderCount: '0',
      mtFeeRate: '0',
      traderCount: String(v),
      mtFeeRateModel: hexOf(5, seed, c, 77),
      maintainer: hexOf(5, seed, c, TAG.pair, k, 30),
      isTradeAllowed: true,
      isDepositBaseAllowed: p.type !== 'DPP',
      isDepositQuoteAllowed: p.type !== 'DPP',
      updatedAt: ts(p.updated),
      __block: p.updated,
    };
  };
  put(materializedTable(E('Pair'), (v) => range(w.pairCount(v.at)).map((k) => pairRow(k, v.at))));

  put(
    materializedTable(E('PairDetail'), (v) =>
      realPairs(v.at).map((p) => {
        const raw = (d: X.Dec, dec: number) =>
          X.mul(d, X.dec(10n ** BigInt(dec))).m / 10n ** BigInt(Math.max(0, X.mul(d, X.dec(1)).s));
        return {
          id: p.id,
          pair: p.id,
          i: X.mul(p.lastTradePrice, X.dec(10n ** 18n)).m.toString(),
          k: '100000000000000000',
          b: raw(p.baseReserve, p.base.decimals).toString(),
          q: raw(p.quoteReserve, p.quote.decimals).toString(),
          b0: raw(p.baseReserve, p.base.decimals).toString(),
          q0: raw(p.quoteReserve, p.quote.decimals).toString(),
          r: String(p.version % 3),
          updatedAt: ts(p.updated),
          __block: p.updated,
        };
      }),
    ),
  );

  put(
    materializedTable(E('LpToken'), (v) =>
      realPairs(v.at).flatMap((p) => {
        const sides: ('base' | 'quote')[] = p.type === 'CLASSICAL' ? ['base', 'quote'] : ['base'];
        return sides.flatMap((side) => {
          const id = lpTokenOf(p, side);
          if (!id) return [];
          const t = side === 'base' ? p.base : p.quote;
          // Created without updatedAt (helpers.ts createLpToken); only a later deposit or withdrawal of the token sets it
          // (classicPoolFromV1.ts, pool.ts). Here: never for a third of the pools, and not before a pool's second change.
          const updatedAt = p.index % 3 === 1 || p.version < 2 ? null : ts(p.updated);
          return [
            {
              id,
              pair: p.id,
              symbol: `${t.symbol}_LP`,
              name: `${t.symbol} LP Token`,
              decimals: String(t.decimals),
              totalSupply: X.mul(p.baseReserve, X.dec(10n ** BigInt(t.decimals))).m.toString(),
              updatedAt,
              __block: p.updated,
            },
          ];
        });
      }),
    ),
  );

  put(
    materializedTable(E('DPPOracleAdmin'), (v) =>
      realPairs(v.at)
        .filter((p) => p.type === 'DPP' && p.index % 2 === 0)
        .map((p) => ({
          id: hexOf(5, seed, c, TAG.pair, p.index, 40),
          pair: p.id,
          previousOwner: p.index % 4 === 0 ? null : p.creator,
          newOwner: p.creator,
          updatedAt: ts(p.created),
          __block: p.created,
        })),
    ),
  );

  put(
    materializedTable(E('MaintainerEarnings'), (v) =>
      realPairs(v.at)
        .filter((p) => p.index % 3 === 0)
        .map((p) => ({
          id: `${hexOf(5, seed, c, TAG.pair, p.index, 30)}-${p.base.id}`,
          maintainer: hexOf(5, seed, c, TAG.pair, p.index, 30),
          token: p.base.id,
          // Its amounts grow, but the upstream's mapping never sets updatedAt on it (classicPoolFromV1.ts handleChargeMaintainerFee).
          amount: fmt(X.dec(p.version * 13, 2)),
          amountUSD: fmt(X.normalize(X.mul(X.dec(p.version * 13, 2), w.token(p.base.index, p.updated).usdPrice))),
          updatedAt: null,
          __block: p.updated,
        })),
    ),
  );
}
