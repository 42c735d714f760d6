/** Users and what they hold or trade: liquidity positions, pair and token traders. */
import * as X from '../../util/exact.ts';
import { pick } from '../hash.ts';
import { materializedTable, type Row } from '../table.ts';
import { TAG } from '../world-entities.ts';
import { type DodoexContext, fmt, type Put, range } from './context.ts';

/** Users and what they hold or trade: liquidity positions, pair and token traders. */
export function userTables(cx: DodoexContext, put: Put): void {
  const { w, seed, c, E, ts, positionPair, lpTokenOf } = cx;
  const userPeriod = 2000;
  const userRow = (u: number, at: number): Row => {
    const created = w.userCreated(u);
    const { version, updated } = w.version(created, userPeriod + (u % 7) * 100, at);
    return {
      id: w.userId(u),
      txCount: String(version + 1),
      tradingRewardRecieved: fmt(X.dec(version * 5, 1)),
      timestamp: ts(created),
      updatedAt: ts(updated),
      __block: updated,
    };
  };
  put(materializedTable(E('User'), (v) => range(w.userCount(v.at)).map((u) => userRow(u, v.at))));

  put(
    materializedTable(E('LiquidityPosition'), (v) =>
      range(w.userCount(v.at))
        .filter((u) => u % 3 === 0)
        .map((u) => {
          const created = w.userCreated(u);
          const { version, updated } = w.version(created, 900 + (u % 5) * 100, v.at);
          const p = w.pair(positionPair(u), v.at);
          const lp = lpTokenOf(p, 'base') ?? p.id;
          return {
            id: `${w.userId(u)}-${lp}`,
            user: w.userId(u),
            pair: p.id,
            lpToken: lp,
            liquidityTokenBalance: fmt(X.dec(1 + pick(1e9, seed, c, TAG.user, u, version), 4)),
            liquidityTokenInMining: u % 2 === 0 ? '0' : fmt(X.dec(version, 1)),
            lastTxTime: ts(updated),
            updatedAt: ts(updated),
            __block: updated,
          };
        }),
    ),
  );

  put(
    materializedTable(E('PairTrader'), (v) =>
      range(w.userCount(v.at)).map((u) => {
        const created = w.userCreated(u);
        const { updated } = w.version(created, 1500, v.at);
        const p = w.pair(w.realPair(created, seed, c, TAG.user, u, 11), created);
        return {
          id: `${w.userId(u)}-${p.id}`,
          pair: p.id,
          trader: w.userId(u),
          lastTxTime: ts(updated),
          updatedAt: ts(updated),
          __block: updated,
        };
      }),
    ),
  );

  put(
    materializedTable(E('TokenTrader'), (v) =>
      range(w.userCount(v.at)).map((u) => {
        const created = w.userCreated(u);
        const { updated } = w.version(created, 1700, v.at);
        const t = w.token(pick(w.tokenCount(created), seed, c, TAG.user, u, 12), created);
        return {
          id: `${t.id}-${w.userId(u)}`,
          token: t.id,
          trader: w.userId(u),
          lastTxTime: ts(updated),
          updatedAt: ts(updated),
          __block: updated,
        };
      }),
    ),
  );
}
