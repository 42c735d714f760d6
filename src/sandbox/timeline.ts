/** One chain's blocks: numbers, timestamps, hashes, the moving head and reorganizations. Nothing is stored per block. */

import { minOf } from '../util/extremes.ts';
import { hashNumber, hashWords, mix } from './hash.ts';

/**
 * The head's timestamp that tests pin (`--now`): 2026-01-01T00:00:00Z, so that their data are the same on every run. The
 * sandbox command's own default is the wall clock at start, so that an export made now is fresh.
 */
export const HEAD_TIMESTAMP = 1_767_225_600;

/** Static facts of a chain as the sandbox serves it. */
export interface ChainSpec {
  readonly chainId: number;
  readonly name: string;
  /** Block number of the first indexed block. */
  readonly startBlock: number;
  /** Seconds between blocks. */
  readonly blockSecs: number;
}

/** The chains the service documents (SERVICE.md §2.4); other ids get a derived spec. */
export const KNOWN_CHAINS: readonly ChainSpec[] = [
  { chainId: 1, name: 'ethereum', startBlock: 18_000_000, blockSecs: 12 },
  { chainId: 56, name: 'bsc', startBlock: 30_000_000, blockSecs: 3 },
  { chainId: 137, name: 'polygon', startBlock: 48_000_000, blockSecs: 2 },
  { chainId: 42161, name: 'arbitrum', startBlock: 150_000_000, blockSecs: 1 },
  { chainId: 1285, name: 'moonriver', startBlock: 5_000_000, blockSecs: 12 },
  { chainId: 1313161554, name: 'aurora', startBlock: 100_000_000, blockSecs: 1 },
  { chainId: 43114, name: 'avax', startBlock: 38_000_000, blockSecs: 2 },
  { chainId: 10, name: 'optimism', startBlock: 110_000_000, blockSecs: 2 },
];

/** The spec of a chain id: a known one, or one derived from the id. */
export function chainSpec(chainId: number): ChainSpec {
  return (
    KNOWN_CHAINS.find((c) => c.chainId === chainId) ?? {
      chainId,
      name: `chain-${chainId}`,
      startBlock: 1_000_000 + (chainId % 1000) * 1000,
      blockSecs: 2,
    }
  );
}

/** Blocks of one chain. */
export class Timeline {
  readonly spec: ChainSpec;
  /** Number of blocks of pre-generated history. */
  readonly historyBlocks: number;
  /** Timestamp of `startBlock`. */
  readonly startTs: number;
  private headBlock: number;
  /** First block of each reorganization so far, in order. */
  private readonly reorgs: number[] = [];

  /** `headTs`: the Unix time of the head at start; history ends there. */
  constructor(
    readonly seed: number,
    spec: ChainSpec,
    historyDays: number,
    headTs = HEAD_TIMESTAMP,
  ) {
    this.spec = spec;
    this.historyBlocks = Math.floor((historyDays * 86_400) / spec.blockSecs);
    this.startTs = headTs - this.historyBlocks * spec.blockSecs;
    this.headBlock = spec.startBlock + this.historyBlocks;
  }

  /** The latest indexed block. */
  get head(): number {
    return this.headBlock;
  }

  /** Number of reorganizations so far; caches key on it. */
  get epoch(): number {
    return this.reorgs.length;
  }

  /** Unix seconds of a block. */
  ts(block: number): number {
    return this.startTs + (block - this.spec.startBlock) * this.spec.blockSecs;
  }

  /** The first block whose timestamp is at or after `ts`. */
  blockAtOrAfter(ts: number): number {
    return this.spec.startBlock + Math.ceil((ts - this.startTs) / this.spec.blockSecs);
  }

  /** How many reorganizations rewrote this block: content derived from a block mixes this in. */
  salt(block: number): number {
    let n = 0;
    for (const from of this.reorgs) if (from <= block) n++;
    return n;
  }

  /** The block hash: random-looking, but its last two words encode the number so a hash can be looked up. */
  hash(block: number): string {
    const s = this.salt(block);
    return hashWords(mix(this.seed, this.spec.chainId, block, s), block);
  }

  /** The block number of a hash on the current chain, or undefined (unknown, or reorganized away). */
  blockOfHash(hash: string): number | undefined {
    const h = `0x${hash.toLowerCase().replace(/^0x/, '')}`;
    const block = hashNumber(h);
    if (block < this.spec.startBlock || block > this.headBlock) return undefined;
    return this.hash(block) === h ? block : undefined;
  }

  /** The first block rewritten by the reorganizations after the first `epoch` ones, or undefined if there were none. */
  rewrittenSince(epoch: number): number | undefined {
    const later = this.reorgs.slice(epoch);
    return later.length ? minOf(later) : undefined;
  }

  /** Moves the head forward by `blocks`. */
  advance(blocks: number): void {
    this.headBlock += blocks;
  }

  /** Rewrites the last `depth` blocks: their hashes and content change, the head stays. */
  reorg(depth: number): number {
    const from = Math.max(this.spec.startBlock + 1, this.headBlock - depth + 1);
    this.reorgs.push(from);
    return from;
  }
}

/**
 * A stream of events at a steady rate (`total` over the history), with an optional burst of extra events in one block.
 * Event `i` lives in `blockOf(i)`; blocks are non-decreasing in `i`.
 */
export class EventStream {
  private readonly burstAt: number;

  constructor(
    readonly tl: Timeline,
    readonly total: number,
    readonly burst = 0,
  ) {
    this.burstAt = burst > 0 ? Math.floor(total * 0.61803) : Number.POSITIVE_INFINITY;
  }

  private blockOfNormal(j: number): number {
    return this.tl.spec.startBlock + Math.floor((j * this.tl.historyBlocks) / this.total);
  }

  /** Block of event `i`. */
  blockOf(i: number): number {
    const j = i < this.burstAt ? i : i < this.burstAt + this.burst ? this.burstAt : i - this.burst;
    return this.blockOfNormal(j);
  }

  /** The first event index in block `b` or later. */
  firstIndexAt(b: number): number {
    const j = Math.max(0, Math.ceil(((b - this.tl.spec.startBlock) * this.total) / this.tl.historyBlocks));
    return j <= this.burstAt ? j : j + this.burst;
  }

  /** Events that exist when `at` is the latest block. */
  count(at: number): number {
    return this.firstIndexAt(at + 1);
  }
}
