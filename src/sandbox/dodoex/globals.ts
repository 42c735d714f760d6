/** Global counters: the trading incentive, the staking pools, the zoo. */
import * as X from '../../util/exact.ts';
import { hexOf, pick } from '../hash.ts';
import { materializedTable } from '../table.ts';
import { type DodoexContext, fmt, type Put, range, zooId } from './context.ts';

/** Global counters: the trading incentive, the staking pools, the zoo. */
export function globalTables(cx: DodoexContext, put: Put): void {
  const { w, tl, seed, c, E, ts } = cx;
  put(
    materializedTable(E('TradingIncentive'), (v) => [
      {
        id: hexOf(5, seed, c, 79),
        totalAmount: fmt(X.dec(500_000 * w.rewards.count(v.at), 6)),
        totalUser: String(Math.min(w.rewards.count(v.at), w.userCount(v.at))),
        updatedAt: ts(v.at),
        __block: v.at,
      },
    ]),
  );

  put(
    materializedTable(E('Pool'), (v) =>
      range(5).map((k) => {
        const { updated } = w.version(tl.spec.startBlock, 4000 + k * 500, v.at);
        return {
          id: String(k),
          lpToken: hexOf(5, seed, c, 80, k),
          staked: fmt(X.dec(1 + pick(1e9, seed, c, 80, k, updated), 3)),
          updatedAt: ts(updated),
          __block: updated,
        };
      }),
    ),
  );

  put(
    materializedTable(E('DodoZoo'), (v) => {
      const pairs = w.pairCount(v.at);
      const real = pairs - Math.floor((pairs + 0) / 10);
      const txs = w.swaps.count(v.at);
      return [
        {
          id: zooId(tl.spec.name, c),
          pairCount: String(real),
          tokenCount: String(w.tokenCount(v.at)),
          crowdpoolingCount: String(w.cpCount(v.at)),
          txCount: String(txs + w.orders.count(v.at) + w.bids.count(v.at)),
          uniqueUsersCount: String(w.userCount(v.at)),
          volumeUSD: fmt(X.dec(w.orders.count(v.at) * 1337, 2)),
          feeUSD: fmt(X.dec(txs * 17, 3)),
          maintainerFeeUSD: fmt(X.dec(w.mtfees.count(v.at) * 3, 2)),
          DIP3MaintainerFeeUSD: '0',
          updatedAt: ts(v.at),
          __block: v.at,
        },
      ];
    }),
  );
}
