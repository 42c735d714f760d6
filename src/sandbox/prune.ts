/**
 * A deployment that keeps little history, as graph-node prunes one (graphprotocol/graph-node f27eb5f):
 * - the manifest's `indexerHints: prune:` is `never`, `auto` or a number of blocks (`graph/src/data/subgraph/mod.rs`,
 *   `Prune`); `auto` keeps `GRAPH_MIN_HISTORY_BLOCKS`, by default twice `ETHEREUM_REORG_THRESHOLD` (250): 500 blocks
 *   (`graph/src/env/mod.rs`);
 * - after each block it writes, graph-node prunes when the block is past the earliest kept one by more than the history
 *   times `GRAPH_STORE_HISTORY_SLACK_FACTOR` (1.2), and the earliest block becomes the block less the history
 *   (`store/postgres/src/deployment_store.rs`, `transact_block_operations`; `graph/src/components/store/mod.rs`,
 *   `PruneRequest::new`);
 * - a query at a block before the earliest gets `block_queryable`'s text (`graph/src/data/subgraph/mod.rs`), also when
 *   the block is named by its hash (`graphql/src/store/resolver.rs`, `locate_blocks`).
 *
 * graph-node refuses to prune to a history of `ETHEREUM_REORG_THRESHOLD` blocks or fewer (`PruneRequest::new`); a
 * sandbox with `--prune 100` models a node whose threshold was set below that.
 */
import { UsageError } from '../errors.ts';

/** What a manifest's `indexerHints.prune` says: keep every block, graph-node's minimum, or a number of blocks. */
export type PruneHint = 'never' | 'auto' | number;

/** `GRAPH_MIN_HISTORY_BLOCKS`' default: twice the reorg threshold of 250 blocks. */
export const MIN_HISTORY_BLOCKS = 500;

/** `GRAPH_STORE_HISTORY_SLACK_FACTOR`'s default. */
export const HISTORY_SLACK_FACTOR = 1.2;

/** Parses `--prune`: `never`, `auto` or a whole number of blocks, 1 or more. */
export function parsePrune(text: string): PruneHint {
  if (text === 'never' || text === 'auto') return text;
  const n = Number(text);
  if (/^\d+$/.test(text) && Number.isSafeInteger(n) && n >= 1) return n;
  throw new UsageError(`--prune takes never, auto or a number of blocks (1 or more), not "${text}"`);
}

/** The blocks of history a hint keeps, or undefined for every block. */
export function historyBlocks(hint: PruneHint): number | undefined {
  if (hint === 'never') return undefined;
  return hint === 'auto' ? MIN_HISTORY_BLOCKS : hint;
}

/**
 * The earliest block a deployment that started at `start` holds once it has written block `head`, keeping `history`
 * blocks: each prune, at the first block past the earliest plus `history` × 1.2, moves the earliest to that block less
 * `history`, so the earliest climbs in steps of that many blocks less `history`.
 */
export function earliestBlock(start: number, head: number, history: number): number {
  // The first whole number of blocks past the earliest that is more than history × 1.2 (as graph-node's f64 test).
  const trigger = Math.floor(history * HISTORY_SLACK_FACTOR) + 1;
  const step = trigger - history;
  if (head - start < trigger) return start;
  const prunes = Math.floor((head - start - trigger) / step) + 1;
  return start + prunes * step;
}

/**
 * The earliest block of each deployment as its head moves: it never moves down, not even when a reorganisation takes
 * the head back (graph-node keeps what it pruned pruned).
 */
export class PruneState {
  private readonly earliest = new Map<string, number>();

  constructor(readonly hint: PruneHint) {}

  /** The earliest block deployment `id`, started at `start`, holds at head `head`. */
  earliestOf(id: string, start: number, head: number): number {
    const history = historyBlocks(this.hint);
    if (history === undefined) return start;
    const at = Math.max(this.earliest.get(id) ?? start, earliestBlock(start, head, history));
    this.earliest.set(id, at);
    return at;
  }
}
