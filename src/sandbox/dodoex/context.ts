/** What every family of `dodoex` tables of one chain shares: the world, and the facts of swaps, bids and pools. */

import type { EntityModel, SchemaModel } from '../../schemas/entity-model.ts';
import * as X from '../../util/exact.ts';
import { hexOf, pick } from '../hash.ts';
import type { Table } from '../table.ts';
import { eventHash } from '../table-kinds.ts';
import type { Timeline } from '../timeline.ts';
import type { World } from '../world.ts';
import { type PairState, TAG } from '../world-entities.ts';

export const fmt = X.format;
export const ZERO = X.dec(0);
export const DAY = 86_400;
export const HOUR = 3_600;

/** Adds a table to the schema's tables. */
export type Put = (t: Table) => void;

/** The numeric facts of one swap, shared by the swap row and the buckets that sum it. */
export interface SwapFacts {
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

/** The facts of one crowd-pooling bid, shared by the bid row and the buckets that sum it. */
export interface BidFacts {
  b: number;
  s: number;
  cp: number;
  u: number;
  bid: boolean;
  quote: X.Dec;
}

/** The shared state and facts of one chain's `dodoex` tables. */
export interface DodoexContext {
  readonly w: World;
  readonly tl: Timeline;
  readonly seed: number;
  /** The chain id. */
  readonly c: number;
  /** An entity of the schema, by name. */
  readonly E: (name: string) => EntityModel;
  /** A block's timestamp, as text. */
  readonly ts: (b: number) => string;
  readonly swap: (i: number) => SwapFacts;
  readonly swapId: (f: SwapFacts) => string;
  readonly bidFacts: (i: number) => BidFacts;
  /** The pool of user `u`'s liquidity position. */
  readonly positionPair: (u: number) => number;
  /** The LP token of a pool's side, or null where the pool has none. */
  readonly lpTokenOf: (p: PairState, side: 'base' | 'quote') => string | null;
  /** The pools as of a block, without the virtual ones. */
  readonly realPairs: (at: number) => PairState[];
}

/** The context of one chain's `dodoex` tables. */
export function dodoexContext(model: SchemaModel, w: World): DodoexContext {
  const tl = w.tl;
  const seed = w.opts.seed;
  const c = w.chainId;
  const ts = (b: number) => String(tl.ts(b));
  const swap = (i: number): SwapFacts => {
    const block = w.swaps.blockOf(i);
    const s = w.salt(block);
    const pair = w.pair(w.realPair(block, seed, c, TAG.swap, i, s, 1), block);
    const sellBase = pick(2, seed, c, TAG.swap, i, s, 4) === 0;
    const baseVolume = X.normalize(X.dec(1 + pick(1_000_000_000, seed, c, TAG.swap, i, s, 3), 6 - pair.magnitude));
    const quoteVolume = X.normalize(X.mul(baseVolume, pair.lastTradePrice));
    return {
      i,
      block,
      ts: tl.ts(block),
      pair,
      sellBase,
      baseVolume,
      quoteVolume,
      user: w.userId(pick(w.userCount(block), seed, c, TAG.swap, i, s, 5)),
      feeBase: sellBase ? ZERO : X.normalize(X.mul(baseVolume, pair.lpFeeRate)),
      feeQuote: sellBase ? X.normalize(X.mul(quoteVolume, pair.lpFeeRate)) : ZERO,
      volumeUSD: X.normalize(X.mul(baseVolume, pair.base.usdPrice)),
    };
  };
  const swapId = (f: SwapFacts) =>
    `${eventHash(tl, TAG.swap, f.i, w.salt(f.block))}-${pick(300, seed, c, TAG.swap, f.i, 2)}`;
  // Liquidity: users whose index is a multiple of 3 hold one position each, in a pool chosen when they appear.
  // Positions are held in pools with an LP token (private DPP pools have none); pool 0 always has one.
  const positionPair = (u: number) => {
    let k = w.realPair(w.userCreated(u), seed, c, TAG.user, u, 9);
    while (k > 0 && ['DPP', 'VIRTUAL'].includes(w.pair(k, w.userCreated(u)).type)) k--;
    return k;
  };
  const lpTokenOf = (p: PairState, side: 'base' | 'quote') =>
    p.type === 'DPP' || p.type === 'VIRTUAL'
      ? null
      : p.type === 'CLASSICAL'
        ? hexOf(5, seed, c, TAG.pair, p.index, side === 'base' ? 21 : 22)
        : p.id;
  const bidFacts = (i: number): BidFacts => {
    const b = w.bids.blockOf(i);
    const s = w.salt(b);
    const cp = pick(Math.max(1, w.cpCount(b)), seed, c, TAG.bid, i, s, 1);
    const u = 5 * pick(Math.ceil(w.userCount(b) / 5), seed, c, TAG.bid, i, s, 2) + 1;
    const bid = pick(5, seed, c, TAG.bid, i, s, 3) !== 0;
    const quote = X.dec(1 + pick(10_000_000, seed, c, TAG.bid, i, s, 4), 3);
    return { b, s, cp, u, bid, quote };
  };
  const realPairs = (at: number) =>
    range(w.pairCount(at))
      .filter((k) => !w.isVirtual(k))
      .map((k) => w.pair(k, at));
  const E = (name: string) => model.byName.get(name)!;
  return { w, tl, seed, c, E, ts, swap, swapId, bidFacts, positionPair, lpTokenOf, realPairs };
}

/** The `dodoZoo` id per chain, as the upstream names it. */
export function zooId(chainName: string, chainId: number): string {
  return chainId === 1 ? 'dodoex-v2' : `dodoex-v2-${chainName}`;
}

/** 0, 1, … n - 1. */
export function range(n: number): number[] {
  return Array.from({ length: n }, (_, i) => i);
}
