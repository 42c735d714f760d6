/**
 * The contract between a task and the sink: a batch of one dataset and chain, what it replaces, the pages it keeps,
 * and what committing it did. The export's seams (`export/seams.ts`) name their sink with these types.
 */
import type { Dataset } from '../catalog/catalog.ts';
import type { CheckpointKey, CheckpointMove } from './checkpoint-store.ts';

/** What a batch replaces before it is inserted, so that re-reads never duplicate a row. */
export type Replace =
  /** Rows of the chain from `from` on in the keyset column (re-read window of events and buckets). */
  | { readonly kind: 'from'; readonly column: string; readonly from: string | number }
  /** Rows of the chain with the keyset column in [from, to): the re-read part of one shard of a backfill. */
  | { readonly kind: 'range'; readonly column: string; readonly from: string | number; readonly to: string | number }
  /** Rows of the chain with the same ids (upsert of mutable entities). */
  | { readonly kind: 'ids' }
  /** Rows of the chain with these ids, which the upstream no longer holds (entities of blocks a reorg reverted). */
  | { readonly kind: 'gone'; readonly ids: readonly string[] }
  /** Rows of the chain written at the same block or run (snapshots re-taken). */
  | { readonly kind: 'snapshot' }
  | { readonly kind: 'none' };

/** A page kept for a batch (see `DuckDBSink.keep`): its rows as the upstream sent them, in a file of their own. */
export interface KeptPage {
  readonly file: string;
  /** Length of the page's text (UTF-16 code units, as JavaScript counts). */
  readonly length: number;
}

/** One batch: rows of one dataset and chain, and the checkpoint move that commits with them. */
export interface Batch {
  readonly ds: Dataset;
  readonly chainId: number;
  readonly runId: string;
  readonly block: number | null;
  /** Timestamp of `block` (ISO), or of the snapshot for the block-less list. */
  readonly blockTime: string | null;
  readonly takenAt?: string;
  /**
   * The rows, in one of two forms (never both): mapped by the exporter (flat, named as the table's columns), or pages
   * kept as the upstream sent them (arrays of entities, checked by the exporter), which DuckDB maps as it reads them.
   */
  readonly rows: readonly Record<string, unknown>[];
  readonly pages: readonly KeptPage[];
  /** How many rows the batch holds (its mapped rows, or the rows of its pages). */
  readonly count: number;
  readonly replace: Replace;
  /**
   * The checkpoint move that commits with the rows: the dataset's own, or (with `shard`) one shard's of its backfill.
   * With `keep` (a repair), the checkpoint must stand at `prev` and is left as it is: the rows are replaced under it.
   */
  readonly checkpoint: Pick<CheckpointMove, 'prev' | 'next'> &
    Pick<CheckpointKey, 'shard'> & { readonly keep?: boolean };
  /** Deletes the dataset's shard checkpoints in the same transaction (the shards are merged into its own). */
  readonly mergeShards?: boolean;
}

/** What committing a batch did. */
export interface Written {
  /** Rows inserted. */
  readonly rows: number;
  /**
   * Ids of stored rows of an event or bucket dataset that the batch replaced although they lay outside its re-read
   * range: the upstream sent an id it had sent before with another key, which a subgraph cannot hold. The newest wins.
   */
  readonly replacedIds: readonly string[];
}

/** Where the lake must rewrite a dataset of a chain from (null: only the runs' own rows), and the runs that wrote it. */
export interface LakeMark {
  readonly chainId: number;
  readonly dataset: string;
  readonly from: number | null;
  readonly runs: ReadonlySet<string>;
  /** Rows of other runs may have left the table on this chain (see `lake_pending.dropped`). */
  readonly dropped: boolean;
}

/** Two marks of one dataset and chain as one: the earlier start (a null start gives way to a number), both runs. */
export function joinMarks(a: LakeMark | undefined, b: LakeMark): LakeMark {
  if (!a) return b;
  const from = a.from === null ? b.from : b.from === null ? a.from : Math.min(a.from, b.from);
  return { ...a, from, runs: new Set([...a.runs, ...b.runs]), dropped: a.dropped || b.dropped };
}

/** What a batch wrote, and what the lake must write again (none: nothing changed for it). */
export interface Wrote {
  readonly written: Written;
  readonly mark?: LakeMark;
}
