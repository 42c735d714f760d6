/** What `verify` found of one identity on one chain (each kind of check in its own file makes these). */
import { historyOf } from '../catalog/subgraphs.ts';
import { prunedWhy } from '../upstream/upstream-error.ts';
import type { DayRange } from './counters.ts';
import type { Mismatch } from './reconcile.ts';

/** One identity on one chain: what was compared, and what differed; or why it was not checked. */
export interface Check {
  readonly chainId: number;
  readonly identity: string;
  readonly dataset: string;
  /** The block the rows were read at and the counters read at. */
  readonly block: number | null;
  /** The days compared (day identities). */
  readonly days: DayRange | null;
  /** Groups compared: pools and days, days, crowd pools, or the whole table. */
  readonly groups: number;
  readonly mismatches: readonly Mismatch[];
  /** Why it was not checked (nothing to check yet). */
  readonly skipped?: string;
  /** Why it could not be checked (the upstream failed). */
  readonly error?: string;
}

/**
 * Why rows read at `block` are not checked on a deployment that keeps a known history (its manifest's
 * `indexerHints.prune`) and has indexed `head`: the block may be pruned, so no query is made there. Undefined where it
 * is held.
 */
export function prunedByHint(
  ds: { readonly schema: string },
  chainId: number,
  at: { head: number; block: number },
): string | undefined {
  const history = historyOf(ds.schema, chainId);
  return history !== undefined && at.block < at.head - history ? prunedWhy(at.head - history, at.block) : undefined;
}
