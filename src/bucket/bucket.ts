/**
 * A bucket lake's bucket, through `@aws-sdk/client-s3` as for AWS itself:
 * - endpoint, region and credentials come from the SDK's standard chain (environment, shared config and credentials
 *   files, `AWS_PROFILE`, instance roles); an S3-compatible store (MinIO, R2, Ceph) is reached through
 *   `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`, with path-style addressing whenever an endpoint is given;
 * - uploads go through `@aws-sdk/lib-storage` (`Upload`): one PUT below the part size (`PART_BYTES`, or
 *   `lake.partMiB`), multipart above it, `QUEUE` parts
 *   at once, each with a CRC32 checksum the store verifies; a multipart upload is one object only once completed, so
 *   no reader ever lists a part of one;
 * - requests are retried by the SDK's standard strategy (5xx, `SlowDown`, throttling, broken connections) with the
 *   project's `maxAttempts`; the first request of a command (`check`) is given a few seconds and one retry, so that a
 *   wrong endpoint, credentials or bucket fails at once with one line naming the bucket and the fix.
 */
import { createReadStream, createWriteStream, mkdirSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { type LakeUrl, showLakeUrl } from '../config/lake-url.ts';
import { BucketError, StopRequested } from '../errors.ts';
import { replaceFile } from '../util/atomic-file.ts';

/**
 * Parts of a multipart upload, and the size from which an upload is multipart, unless `lake.partMiB` says otherwise
 * (S3's smallest part is 5 MiB).
 */
export const PART_BYTES = 16 * 1024 ** 2;
/** Milliseconds the first request of a command (`check`) may take, twice: a wrong endpoint fails within seconds. */
const CHECK_TIMEOUT_MS = 10_000;
/** Parts in flight per upload. */
const QUEUE = 4;

// The SDK warns on every Node below 22 that later SDK versions will need 22; this project pins its SDK version in
// its lockfile, so the warning says nothing to its users.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

/** The endpoint an S3-compatible store is reached at, from the environment (AWS's own variables), or undefined. */
export function endpointFromEnv(env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env.AWS_ENDPOINT_URL_S3 || env.AWS_ENDPOINT_URL || undefined;
}

/** Requests sent, by kind, for the benchmark and the run's log (each retry is counted again by the SDK's attempts). */
export interface BucketRequests {
  put: number;
  get: number;
  list: number;
  delete: number;
  head: number;
}

/** An object of the bucket: its key below the lake's prefix, its size and its ETag. */
export interface BucketObject {
  readonly rel: string;
  readonly size: number;
  readonly etag: string;
}

const KIND: Readonly<Record<string, keyof BucketRequests>> = {
  PutObjectCommand: 'put',
  CreateMultipartUploadCommand: 'put',
  UploadPartCommand: 'put',
  CompleteMultipartUploadCommand: 'put',
  AbortMultipartUploadCommand: 'delete',
  GetObjectCommand: 'get',
  ListObjectsV2Command: 'list',
  DeleteObjectsCommand: 'delete',
  DeleteObjectCommand: 'delete',
  HeadBucketCommand: 'head',
  HeadObjectCommand: 'head',
};

/** The lake's bucket: keys are given relative to the lake's prefix (`dodoex/swaps/chain=bsc/…`). */
export class Bucket {
  readonly requests: BucketRequests = { put: 0, get: 0, list: 0, delete: 0, head: 0 };
  readonly bytesUp = { n: 0 };
  readonly bytesDown = { n: 0 };
  private readonly client: S3Client;
  private readonly quick: S3Client;
  readonly endpoint: string | undefined;
  private readonly partBytes: number;
  private readonly signal: AbortSignal | undefined;
  /** Seconds a request may take before it fails (and is retried), for messages. */
  private readonly requestSecs: number;

  constructor(
    readonly url: LakeUrl,
    opts: {
      readonly maxAttempts?: number;
      readonly timeoutMs?: number;
      readonly partBytes?: number;
      readonly env?: NodeJS.ProcessEnv;
      /** A stop request: every request under way is aborted, and the next one refused (`StopRequested`). */
      readonly signal?: AbortSignal | undefined;
    } = {},
  ) {
    this.partBytes = opts.partBytes ?? PART_BYTES;
    this.signal = opts.signal;
    const env = opts.env ?? process.env;
    this.endpoint = endpointFromEnv(env);
    const base: S3ClientConfig = {
      ...(this.endpoint ? { endpoint: this.endpoint, forcePathStyle: true } : {}),
      // A store reached at its own endpoint needs a region to sign with, which most ignore; AWS itself takes the chain's.
      ...(this.endpoint && !env.AWS_REGION && !env.AWS_DEFAULT_REGION ? { region: 'us-east-1' } : {}),
    };
    // A request that outlives its time fails and is retried: the SDK's own handler only warns unless told to throw, and
    // a store that accepts a connection and never answers held a run for as long as it waited.
    this.requestSecs = (opts.timeoutMs ?? 120_000) / 1000;
    this.client = new S3Client({
      ...base,
      maxAttempts: opts.maxAttempts ?? 8,
      requestHandler: {
        connectionTimeout: 10_000,
        requestTimeout: opts.timeoutMs ?? 120_000,
        throwOnRequestTimeout: true,
      },
    });
    this.quick = new S3Client({
      ...base,
      maxAttempts: 2,
      requestHandler: { connectionTimeout: 3_000, requestTimeout: CHECK_TIMEOUT_MS, throwOnRequestTimeout: true },
    });
    for (const c of [this.client, this.quick])
      c.middlewareStack.add(
        (next, context) => async (args) => {
          const kind = KIND[context.commandName ?? ''];
          if (kind) this.requests[kind]++;
          return next(args);
        },
        { step: 'initialize', name: 'poolExportRequestCount' },
      );
  }

  /** The options of every request: aborted by a stop request, refused once one came. */
  private sendOpts(): { abortSignal?: AbortSignal } {
    if (this.signal?.aborted) throw new StopRequested();
    return this.signal ? { abortSignal: this.signal } : {};
  }

  /** The full key of a key relative to the prefix. */
  key(rel: string): string {
    return this.url.prefix ? `${this.url.prefix}/${rel}` : rel;
  }

  /** `s3://bucket/prefix[/rel]`, for messages. */
  show(rel = ''): string {
    return `${showLakeUrl(this.url)}${rel ? `/${rel}` : ''}`;
  }

  /**
   * Checks that the bucket exists and that the credentials may list the prefix, within seconds: a `BucketError`
   * naming the bucket and the fix otherwise.
   */
  async check(): Promise<void> {
    try {
      // One listing answers every question at once, with a code in its body (a HEAD's 403 or 404 has none): a missing
      // bucket, refused credentials, a prefix denied.
      await this.quick.send(
        new ListObjectsV2Command({ Bucket: this.url.bucket, Prefix: this.key(''), MaxKeys: 1 }),
        this.sendOpts(),
      );
    } catch (e) {
      throw this.explain(e, 'check');
    }
  }

  /** Every object below the prefix (or below `rel` in it), with sizes and ETags. */
  async list(rel = ''): Promise<BucketObject[]> {
    const out: BucketObject[] = [];
    const prefix = this.key(rel);
    const cut = this.url.prefix ? this.url.prefix.length + 1 : 0;
    let token: string | undefined;
    try {
      do {
        const r = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.url.bucket, Prefix: prefix, ContinuationToken: token }),
          this.sendOpts(),
        );
        for (const o of r.Contents ?? [])
          if (o.Key !== undefined && o.Key.length > cut)
            out.push({ rel: o.Key.slice(cut), size: Number(o.Size ?? 0), etag: o.ETag ?? '' });
        token = r.IsTruncated ? r.NextContinuationToken : undefined;
      } while (token);
    } catch (e) {
      throw this.explain(e, 'list');
    }
    return out;
  }

  /** Uploads a local file as one object (multipart when large), checksummed; returns its ETag. */
  async upload(rel: string, file: string, size: number): Promise<string> {
    try {
      const up = new Upload({
        client: this.client,
        params: {
          Bucket: this.url.bucket,
          Key: this.key(rel),
          Body: createReadStream(file),
          ChecksumAlgorithm: 'CRC32',
        },
        partSize: this.partBytes,
        queueSize: QUEUE,
        leavePartsOnError: false,
        ...(this.signal ? { abortController: controllerOf(this.signal) } : {}),
      });
      const r = await up.done();
      this.bytesUp.n += size;
      return r.ETag ?? '';
    } catch (e) {
      throw this.explain(e, 'upload', rel);
    }
  }

  /** Writes a small object (a manifest, the state's head) in one PUT. */
  async put(rel: string, body: string, contentType = 'application/json'): Promise<string> {
    try {
      const r = await this.client.send(
        new PutObjectCommand({
          Bucket: this.url.bucket,
          Key: this.key(rel),
          Body: body,
          ContentType: contentType,
          ChecksumAlgorithm: 'CRC32',
        }),
        this.sendOpts(),
      );
      this.bytesUp.n += Buffer.byteLength(body);
      return r.ETag ?? '';
    } catch (e) {
      throw this.explain(e, 'upload', rel);
    }
  }

  /** Downloads an object to a local file, whole or not at all (through `<file>.part`); returns its ETag. */
  async download(rel: string, file: string): Promise<string> {
    const part = `${file}.part`;
    try {
      const r = await this.client.send(
        new GetObjectCommand({ Bucket: this.url.bucket, Key: this.key(rel) }),
        this.sendOpts(),
      );
      mkdirSync(dirname(file), { recursive: true });
      const out = createWriteStream(part);
      await pipeline(r.Body as NodeJS.ReadableStream, out);
      this.bytesDown.n += out.bytesWritten;
      replaceFile(part, file);
      return r.ETag ?? '';
    } catch (e) {
      rmSync(part, { force: true });
      throw this.explain(e, 'download', rel);
    }
  }

  /** A small object's text, or null when there is none. */
  async text(rel: string): Promise<string | null> {
    try {
      const r = await this.client.send(
        new GetObjectCommand({ Bucket: this.url.bucket, Key: this.key(rel) }),
        this.sendOpts(),
      );
      const text = await r.Body!.transformToString('utf8');
      this.bytesDown.n += Buffer.byteLength(text);
      return text;
    } catch (e) {
      if (codeOf(e) === 'NoSuchKey' || statusOf(e) === 404) return null;
      throw this.explain(e, 'download', rel);
    }
  }

  /** Deletes objects, a thousand per request (S3's most). */
  async remove(rels: readonly string[]): Promise<void> {
    for (let i = 0; i < rels.length; i += 1000) {
      const batch = rels.slice(i, i + 1000);
      try {
        const r = await this.client.send(
          new DeleteObjectsCommand({
            Bucket: this.url.bucket,
            Delete: { Objects: batch.map((rel) => ({ Key: this.key(rel) })), Quiet: true },
          }),
          this.sendOpts(),
        );
        const failed = r.Errors?.[0];
        if (failed) throw Object.assign(new Error(failed.Message ?? 'delete refused'), { Code: failed.Code });
      } catch (e) {
        throw this.explain(e, 'delete', batch[0]);
      }
    }
  }

  /** Closes the connections. */
  close(): void {
    this.client.destroy();
    this.quick.destroy();
  }

  /** One line for a failed request: what failed, where, and the fix; never a secret (the SDK's texts hold none). */
  explain(
    e: unknown,
    op: 'check' | 'list' | 'upload' | 'download' | 'delete',
    rel?: string,
  ): BucketError | StopRequested {
    if (e instanceof BucketError || e instanceof StopRequested) return e;
    // A request aborted by a stop request is the stop, not a failure of the bucket.
    if (this.signal?.aborted) return new StopRequested();
    const code = codeOf(e);
    const status = statusOf(e);
    const where = this.show(rel);
    const at = this.endpoint ? ` at ${this.endpoint}` : '';
    const net = /^(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)$/.test(code);
    if (code === 'TimeoutError' || (code === 'ETIMEDOUT' && /requestTimeout/.test(String((e as Error)?.message))))
      return new BucketError(
        `the bucket lake ${this.show()}${at} accepted the connection but did not answer within ${op === 'check' ? CHECK_TIMEOUT_MS / 1000 : this.requestSecs} s, tried again; check that AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) names an S3 endpoint, and the network`,
        'stalled',
      );
    if (net || /timed? ?out/i.test(code))
      return new BucketError(
        `the bucket lake ${this.show()} cannot be reached${at} (${code}); check AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) and the network`,
        'unreachable',
      );
    if (code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch' || code === 'CredentialsProviderError')
      return new BucketError(
        `the credentials for ${this.show()} were refused (${code}); check AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE and its credentials file`,
        'credentials',
      );
    if (code === 'NoSuchBucket' || (op === 'check' && status === 404))
      return new BucketError(
        `the bucket "${this.url.bucket}" does not exist${at}; create it, or fix lake.url (POOL_EXPORT_LAKE_URL)`,
        'no-bucket',
      );
    if (code === 'AccessDenied' || code === 'AllAccessDisabled' || status === 403)
      return new BucketError(
        `access to ${where} is denied (${code || status}); the credentials need s3:ListBucket on the bucket and s3:GetObject, s3:PutObject and s3:DeleteObject below ${this.show()}`,
        'denied',
      );
    if (/Region is missing/i.test(String((e as Error)?.message)))
      return new BucketError(
        `no region is set for ${this.show()}; set AWS_REGION (or a region in the profile's config file)`,
        'region',
      );
    return new BucketError(
      `the bucket lake ${where} failed to ${op}${at}: ${code || status || ''} ${String((e as Error)?.message ?? e)}`.trim(),
      'failed',
    );
  }
}

function codeOf(e: unknown): string {
  const err = e as { Code?: string; code?: string; name?: string; cause?: { code?: string } } | undefined;
  const name = err?.Code ?? err?.name ?? '';
  // Node's network errors carry their code; the SDK wraps some of them in an error named after nothing useful.
  return (
    err?.code ?? err?.cause?.code ?? (name === 'Error' || name === 'Unknown' || name === 'UnknownError' ? '' : name)
  );
}

function statusOf(e: unknown): number | undefined {
  return (e as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;
}

/** An AbortController that aborts with `signal` (lib-storage's `Upload` takes a controller, not a signal). */
function controllerOf(signal: AbortSignal): AbortController {
  const c = new AbortController();
  if (signal.aborted) c.abort();
  else signal.addEventListener('abort', () => c.abort(), { once: true });
  return c;
}
