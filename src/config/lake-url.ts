/**
 * Where the lake goes: the data folder's `lake/` (the default), or a bucket of any S3-compatible store,
 * `s3://<bucket>/<prefix>` (`lake.url` in the config file, or `POOL_EXPORT_LAKE_URL`).
 */
import { UsageError } from '../errors.ts';
import { parseDuration } from '../util/duration.ts';

/** A bucket lake: its bucket and the key prefix its objects live under (no leading or trailing slash; may be empty). */
export interface LakeUrl {
  readonly bucket: string;
  readonly prefix: string;
}

/** The text of a bucket lake's URL, as messages name it. */
export const showLakeUrl = (u: LakeUrl) => `s3://${u.bucket}${u.prefix ? `/${u.prefix}` : ''}`;

const EXAMPLE = 's3://my-bucket/pool-export';

/**
 * Bucket names as AWS allows them for new buckets (3 to 63 characters: lower-case letters, digits, dots and hyphens,
 * beginning and ending with a letter or digit); MinIO, R2 and Ceph follow the same rules.
 */
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * Parses the lake's URL: empty for the data folder's own lake (null), else `s3://bucket[/prefix]`. A local path is
 * refused with where a local lake goes instead; a prefix's segments may not be empty, `.` or `..`, nor hold control
 * characters, so that no key climbs out of the prefix.
 */
export function parseLakeUrl(raw: string, where = 'lake.url (POOL_EXPORT_LAKE_URL)'): LakeUrl | null {
  if (raw === '') return null;
  const m = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(raw);
  if (!m) {
    const local = !/^[a-z][a-z0-9+.-]*:\/\//i.test(raw);
    throw new UsageError(
      local
        ? `${where} is a local folder ("${raw}"): a local lake is the data folder's lake/ (set --data-dir or POOL_EXPORT_DATA_DIR); lake.url takes a bucket, such as ${EXAMPLE}`
        : `${where} must be an s3:// URL such as ${EXAMPLE}, not "${raw}"; an S3-compatible store is reached through AWS_ENDPOINT_URL_S3`,
    );
  }
  const bucket = m[1]!;
  if (!BUCKET.test(bucket) || bucket.includes('..'))
    throw new UsageError(
      `${where} names the bucket "${bucket}", which is no valid bucket name (3 to 63 lower-case letters, digits, dots and hyphens); for example ${EXAMPLE}`,
    );
  const prefix = (m[2] ?? '').replace(/\/+$/, '');
  const segments = prefix === '' ? [] : prefix.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..' || /[\x00-\x1f\x7f]/.test(s)))
    throw new UsageError(
      `${where} has the prefix "${prefix}", whose parts must be names (no empty part, ".", ".." or control characters); for example ${EXAMPLE}`,
    );
  return { bucket, prefix };
}

/** The lake's settings, checked. */
export interface LakeSettings {
  readonly url: string;
  readonly bucket: LakeUrl | null;
  readonly partBytes: number;
  /**
   * Calendar months of snapshots (the liquidity list, the snapshot entities) and of mutable entities' history kept,
   * the current one included, in the warehouse and the lake; null keeps them all (`lake/retention.ts`).
   */
  readonly keepSnapshotMonths: number | null;
  /**
   * A bucket lake is published at most once per this many seconds (`lake.publishEvery`: `10m`; `0s` every run); null
   * when not set: then a `run` publishes every time and `schedule` every `SCHEDULE_PUBLISH_EVERY_SECS`
   * (`bucket/cadence.ts`). The warehouse and the data folder's own `lake/` are brought up to date every run whatever
   * it is.
   */
  readonly publishEverySecs: number | null;
}

/** The lake's URL from the environment (`lake.url` of the config file otherwise). */
export const LAKE_URL_ENV = 'POOL_EXPORT_LAKE_URL';

/**
 * Bounds of `lake.partMiB`, the part size of multipart uploads: S3 takes parts of 5 MiB to 5 GiB, and at most 10,000
 * of them (so 16 MiB parts, the default, carry objects up to 156 GiB).
 */
const PART_MIB = { min: 5, max: 5120, default: 16 } as const;

/** The `lake` object of the config file (`{"url": "s3://bucket/prefix", "partMiB": 16}`), checked field by field. */
export function checkLake(raw: unknown, envUrl: string | undefined): LakeSettings {
  const example = '{"url": "s3://my-bucket/pool-export"}';
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new UsageError(`config "lake" must be an object like ${example}`);
  const extra = Object.keys(raw).find((k) => !['url', 'partMiB', 'keepSnapshotMonths', 'publishEvery'].includes(k));
  if (extra !== undefined)
    throw new UsageError(
      `config lake."${extra}" is not a field of it; lake is like ${example} (and "partMiB", "keepSnapshotMonths", "publishEvery")`,
    );
  const every = (raw as { publishEvery?: unknown }).publishEvery ?? null;
  if (every !== null && typeof every !== 'string')
    throw new UsageError(
      `config lake.publishEvery must be a duration text such as "10m" or "1h" ("0s": publish every run), not ${JSON.stringify(every)}`,
    );
  const publishEverySecs =
    every === null
      ? null
      : /^0+(\.0+)?\s*[smhd]$/.test(every.trim())
        ? 0
        : parseDuration(every, 'config lake.publishEvery');
  const fromFile = (raw as { url?: unknown }).url ?? '';
  if (typeof fromFile !== 'string') throw new UsageError(`config lake.url must be a text like ${example}`);
  const part = (raw as { partMiB?: unknown }).partMiB ?? PART_MIB.default;
  if (typeof part !== 'number' || !Number.isInteger(part) || part < PART_MIB.min || part > PART_MIB.max)
    throw new UsageError(
      `config lake.partMiB must be a whole number of MiB from ${PART_MIB.min} to ${PART_MIB.max} (S3's part sizes), not ${JSON.stringify(part)}; the default is ${PART_MIB.default}`,
    );
  const keep = (raw as { keepSnapshotMonths?: unknown }).keepSnapshotMonths ?? null;
  if (keep !== null && (typeof keep !== 'number' || !Number.isInteger(keep) || keep < 1 || keep > 1200))
    throw new UsageError(
      `config lake.keepSnapshotMonths must be a whole number of months from 1 (the current month only) to 1200, or null to keep every snapshot, not ${JSON.stringify(keep)}`,
    );
  const url = envUrl !== undefined && envUrl !== '' ? envUrl : fromFile;
  const where = envUrl !== undefined && envUrl !== '' ? LAKE_URL_ENV : 'config lake.url';
  return Object.freeze({
    url,
    bucket: parseLakeUrl(url, where),
    partBytes: part * 1024 ** 2,
    keepSnapshotMonths: keep as number | null,
    publishEverySecs,
  });
}
