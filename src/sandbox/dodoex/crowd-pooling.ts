/** Crowd pools and their bid positions. */
import * as X from '../../util/exact.ts';
import { hexOf, pick } from '../hash.ts';
import { materializedTable, type Row } from '../table.ts';
import { TAG } from '../world-entities.ts';
import { type DodoexContext, fmt, type Put, range } from './context.ts';

/**
 * Crowd pools and their bid positions. A pool's `investorsCount` counts its bid positions, and a new position changes
 * the pool (its `updatedAt` and change block), as the upstream's Bid handler does: it adds one to `investorsCount`
 * when the bidder has no position in the pool yet (DODOEX/dodoex_v2_subgraph src/mappings/dodoex/crowdPooling.ts
 * `handleBid`, at 0eb5baca).
 */
export function crowdPoolingTables(cx: DodoexContext, put: Put): void {
  const { w, tl, seed, c, E, ts } = cx;
  /** The bidder (user index) of every bid position, and its pool's index. */
  const positionCp = (u: number) => pick(Math.max(1, w.cpCount(w.userCreated(u))), seed, c, TAG.user, u, 13);
  const isBidder = (u: number) => u % 5 === 1;
  /** Bid positions per pool at block `at`: how many, and the block of the newest. */
  const investors = (at: number): Map<number, { n: number; last: number }> => {
    const out = new Map<number, { n: number; last: number }>();
    for (const u of range(w.userCount(at)).filter(isBidder)) {
      const k = positionCp(u);
      const p = out.get(k) ?? { n: 0, last: 0 };
      out.set(k, { n: p.n + 1, last: Math.max(p.last, w.userCreated(u)) });
    }
    return out;
  };
  const cpRow = (k: number, at: number, positions: { n: number; last: number } | undefined): Row => {
    const created = w.createdBlock(w.every.cp, k);
    const { version, updated: changed } = w.version(created, 300, at);
    const updated = Math.max(changed, positions?.last ?? 0);
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
      investorsCount: String(positions?.n ?? 0),
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
  put(
    materializedTable(E('CrowdPooling'), (v) => {
      const positions = investors(v.at);
      return range(w.cpCount(v.at)).map((k) => cpRow(k, v.at, positions.get(k)));
    }),
  );

  put(
    materializedTable(E('BidPosition'), (v) =>
      range(w.userCount(v.at))
        .filter(isBidder)
        .map((u) => {
          const created = w.userCreated(u);
          const { version, updated } = w.version(created, 1100, v.at);
          const cp = positionCp(u);
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
