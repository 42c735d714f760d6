/**
 * When a bucket lake is published: at most once per `lake.publishEvery` (a `run` by default every time, `schedule`
 * every `SCHEDULE_PUBLISH_EVERY_SECS`), and at once after a publish that did not end (it failed, or the process
 * stopped during it). The cadence counts from the start of the run that last published (its rows were read from
 * then). The warehouse and the data folder's own `lake/` are brought up to date by every run; what a run within the
 * cadence wrote is published by the first run after it, or by `schedule` as it stops on a signal. Each publish sends
 * whatever changed since the last one, so a bucket is never more than the cadence and one run behind.
 */
import { type LakeUrl, showLakeUrl } from '../config/lake-url.ts';
import { readSyncState, type SyncState } from './sync-state.ts';

/**
 * The cadence of `schedule` when `lake.publishEvery` is not set: five minutes. Under `--every 10s` a busy table's open
 * month (tens of MB) would otherwise go up six times a minute; at this cadence a reader of the bucket is at most five
 * minutes and one run behind the warehouse.
 */
export const SCHEDULE_PUBLISH_EVERY_SECS = 300;

/** Whether a publish is due now, and if not, in how many seconds it will be. */
export function publishDue(
  state: Pick<SyncState, 'publishedAt' | 'publishing'>,
  everySecs: number,
  nowMs: number,
): { readonly due: boolean; readonly inSecs: number } {
  if (everySecs <= 0 || state.publishedAt === undefined || state.publishing) return { due: true, inSecs: 0 };
  const inSecs = Math.max(0, (state.publishedAt + everySecs * 1000 - nowMs) / 1000);
  return { due: inSecs === 0, inSecs };
}

/** How fresh a bucket lake is, from the data folder's record of its publishes. */
export interface BucketFreshness {
  /** The bucket lake, as messages name it. */
  readonly url: string;
  /** When the last publish ended (seconds since the epoch), or null when this data folder never published. */
  readonly publishedAt: number | null;
  /** Whether the local lake holds rows the bucket does not (a run within the cadence, or a publish that failed). */
  readonly behind: boolean;
  /** Per chain id: seconds from the newest block time the published state covers to the chain's head (or the clock). */
  readonly lagSeconds: ReadonlyMap<number, number>;
}

/**
 * The time each chain's lag is measured against, as `status` measures the warehouse's: the upstream's head time where
 * a dataset's freshness read it (its block time plus its lag), else the clock.
 */
export function headClock(
  points: readonly {
    readonly chainId: number;
    readonly blockTime: string | null;
    readonly lagSeconds: number | null;
  }[],
  nowSecs: number,
): (chainId: number) => number {
  const heads = new Map<number, number>();
  for (const p of points)
    if (p.blockTime !== null && p.lagSeconds !== null) {
      const t = Date.parse(p.blockTime) / 1000 + p.lagSeconds;
      heads.set(p.chainId, Math.max(heads.get(p.chainId) ?? 0, t));
    }
  return (chainId) => heads.get(chainId) ?? nowSecs;
}

/**
 * The freshness of a config's bucket lake, or null for a local lake; `clock` gives the time each chain's lag is
 * measured against (`headClock`).
 */
export function bucketFreshness(
  config: { readonly dataDir: string; readonly lake: { readonly bucket: LakeUrl | null } },
  clock: (chainId: number) => number,
): BucketFreshness | null {
  const bucket = config.lake.bucket;
  if (!bucket) return null;
  const s = readSyncState(config.dataDir, { url: bucket });
  return {
    url: showLakeUrl(bucket),
    publishedAt: s.publishedAt === undefined ? null : s.publishedAt / 1000,
    behind: s.owed === true || s.publishing === true,
    lagSeconds: new Map(
      Object.entries(s.covered ?? {}).map(([c, t]) => [Number(c), Math.max(0, clock(Number(c)) - t)]),
    ),
  };
}
