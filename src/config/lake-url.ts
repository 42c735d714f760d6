/**
 * Where the lake goes: the data folder's `lake/` (the default), or a bucket of any S3-compatible store,
 * `s3://<bucket>/<prefix>` (`lake.url` in the config file, or `POOL_EXPORT_LAKE_URL`).
 */
import { UsageError } from '../errors.ts';

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
