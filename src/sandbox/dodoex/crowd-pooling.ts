/** Crowd pools and their bid positions. */
import * as X from '../../util/exact.ts';
import { hexOf, pick } from '../hash.ts';
import { materializedTable, type Row } from '../table.ts';
import { TAG } from '../world.ts';
import { type DodoexContext, fmt, type Put, range } from './context.ts';

/** Crowd pools and their bid positions. */
export function crowdPoolingTables(cx: DodoexContext, put: Put): void {
  const { w, tl, seed, c, E, ts } = cx;
  const cpRow = (k: number, at: number): Row => {
    const created = w.createdBlock(w.every.cp, k);
    const { version, updated } = w.version(created, 300, at);
    const tokens = w.tokenCount(created);
    const start = tl.ts(created);
    const v2 = k % 2 === 0;
    return {
      id: w.cpId(k),
      version: v2 ? '2' : '1',
      feeRate: v2 ? '1000000000000000' : null,
      tokenCliffRate: v2 ? '0' : null,
      tokenClaimDuration: v2 ? '86400' : null,
      tokenVestingDuration: v2 ? '604800' : null,
      isOvercapStop: v2 ? k % 4 === 0 : null,
      serialNumber: String(k + 1),
      createTime: String(start),
      bidStartTime: String(start + 3600),
      bidEndTime: String(start + 3 * 86400),
      calmEndTime: String(start + 4 * 86400),
      freezeDuration: '0',
      vestingDuration: '0',
      i: '1000000000000000000',
      k: '0',
      investorsCount: String(version),
      creator: w.userId(pick(w.userCount(created), seed, c, TAG.cp, k, 1)),
      mtFeeRateModel: hexOf(5, seed, c, 77),
      liquidator: hexOf(5, seed, c, 78),
      baseToken: w.token(1 + pick(tokens - 1, seed, c, TAG.cp, k, 2), at).id,
      quoteToken: w.token(0, at).id,
      totalShares: fmt(X.dec(BigInt(version) * 10n ** 18n)),
      totalBase: fmt(X.dec(1_000_000)),
      poolQuote: fmt(X.dec(version * 1234, 1)),
      poolQuoteCap: fmt(X.dec(10_000_000)),
      settled: version > 800,
      dvm: version > 800 ? w.pair(w.realPair(created, seed, c, TAG.cp, k, 3), at).id : null,
      updatedAt: ts(updated),
      __block: updated,
    };
  };
  put(materializedTable(E('CrowdPooling'), (v) => range(w.cpCount(v.at)).map((k) => cpRow(k, v.at))));

  put(
    materializedTable(E('BidPosition'), (v) =>
      range(w.userCount(v.at))
        .filter((u) => u % 5 === 1)
        .map((u) => {
          const created = w.userCreated(u);
          const { version, updated } = w.version(created, 1100, v.at);
          const cp = pick(Math.max(1, w.cpCount(created)), seed, c, TAG.user, u, 13);
          return {
            id: `${w.userId(u)}-${w.cpId(cp)}`,
            user: w.userId(u),
            cp: w.cpId(cp),
            shares: fmt(X.dec(version * 10, 0)),
            investedQuote: fmt(X.dec(version * 25, 1)),
            lastTxTime: ts(updated),
            claimed: version > 5,
            updatedAt: ts(updated),
            __block: updated,
          };
        }),
    ),
  );
}
