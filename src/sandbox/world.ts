/** The shared state of one chain's generated world: sizes, streams and the versioned mutable entities every schema reads. */

import TRUSTED from '../config/trusted-tokens.json' with { type: 'json' };
import * as X from '../util/exact.ts';
import { hexOf, pick } from './hash.ts';
import type { PruneHint } from './prune.ts';
import { chainSpec, EventStream, Timeline } from './timeline.ts';
import {
  type PairState,
  type PairStatic,
  Pool,
  TAG,
  type TokenState,
  VersionMemo,
  versionAt,
} from './world-entities.ts';

/** Options that size a chain's world. */
export interface WorldOptions {
  readonly seed: number;
  /** Swaps in the pre-generated history; other entities scale from it. */
  readonly swaps: number;
  /** Extra swaps packed into one block (one timestamp) somewhere in history. */
  readonly burst: number;
  readonly historyDays: number;
  /** Whether a token reports pumped USD prices on some days (default true; false: the sandbox before it). */
  readonly pumpedPrices?: boolean;
  /** Unix time of the head at start (history ends there); 2026-01-01T00:00Z when absent. */
  readonly now?: number;
  /** History the deployments keep (`--prune`; `sandbox/prune.ts`): every block when absent. */
  readonly prune?: PruneHint;
}

/** Fixed facts of the special tokens: stable, wrapped native, and hostile values. */
const SPECIAL_TOKENS: readonly { symbol: string; name: string; decimals: number; price: X.Dec }[] = [
  { symbol: 'USDT', name: 'Tether USD', decimals: 6, price: X.dec(1) },
  { symbol: 'WETH', name: 'Wrapped Ether', decimals: 18, price: X.dec(2000) },
  {
    symbol: `O'Reilly"; DROP TABLE tokens;--`,
    name: `Robert'); DROP TABLE swaps;-- "quoted" \\ back`,
    decimals: 18,
    price: X.dec(5, 1),
  },
  { symbol: '🦄UNI🚀', name: 'Unicorn 🦄 «Ünïcödé»', decimals: 18, price: X.dec(725, 2) },
  { symbol: 'DUST', name: 'Dust token', decimals: 18, price: X.dec(1, 18) },
  { symbol: 'BIG', name: 'Big supply', decimals: 0, price: X.parse('1234.567890123456789012345678901234') },
  { symbol: 'unknown', name: 'Nameless', decimals: 8, price: X.dec(30_000) },
];

/**
 * The stable and the wrapped native token of the chains the service documents, at their real addresses (tokens 0 and
 * 1 of a world): DODO's own subgraph prices every token from these (src/config/trusted-tokens.json cites the source).
 */
const REAL_TOKENS: ReadonlyMap<number, readonly { id: string; symbol: string; name: string }[]> = new Map(
  Object.entries(
    (TRUSTED as { chains: Record<string, { address: string; symbol: string; role: string }[]> }).chains,
  ).map(([chain, list]) => {
    const stable = list.find((t) => t.role === 'stable')!;
    const wrapped = list.find((t) => t.role === 'wrapped-native')!;
    return [
      Number(chain),
      [
        { id: stable.address, symbol: stable.symbol, name: `${stable.symbol} stablecoin` },
        { id: wrapped.address, symbol: wrapped.symbol, name: `Wrapped ${wrapped.symbol.slice(1)}` },
      ],
    ];
  }),
);

const POOL_TYPES = ['DVM', 'DVM', 'DVM', 'DPP', 'DPP', 'DSP', 'DSP', 'CLASSICAL', 'GSP'] as const;
const FEE_RATES = [X.dec(3, 3), X.dec(1, 3), X.dec(1, 4), X.dec(1, 2)];
const TOKEN_DECIMALS = [18, 6, 8, 18, 9, 18];

/** User addresses kept (users past this index, created long after history, are computed each time). */
const USER_IDS_KEPT = 1_000_000;

const TOKEN_PERIODS = [600, 3000, 40] as const;
const PAIR_PERIODS = [7, 50, 400, 5000] as const;

/** One chain's world. */
export class World {
  private readonly tokenMemo = new VersionMemo<TokenState>();
  private readonly pairStatics: PairStatic[] = [];
  /** The last state made for each pool, reused while its version, salt and token states are the same. */
  private readonly pairLast: (Pool | undefined)[] = [];
  private readonly priceLast: ({ version: number; salt: number; price: X.Dec } | undefined)[] = [];
  /** User addresses by index: there are at most about 100,000 of them in history (a few MB). */
  private readonly userIds: string[] = [];
  readonly tl: Timeline;
  readonly chainId: number;
  readonly swaps: EventStream;
  readonly orders: EventStream;
  readonly lps: EventStream;
  readonly bids: EventStream;
  readonly mtfees: EventStream;
  readonly slips: EventStream;
  readonly rewards: EventStream;
  /** Swaps between the creations of two consecutive pairs, tokens, users, crowd pools, mining pools. */
  readonly every: { pair: number; token: number; user: number; cp: number; mine: number };
  readonly router: string;

  constructor(
    readonly opts: WorldOptions,
    chainId: number,
  ) {
    this.chainId = chainId;
    this.tl = new Timeline(opts.seed, chainSpec(chainId), opts.historyDays, opts.now);
    const n = Math.max(10, opts.swaps);
    const per = (k: number, min: number) => Math.max(min, Math.floor(n / k));
    this.swaps = new EventStream(this.tl, n, opts.burst);
    this.orders = new EventStream(this.tl, per(2, 10));
    this.lps = new EventStream(this.tl, per(10, 20));
    this.bids = new EventStream(this.tl, per(50, 10));
    this.mtfees = new EventStream(this.tl, per(100, 5));
    this.slips = new EventStream(this.tl, per(200, 5));
    this.rewards = new EventStream(this.tl, per(100, 5));
    const every = (count: number) => Math.max(1, Math.floor(n / count));
    this.every = {
      pair: every(clamp(n / 400, 10, 5000)),
      token: every(clamp(n / 600, 8, 3000)),
      user: every(clamp(n / 50, 12, 100_000)),
      cp: every(clamp(n / 5000, 3, 500)),
      mine: every(clamp(n / 2000, 3, 1000)),
    };
    this.router = hexOf(5, opts.seed, chainId, 99);
  }

  /** Salt of a block, for mixing into derived values. */
  salt(block: number): number {
    return this.tl.salt(block);
  }

  /** Number of items created every `every` swaps, as of block `at`. */
  createdCount(every: number, at: number, extra = 1): number {
    const n = this.swaps.count(at);
    return n === 0 ? 0 : Math.ceil(n / every) + extra - 1;
  }

  /** Creation block of item `k` created every `every` swaps (the first `extra` items at the first swap). */
  createdBlock(every: number, k: number, extra = 1): number {
    return this.swaps.blockOf(Math.max(0, k - extra + 1) * every);
  }

  /** The version of a mutable item at block `at`: how many times it changed since creation, and the block of its last change. */
  version(created: number, period: number, at: number): { version: number; updated: number } {
    const version = versionAt(created, period, at);
    return { version, updated: created + version * period };
  }

  /** Tokens existing at block `at` (tokens 0 and 1 exist from the start). */
  tokenCount(at: number): number {
    return this.createdCount(this.every.token, at, 2);
  }

  /** A token's state at block `at`. */
  token(k: number, at: number): TokenState {
    const created = this.createdBlock(this.every.token, k, 2);
    const period = TOKEN_PERIODS[k % 3]!;
    const version = versionAt(created, period, at);
    const updated = created + version * period;
    const salt = this.salt(updated);
    const key = VersionMemo.key(version, salt);
    if (key === undefined) return this.makeToken(k, created, updated, version, salt);
    return this.tokenMemo.get(k, key) ?? this.tokenMemo.set(k, key, this.makeToken(k, created, updated, version, salt));
  }

  private makeToken(k: number, created: number, updated: number, version: number, salt: number): TokenState {
    const real = k < 2 ? REAL_TOKENS.get(this.chainId)?.[k] : undefined;
    const special = real ? { ...SPECIAL_TOKENS[k]!, ...real } : SPECIAL_TOKENS[k];
    const seed = this.opts.seed;
    const id = real?.id ?? hexOf(5, seed, this.chainId, TAG.token, k);
    const base = special?.price ?? X.dec(1 + pick(1_000_000, seed, this.chainId, TAG.token, k, 7), 3);
    // The stable token keeps its price; the others drift by up to ±1% per version.
    const drift =
      k === 0 ? X.dec(1) : X.dec(100_000 + pick(2001, seed, this.chainId, TAG.token, k, version, salt) - 1000, 5);
    const price = X.normalize(X.mul(base, drift));
    // DODO's subgraph sets a token's usdPrice from whichever pool traded it last (DODOEX/dodoex_v2_subgraph 0eb5baca,
    // src/mappings/dodoex/pool.ts handleDODOSwap: base.usdPrice = quote.usdPrice × lastTradePrice), so a pool its owner
    // controls can set any price. The untrusted token of pool 6 (paired with the wrapped native coin, so that it has a
    // derived price) has its price set 1e24 times too high every third UTC day, for every version of that day, while
    // its pools go on trading it at its own price.
    const pumped = k === this.pumpedToken() && Math.floor(this.tl.ts(updated) / 86_400) % 3 === 0;
    return {
      index: k,
      id,
      symbol: special?.symbol ?? `TK${k}`,
      name: special?.name ?? `Token ${k}`,
      decimals: special?.decimals ?? TOKEN_DECIMALS[k % TOKEN_DECIMALS.length]!,
      created,
      updated,
      version,
      price,
      usdPrice: pumped ? X.normalize(X.mul(price, X.dec(10n ** 24n))) : price,
    };
  }

  /** The token whose reported price is pumped on some days: pool 6's untrusted quote (none when pool 6 has none). */
  private pumpedToken(): number | undefined {
    if (this.opts.pumpedPrices === false) return undefined;
    const st = this.pairStatic(6);
    return st.baseIdx === 1 && st.quoteIdx >= 2 ? st.quoteIdx : undefined;
  }

  /** Pools existing at block `at`. */
  pairCount(at: number): number {
    return this.createdCount(this.every.pair, at);
  }

  /** Every tenth pool is a statistics-only VIRTUAL pair of the smart router. */
  isVirtual(k: number): boolean {
    return k % 10 === 9;
  }

  /** A real (non-virtual) pool index for a random draw among the pools existing at `at`. */
  realPair(at: number, ...parts: number[]): number {
    const k = pick(this.pairCount(at), ...parts);
    return this.isVirtual(k) ? k - 1 : k;
  }

  private pairStatic(k: number): PairStatic {
    return this.pairStatics[k] ?? (this.pairStatics[k] = this.makePairStatic(k));
  }

  private makePairStatic(k: number): PairStatic {
    const seed = this.opts.seed;
    const c = this.chainId;
    const created = this.createdBlock(this.every.pair, k);
    const tokens = this.tokenCount(created);
    const virtual = this.isVirtual(k);
    let baseIdx = 1 + pick(tokens - 1, seed, c, TAG.pair, k, 1);
    let quoteIdx = pick(3, seed, c, TAG.pair, k, 2) === 0 ? pick(tokens, seed, c, TAG.pair, k, 3) : 0;
    if (quoteIdx === baseIdx) quoteIdx = 0;
    // A VIRTUAL pair's id is `<base>-<quote>`: each takes its own token pair, so that no two share an id (as no two
    // subgraph entities can), whatever the seed and scale.
    if (virtual)
      [baseIdx, quoteIdx] = virtualTokens(Math.floor(k / 10), tokens, pick(2, seed, c, TAG.pair, k, 7) === 1);
    // The scam pool holds 1e30-scale reserves of two tokens no one trusts (the hostile SQL and emoji symbols), whose
    // prices would inflate every untracked total.
    const scam = k === this.scamPool();
    if (scam) [baseIdx, quoteIdx] = [2, 3];
    // Pool 6 pairs the wrapped native coin (trusted) as base with an untrusted quote, so that every combination of
    // trusted sides occurs (tracked value counts the trusted side twice there).
    if (k === 6 && tokens > 2) [baseIdx, quoteIdx] = [1, 2 + pick(tokens - 2, seed, c, TAG.pair, k, 8)];
    return {
      created,
      period: PAIR_PERIODS[k % 4]!,
      baseIdx,
      quoteIdx,
      type: virtual ? 'VIRTUAL' : k === 0 ? 'DVM' : POOL_TYPES[pick(POOL_TYPES.length, seed, c, TAG.pair, k, 4)]!,
      magnitude: scam ? 30 : k === 5 ? -12 : 0,
      lpFeeRate: virtual ? X.dec(0) : FEE_RATES[pick(FEE_RATES.length, seed, c, TAG.pair, k, 5)]!,
      creator: virtual
        ? '0x0000000000000000000000000000000000000000'
        : this.userId(pick(this.userCount(created), seed, c, TAG.pair, k, 6)),
      id: virtual ? undefined : hexOf(5, seed, c, TAG.pair, k),
    };
  }

  private scam: number | undefined;

  /** The scam pool: the first pool from the fourth on that is created when tokens 2 and 3 exist (and is not VIRTUAL). */
  private scamPool(): number {
    if (this.scam === undefined) {
      let k = 3;
      while (this.isVirtual(k) || this.tokenCount(this.createdBlock(this.every.pair, k)) <= 3) k++;
      this.scam = k;
    }
    return this.scam;
  }

  /** A pool's state at block `at`. */
  pair(k: number, at: number): PairState {
    const st = this.pairStatic(k);
    const version = versionAt(st.created, st.period, at);
    const updated = st.created + version * st.period;
    const base = this.token(st.baseIdx, at);
    const quote = this.token(st.quoteIdx, at);
    const salt = this.salt(updated);
    const last = this.pairLast[k];
    if (last && last.salt === salt && last.version === version && last.base === base && last.quote === quote)
      return last;
    return (this.pairLast[k] = new Pool(
      this.opts.seed,
      this.chainId,
      k,
      st,
      version,
      updated,
      salt,
      base,
      quote,
      this.poolPrice(k, st, version, updated, salt),
    ));
  }

  /**
   * A pool's last trade price at one of its versions. A pool's own fields change only when the pool is saved, so it
   * uses token prices as of its last update; the price is kept per pool for its current version and salt (a new pool
   * state is made whenever a token moves, which is far more often).
   */
  private poolPrice(k: number, st: PairStatic, version: number, updated: number, salt: number): X.Dec {
    const last = this.priceLast[k];
    if (last && last.version === version && last.salt === salt) return last.price;
    const price = X.normalize(X.div(this.token(st.baseIdx, updated).price, this.token(st.quoteIdx, updated).price, 30));
    this.priceLast[k] = { version, salt, price };
    return price;
  }

  /** Users existing at block `at`. */
  userCount(at: number): number {
    return Math.max(1, this.createdCount(this.every.user, at));
  }

  /** A user's address. */
  userId(k: number): string {
    if (k >= USER_IDS_KEPT) return hexOf(5, this.opts.seed, this.chainId, TAG.user, k);
    return this.userIds[k] ?? (this.userIds[k] = hexOf(5, this.opts.seed, this.chainId, TAG.user, k));
  }

  /** The block a user first appears. */
  userCreated(k: number): number {
    return this.createdBlock(this.every.user, k);
  }

  /** Crowd pools existing at block `at`. */
  cpCount(at: number): number {
    return this.createdCount(this.every.cp, at);
  }

  /** A crowd pool's address. */
  cpId(k: number): string {
    return hexOf(5, this.opts.seed, this.chainId, TAG.cp, k);
  }

  /** Mining pools existing at block `at`. */
  mineCount(at: number): number {
    return this.createdCount(this.every.mine, at);
  }
}

/**
 * The token pair of the `v`-th VIRTUAL pair: the `v`-th unordered pair {a, b} (a > b) in the order 1-0, 2-0, 2-1, 3-0…,
 * one way round or the other. Distinct `v` give distinct pairs; `tokens` (those existing at its creation) always
 * exceeds `a`, since tokens are created faster than virtual pairs.
 */
export function virtualTokens(v: number, tokens: number, swap: boolean): [base: number, quote: number] {
  const a = Math.floor((1 + Math.sqrt(1 + 8 * v)) / 2);
  const b = v - (a * (a - 1)) / 2;
  if (a >= tokens) throw new Error(`virtual pair ${v} needs token ${a}, but only ${tokens} exist at its creation`);
  return swap ? [b, a] : [a, b];
}

function clamp(v: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, Math.floor(v)));
}

/** A world per chain id, created when first asked. */
export class Worlds {
  private readonly byChain = new Map<number, World>();

  constructor(readonly opts: WorldOptions) {}

  /** The world of a chain. */
  get(chainId: number): World {
    let w = this.byChain.get(chainId);
    if (!w) this.byChain.set(chainId, (w = new World(this.opts, chainId)));
    return w;
  }

  /** Worlds created so far. */
  all(): World[] {
    return [...this.byChain.values()];
  }
}
