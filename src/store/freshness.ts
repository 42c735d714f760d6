/**
 * How fresh a dataset of a chain is, as `status` and the dashboard's freshness panel both state it: the lag is the time
 * from the block its committed data were read at to a reference time (the upstream's head when it could be read, or
 * the clock), and a dataset is stale when it never succeeded or lags more than allowed. A dataset the upstream's
 * deployment does not have (`unavailable`) is never stale.
 */

/** Seconds from `blockTime` (ISO) to `referenceSecs` (Unix seconds), never negative; null without a block time. */
export function lagSeconds(blockTime: string | null, referenceSecs: number): number | null {
  if (blockTime === null) return null;
  return Math.max(0, Math.round(referenceSecs - Date.parse(blockTime) / 1000));
}

/** Whether a dataset is stale: never exported, of unknown lag, or lagging more than `staleAfterSecs`. */
export function isStale(
  e: { readonly lastSuccess: string | null; readonly lastStatus: string | null },
  lag: number | null,
  staleAfterSecs: number,
): boolean {
  if (e.lastStatus === 'unavailable') return false;
  return e.lastSuccess === null || lag === null || lag > staleAfterSecs;
}
