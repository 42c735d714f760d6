/** Where the lake goes: `lake.url` in the config file or `POOL_EXPORT_LAKE_URL`, read and refused with the fix. */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { parseLakeUrl, showLakeUrl } from '../../src/config/lake-url.ts';
import { UsageError } from '../../src/errors.ts';

const file = (content: string) => {
  const p = join(mkdtempSync(join(tmpdir(), 'pe-lake-')), 'c.json');
  writeFileSync(p, content);
  return p;
};

describe('the lake URL', () => {
  it.each([
    ['s3://my-bucket', { bucket: 'my-bucket', prefix: '' }],
    ['s3://my-bucket/', { bucket: 'my-bucket', prefix: '' }],
    ['s3://my.bucket-1/team/pool-export/', { bucket: 'my.bucket-1', prefix: 'team/pool-export' }],
    ['s3://abc/a b/ü', { bucket: 'abc', prefix: 'a b/ü' }],
  ])('reads %s', (raw, want) => {
    expect(parseLakeUrl(raw)).toEqual(want);
    expect(showLakeUrl(want)).toBe(raw.replace(/\/+$/, ''));
  });

  it('is the local lake when empty', () => {
    expect(parseLakeUrl('')).toBeNull();
  });

  it.each([
    [
      './lake',
      /lake.url \(POOL_EXPORT_LAKE_URL\) is a local folder \("\.\/lake"\): a local lake is the data folder's lake\//,
    ],
    ['/var/data/lake', /is a local folder .*lake.url takes a bucket, such as s3:\/\/my-bucket\/pool-export/],
    ['https://bucket.s3.amazonaws.com/x', /must be an s3:\/\/ URL .*AWS_ENDPOINT_URL_S3/],
    ['gs://bucket/x', /must be an s3:\/\/ URL/],
    ['s3://', /names the bucket "", which is no valid bucket name/],
    ['s3://ab/x', /names the bucket "ab"/],
    ['s3://My-Bucket/x', /names the bucket "My-Bucket"/],
    ['s3://a..b/x', /names the bucket "a..b"/],
    ['s3://bucket-/x', /names the bucket "bucket-"/],
    ['s3://bucket/a//b', /has the prefix "a\/\/b", whose parts must be names/],
    ['s3://bucket/a/../b', /has the prefix "a\/..\/b"/],
    ['s3://bucket/./b', /has the prefix "\.\/b"/],
    ['s3://bucket/a\u001b[31m', /whose parts must be names \(no empty part, "\.", "\.\." or control characters\)/],
  ])('refuses %j with the fix', (raw, message) => {
    expect(() => parseLakeUrl(raw)).toThrow(UsageError);
    expect(() => parseLakeUrl(raw)).toThrow(message);
  });

  it('comes from the config file, or from POOL_EXPORT_LAKE_URL over it, and names where it came from', () => {
    const f = file('{"lake": {"url": "s3://from-file/p"}}');
    expect(loadConfig({ env: {}, configFile: f }).lake).toEqual({
      url: 's3://from-file/p',
      bucket: { bucket: 'from-file', prefix: 'p' },
      partBytes: 16 * 1024 * 1024,
      keepSnapshotMonths: null,
      publishEverySecs: null,
    });
    expect(loadConfig({ env: { POOL_EXPORT_LAKE_URL: 's3://from-env' }, configFile: f }).lake.bucket).toEqual({
      bucket: 'from-env',
      prefix: '',
    });
    expect(loadConfig({ env: {} }).lake).toEqual({
      url: '',
      bucket: null,
      partBytes: 16_777_216,
      keepSnapshotMonths: null,
      publishEverySecs: null,
    });
    expect(() => loadConfig({ env: { POOL_EXPORT_LAKE_URL: 'lake' } })).toThrow(/^POOL_EXPORT_LAKE_URL is a local/);
    expect(() => loadConfig({ env: {}, configFile: file('{"lake": {"url": "x"}}') })).toThrow(
      /^config lake.url is a local folder/,
    );
  });

  it.each([
    ['{"lake": "s3://b/p"}', /config "lake" must be an object like \{"url": "s3:\/\/my-bucket\/pool-export"\}/],
    ['{"lake": {"uri": "s3://b/p"}}', /config lake."uri" is not a field of it/],
    ['{"lake": {"url": 5}}', /config lake.url must be a text/],
    [
      '{"lake": {"partMiB": 4}}',
      /config lake.partMiB must be a whole number of MiB from 5 to 5120 \(S3's part sizes\), not 4/,
    ],
    ['{"lake": {"partMiB": 5121}}', /lake.partMiB must be .* not 5121; the default is 16/],
    ['{"lake": {"partMiB": 5.5}}', /lake.partMiB must be a whole number/],
    ['{"lake": {"partMiB": "8"}}', /lake.partMiB must be .* not "8"/],
    [
      '{"lake": {"keepSnapshotMonths": 0}}',
      /config lake.keepSnapshotMonths must be a whole number of months from 1 \(the current month only\) to 1200, or null to keep every snapshot, not 0/,
    ],
    ['{"lake": {"keepSnapshotMonths": 2.5}}', /lake.keepSnapshotMonths must be a whole number/],
    ['{"lake": {"keepSnapshotMonths": "6"}}', /lake.keepSnapshotMonths must be .* not "6"/],
    [
      '{"lake": {"publishEvery": 600}}',
      /config lake.publishEvery must be a duration text such as "10m" or "1h" \("0s": publish every run\), not 600/,
    ],
    [
      '{"lake": {"publishEvery": "10 minutes"}}',
      /config lake.publishEvery takes a duration such as 90s, 15m, 2h or 1d, not "10 minutes"/,
    ],
  ])('refuses the lake object %s', (content, message) => {
    expect(() => loadConfig({ env: {}, configFile: file(content) })).toThrow(message);
  });

  it("takes the part size of multipart uploads in MiB, from 5 (S3's smallest part) to 5120", () => {
    const part = (n: number) => loadConfig({ env: {}, configFile: file(`{"lake": {"partMiB": ${n}}}`) }).lake.partBytes;
    expect([part(5), part(64), part(5120)]).toEqual([5_242_880, 67_108_864, 5_368_709_120]);
  });

  it('keeps every snapshot unless told a number of months, local lake or bucket', () => {
    const keep = (v: string) =>
      loadConfig({ env: {}, configFile: file(`{"lake": {"keepSnapshotMonths": ${v}}}`) }).lake.keepSnapshotMonths;
    expect([keep('null'), keep('1'), keep('24'), keep('1200')]).toEqual([null, 1, 24, 1200]);
  });

  it('publishes a bucket lake at most every publishEvery, unset by default, "0s" every run', () => {
    const every = (v: string) =>
      loadConfig({ env: {}, configFile: file(`{"lake": {"publishEvery": ${v}}}`) }).lake.publishEverySecs;
    expect([every('null'), every('"0s"'), every('"90s"'), every('"10m"'), every('"1h"')]).toEqual([
      null,
      0,
      90,
      600,
      3600,
    ]);
  });

  it("removes a bucket lake's secrets from the environment from every message, and only then", () => {
    const env = { AWS_SECRET_ACCESS_KEY: 'sekrit-1', AWS_SESSION_TOKEN: 'tok-2' };
    expect(loadConfig({ env: { ...env, POOL_EXPORT_LAKE_URL: 's3://bkt/p' } }).secrets).toEqual(['sekrit-1', 'tok-2']);
    expect(loadConfig({ env }).secrets).toEqual([]);
  });
});
