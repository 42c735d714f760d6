/**
 * The entities of a chain's generated world: the stream tags, the states of tokens and pools at a block, and the memo
 * that keeps recent ones (`world.ts` makes them).
 */
import * as X from '../util/exact.ts';
import { pick } from './hash.ts';

/** Stream tags, mixed into every hash so that streams never share values. */
export const TAG = {
  swap: 1,
  order: 2,
  lp: 3,
  bid: 4,
  mtfee: 5,
  slip: 6,
  reward: 7,
  token: 10,
  pair: 11,
  user: 12,
  cp: 13,
  mine: 14,
  erc20: 15,
} as const;

/** A token's state at a block. */
export interface TokenState {
  readonly index: number;
  readonly id: string;
  readonly symbol: string;
  readonly name: string;
  readonly decimals: number;
  readonly created: number;
  readonly updated: number;
  readonly version: number;
  /** The USD price its pools trade it at. */
  readonly price: X.Dec;
  /** The USD price the subgraph reports (`usdPrice`, and the day data's prices): `price`, but for a pumped token. */
  readonly usdPrice: X.Dec;
}

/** A pool's state at a block. */
export interface PairState {
  readonly index: number;
  readonly id: string;
  readonly type: string;
  readonly base: TokenState;
  readonly quote: TokenState;
  readonly created: number;
  readonly updated: number;
  readonly version: number;
  readonly baseReserve: X.Dec;
  readonly quoteReserve: X.Dec;
  readonly lastTradePrice: X.Dec;
  readonly lpFeeRate: X.Dec;
  readonly creator: string;
  /** Powers of ten by which this pool's amounts are scaled (whale and dust pools). */
  readonly magnitude: number;
}

/** Entries kept by each memo before it is cleared; bounds memory at any scale. */
const MEMO_LIMIT = 50_000;

/**
 * Versioned states by item index and a numeric key (version and salt), cleared when full. Numeric keys and one map per
 * index keep the lookup cheap: it runs several times per generated row.
 */
export class VersionMemo<T> {
  private byIndex: (Map<number, T> | undefined)[] = [];
  private size = 0;

  /** The key of a version and salt, or undefined when the salt is too large to pack (then the state is not cached). */
  static key(version: number, salt: number): number | undefined {
    return salt < 4096 ? version * 4096 + salt : undefined;
  }

  get(k: number, key: number): T | undefined {
    return this.byIndex[k]?.get(key);
  }

  set(k: number, key: number, value: T): T {
    if (this.size >= MEMO_LIMIT) {
      this.byIndex = [];
      this.size = 0;
    }
    let m = this.byIndex[k];
    if (!m) this.byIndex[k] = m = new Map();
    m.set(key, value);
    this.size++;
    return value;
  }
}

/** How many times an item created at `created` and changed every `period` blocks has changed by block `at`. */
export function versionAt(created: number, period: number, at: number): number {
  return Math.max(0, Math.floor((at - created) / period));
}

/** The parts of a pool that never change: chosen once at creation, independent of reorgs. */
export interface PairStatic {
  readonly created: number;
  readonly period: number;
  readonly baseIdx: number;
  readonly quoteIdx: number;
  readonly type: string;
  readonly magnitude: number;
  readonly lpFeeRate: X.Dec;
  readonly creator: string;
  readonly id: string | undefined;
}

/** A pool's state at a block. Reserves are drawn when first read: most states are made for a swap, which needs none. */
export class Pool implements PairState {
  readonly id: string;
  readonly type: string;
  readonly created: number;
  readonly lpFeeRate: X.Dec;
  readonly creator: string;
  readonly magnitude: number;
  private baseR: X.Dec | undefined;
  private quoteR: X.Dec | undefined;

  constructor(
    private readonly seed: number,
    private readonly chainId: number,
    readonly index: number,
    st: PairStatic,
    readonly version: number,
    readonly updated: number,
    /** The salt of the block of its last update. */
    readonly salt: number,
    readonly base: TokenState,
    readonly quote: TokenState,
    readonly lastTradePrice: X.Dec,
  ) {
    this.id = st.id ?? `${base.id}-${quote.id}`;
    this.type = st.type;
    this.created = st.created;
    this.lpFeeRate = st.lpFeeRate;
    this.creator = st.creator;
    this.magnitude = st.magnitude;
  }

  get baseReserve(): X.Dec {
    return (this.baseR ??= this.reserve(1));
  }

  get quoteReserve(): X.Dec {
    return (this.quoteR ??= this.reserve(2));
  }

  private reserve(side: number): X.Dec {
    if (this.type === 'VIRTUAL') return X.dec(0);
    return X.dec(
      1 + pick(1_000_000_000, this.seed, this.chainId, TAG.pair, this.index, this.version, this.salt, side),
      3 - this.magnitude,
    );
  }
}
