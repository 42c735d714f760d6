/** Day and hour tables: each row is the sum of its bucket's events (swaps, or crowd-pooling bids). */
import * as X from '../../util/exact.ts';
import { bucketTable } from '../table-kinds.ts';
import { DAY, type DodoexContext, fmt, HOUR, type Put, type SwapFacts, ZERO } from './context.ts';

/** A bucket id `<key>-<bucket number>` read back. */
function parseId(id: string): { key: string; bucket: number } | undefined {
  const at = id.lastIndexOf('-');
  const n = Number(id.slice(at + 1));
  return at < 0 || !Number.isInteger(n) ? undefined : { key: id.slice(0, at), bucket: n };
}

/** Pair day and hour data: volumes and fees of a pool's swaps, with its reserves and prices at the last one. */
export function pairBuckets(cx: DodoexContext, put: Put): void {
  const { w, E, swap } = cx;
  type PairAcc = { last: SwapFacts | undefined; vb: X.Dec; vq: X.Dec; usd: X.Dec; fb: X.Dec; fq: X.Dec; n: number };
  for (const [name, seq, secs] of [
    ['PairDayData', 'date', DAY],
    ['PairHourData', 'hour', HOUR],
  ] as const) {
    put(
      bucketTable<PairAcc>({
        entity: E(name),
        seq,
        secs,
        stream: w.swaps,
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
            id: `${key}-${bucket}`,
            [seq]: bucket * secs,
            pairAddress: key,
            pair: name === 'PairHourData' ? null : key,
            baseToken: p.base.id,
            quoteToken: p.quote.id,
            baseTokenReserve: fmt(p.baseReserve),
            quoteTokenReserve: fmt(p.quoteReserve),
            baseUsdPrice: fmt(p.base.usdPrice),
            quoteUsdPrice: fmt(p.quote.usdPrice),
            baseLpTokenTotalSupply: p.type === 'DPP' ? '0' : fmt(p.baseReserve),
            quoteLpTokenTotalSupply: p.type === 'DPP' ? '0' : fmt(p.quoteReserve),
            untrackedBaseVolume: '0',
            untrackedQuoteVolume: '0',
            volumeBase: fmt(a.vb),
            volumeQuote: fmt(a.vq),
            volumeUSD: fmt(a.usd),
            feeBase: fmt(a.fb),
            feeQuote: fmt(a.fq),
            lpFeeRate: fmt(p.lpFeeRate),
            txns: String(a.n),
            traders: String(a.n),
            updatedAt: String(a.last!.ts),
            __block: a.last!.block,
          };
        },
        parseId,
      }),
    );
  }
}

/** Token, exchange and user day data: what each day's swaps add up to per token, overall, and per trader. */
export function tradeBuckets(cx: DodoexContext, put: Put): void {
  const { w, E, swap } = cx;
  type TokenAcc = { last: SwapFacts | undefined; vol: X.Dec; usd: X.Dec; fee: X.Dec; n: number; traders: Set<string> };
  put(
    bucketTable<TokenAcc>({
      entity: E('TokenDayData'),
      seq: 'date',
      secs: DAY,
      stream: w.swaps,
      keys: (i) => {
        const p = swap(i).pair;
        return [p.base.id, p.quote.id];
      },
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
          id: `${key}-${bucket}`,
          date: bucket * DAY,
          token: key,
          untrackedVolume: '0',
          usdPrice: fmt(t.usdPrice),
          volume: fmt(a.vol),
          volumeBridge: '0',
          volumeUSD: fmt(a.usd),
          totalLiquidityToken: '0',
          fee: fmt(a.fee),
          maintainerFee: '0',
          maintainerFeeUSD: '0',
          txns: String(a.n),
          traders: String(a.traders.size),
          updatedAt: String(a.last!.ts),
          __block: a.last!.block,
        };
      },
      parseId,
    }),
  );

  type ZooAcc = { last: SwapFacts | undefined; usd: X.Dec; fee: X.Dec; n: number; users: Set<string> };
  put(
    bucketTable<ZooAcc>({
      entity: E('DodoDayData'),
      seq: 'date',
      secs: DAY,
      stream: w.swaps,
      keys: () => ['day'],
      start: () => ({ last: undefined, usd: ZERO, fee: ZERO, n: 0, users: new Set() }),
      add: (a, i) => {
        const f = swap(i);
        a.last = f;
        a.usd = X.add(a.usd, f.volumeUSD);
        a.fee = X.add(a.fee, X.add(X.mul(f.feeBase, f.pair.base.usdPrice), X.mul(f.feeQuote, f.pair.quote.usdPrice)));
        a.n++;
        a.users.add(f.user);
      },
      finish: (a, _key, bucket) => ({
        id: String(bucket),
        date: bucket * DAY,
        txCount: String(a.n),
        uniqueUsersCount: String(a.users.size),
        volumeUSD: fmt(a.usd),
        feeUSD: fmt(a.fee),
        maintainerFeeUSD: '0',
        updatedAt: String(a.last!.ts),
        __block: a.last!.block,
      }),
      parseId: (id) => (/^\d+$/.test(id) ? { key: 'day', bucket: Number(id) } : undefined),
    }),
  );

  type UserAcc = { last: SwapFacts | undefined; n: number };
  put(
    bucketTable<UserAcc>({
      entity: E('UserDayData'),
      seq: 'date',
      secs: DAY,
      stream: w.swaps,
      keys: (i) => [swap(i).user],
      start: () => ({ last: undefined, n: 0 }),
      add: (a, i) => {
        a.last = swap(i);
        a.n++;
      },
      finish: (a, key, bucket) => ({
        id: `${key}-${bucket}`,
        date: bucket * DAY,
        tradeCount: String(a.n),
        addLPCount: '0',
        removeLPCount: '0',
        bidCount: '0',
        cancelCount: '0',
        claimCount: '0',
        updatedAt: String(a.last!.ts),
        __block: a.last!.block,
      }),
      parseId,
    }),
  );
}

/** Crowd-pooling day and hour data: what the bids and cancellations of each crowd pool add up to. */
export function crowdPoolingBuckets(cx: DodoexContext, put: Put): void {
  const { w, E, bidFacts: bid } = cx;
  type CpAcc = { last: number; inv: X.Dec; canc: X.Dec; bids: number; users: Set<number> };
  for (const [name, seq, secs] of [
    ['CrowdPoolingDayData', 'date', DAY],
    ['CrowdPoolingHourData', 'hour', HOUR],
  ] as const) {
    put(
      bucketTable<CpAcc>({
        entity: E(name),
        seq,
        secs,
        stream: w.bids,
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
          id: `${key}-${bucket}`,
          [seq]: bucket * secs,
          crowdPooling: key,
          investedQuote: fmt(a.inv),
          canceledQuote: fmt(a.canc),
          poolQuote: fmt(X.sub(a.inv, a.canc)),
          investCount: String(a.bids),
          newcome: String(a.users.size),
          investors: String(a.users.size),
          updatedAt: String(w.tl.ts(a.last)),
          __block: a.last,
        }),
        parseId,
      }),
    );
  }
}
