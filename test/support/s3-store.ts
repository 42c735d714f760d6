/**
 * A real S3-compatible server for the tests: `s3rver` as a separate process on 127.0.0.1, a random free port, one
 * bucket. Where it differs from AWS S3 (what the exporter codes against is AWS's documented behaviour):
 * - its ListObjectsV2 continuation tokens are DES-encrypted, which OpenSSL 3 keeps in its legacy provider: without
 *   `--openssl-legacy-provider` a listing of more keys than `MaxKeys` fails with InternalError;
 * - it does not check signatures (a wrong secret passes; a wrong access key id is refused: InvalidAccessKeyId);
 * - it ignores `Content-MD5` mismatches, `If-None-Match: *` and `If-Match` (AWS refuses with BadDigest and 412);
 * - it has no bucket policies, so a denied prefix is played by `startS3Proxy`.
 *
 * And the tests' own reader of a bucket: their own S3 client (not the exporter's code) and hyparquet.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { parquetReadObjects } from 'hyparquet';
import { compressors } from 'hyparquet-compressors';

export const S3_KEY = { id: 'S3RVER', secret: 'S3RVER' };

export interface S3Server {
  readonly endpoint: string;
  readonly bucket: string;
  stop(): Promise<void>;
}

/** Starts s3rver with one bucket; resolves once it listens. */
export async function startS3rver(bucket = 'lake'): Promise<S3Server> {
  const dir = mkdtempSync(join(tmpdir(), 'pool-export-s3rver-'));
  const bin = createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  const child: ChildProcess = spawn(
    process.execPath,
    ['--openssl-legacy-provider', bin, '-d', dir, '-a', '127.0.0.1', '-p', '0', '--configure-bucket', bucket],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const endpoint = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /listening on (127\.0\.0\.1:\d+)/.exec(out);
      if (m) resolve(`http://${m[1]}`);
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.on('exit', (code) => reject(new Error(`s3rver exited (${code}): ${out}`)));
  });
  // Its request log is not needed once it listens.
  child.stdout!.removeAllListeners('data').resume();
  child.stderr!.removeAllListeners('data').resume();
  return {
    endpoint,
    bucket,
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** What the proxy does with a request: pass it on, answer it itself, or hold it until released. */
export type ProxyRule = (req: { method: string; url: string }) => 'pass' | 'hold' | { status: number; body: string };

export interface S3Proxy {
  readonly endpoint: string;
  /** Requests seen, in order (method and path with query). */
  readonly seen: { method: string; url: string }[];
  rule: ProxyRule;
  /** Resolves when a request is held. */
  held(): Promise<{ method: string; url: string }>;
  /** Lets held requests go on to the server. */
  release(): void;
  /** Drops held requests without passing them on (their client is gone: a killed process). */
  drop(): void;
  stop(): Promise<void>;
}

/** An HTTP proxy in front of an S3 server, whose rule can refuse or hold requests (a denied prefix, a kill point). */
export async function startS3Proxy(target: string): Promise<S3Proxy> {
  const to = new URL(target);
  const seen: { method: string; url: string }[] = [];
  let waiting: ((r: { method: string; url: string }) => void)[] = [];
  let parked: (() => void)[] = [];
  let parkedSockets: (() => void)[] = [];
  const proxy: S3Proxy = {
    endpoint: '',
    seen,
    rule: () => 'pass',
    held: () => new Promise((r) => waiting.push(r)),
    release: () => {
      const p = parked;
      parked = [];
      parkedSockets = [];
      for (const go of p) go();
    },
    drop: () => {
      const d = parkedSockets;
      parked = [];
      parkedSockets = [];
      for (const kill of d) kill();
    },
    stop: async () => {
      proxy.release();
      await new Promise((r) => server.close(r));
      server.closeAllConnections();
    },
  };
  const server = http.createServer((req, res) => {
    const r = { method: req.method ?? 'GET', url: req.url ?? '/' };
    seen.push(r);
    const verdict = proxy.rule(r);
    if (typeof verdict === 'object') {
      res.writeHead(verdict.status, { 'content-type': 'application/xml' }).end(verdict.body);
      req.resume();
      return;
    }
    const forward = () => {
      const up = http.request(
        { host: to.hostname, port: to.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on('error', () => res.destroy());
          answer.pipe(res);
        },
      );
      // A client that went away (a killed run) aborts both legs: no error of theirs is the test's.
      up.on('error', () => res.destroy());
      req.on('error', () => up.destroy());
      res.on('error', () => up.destroy());
      req.pipe(up);
    };
    if (verdict === 'hold') {
      req.pause();
      parked.push(forward);
      parkedSockets.push(() => req.socket.destroy());
      const w = waiting;
      waiting = [];
      for (const f of w) f(r);
    } else forward();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  (proxy as { endpoint: string }).endpoint = `http://127.0.0.1:${port}`;
  return proxy;
}

/** The body S3 answers a refused request with. */
export const s3ErrorBody = (code: string, message: string) =>
  `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`;

/** The environment that points the exporter at a bucket lake. */
export function bucketEnv(endpoint: string, url: string, key = S3_KEY): Record<string, string> {
  return {
    POOL_EXPORT_LAKE_URL: url,
    AWS_ENDPOINT_URL_S3: endpoint,
    AWS_ACCESS_KEY_ID: key.id,
    AWS_SECRET_ACCESS_KEY: key.secret,
    AWS_REGION: 'us-east-1',
  };
}

/** The tests' own client of the server. */
export function testClient(endpoint: string): S3Client {
  return new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: S3_KEY.id, secretAccessKey: S3_KEY.secret },
  });
}

export interface Listed {
  readonly key: string;
  readonly etag: string;
  readonly size: number;
  readonly modified: number;
}

/** Every object below a prefix. */
export async function listAll(c: S3Client, bucket: string, prefix: string): Promise<Listed[]> {
  const out: Listed[] = [];
  let token: string | undefined;
  do {
    const r = await c.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token, MaxKeys: 200 }),
    );
    for (const o of r.Contents ?? [])
      out.push({
        key: o.Key!,
        etag: o.ETag ?? '',
        size: Number(o.Size),
        modified: o.LastModified?.getTime() ?? 0,
      });
    token = r.IsTruncated ? r.NextContinuationToken : undefined;
  } while (token);
  return out;
}

export async function getBytes(c: S3Client, bucket: string, key: string): Promise<Uint8Array> {
  const r = await c.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return r.Body!.transformToByteArray();
}

/** Columns a run sets by itself: left out of the digests that compare two exports of the same upstream. */
const RUN_COLUMNS = new Set(['_run_id', '_taken_at']);

const canonical = (v: unknown): unknown =>
  typeof v === 'bigint'
    ? `${v}n`
    : v instanceof Date
      ? v.toISOString()
      : Array.isArray(v)
        ? v.map(canonical)
        : v && typeof v === 'object'
          ? Object.fromEntries(
              Object.entries(v)
                .sort(([a], [b]) => a.localeCompare(b))
                .map(([k, x]) => [k, canonical(x)]),
            )
          : v;

/** Rows of Parquet files (as hyparquet reads them), each as a canonical text, without the run's own columns. */
export async function parquetRows(files: readonly Uint8Array[]): Promise<string[]> {
  const rows: string[] = [];
  for (const bytes of files) {
    const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
    for (const r of (await parquetReadObjects({ file, compressors })) as Record<string, unknown>[])
      rows.push(JSON.stringify(canonical(Object.fromEntries(Object.entries(r).filter(([k]) => !RUN_COLUMNS.has(k))))));
  }
  return rows;
}

/** A digest of rows in any order, and their count. */
export function digest(rows: readonly string[]): { rows: number; sha256: string } {
  const h = createHash('sha256');
  for (const r of [...rows].sort()) h.update(r).update('\n');
  return { rows: rows.length, sha256: h.digest('hex') };
}

/** The table path of a lake key (`dodoex/swaps`, `dodoex/pairs_history`), or null. */
export const tableOfKey = (rel: string) => {
  const p = rel.split('/');
  return p.length >= 3 && rel.endsWith('.parquet') ? `${p[0]}/${p[1]}` : null;
};

/** Per table path of a local lake folder: the digest of its rows. */
export async function localDigests(lake: string): Promise<Map<string, { rows: number; sha256: string }>> {
  const files = new Map<string, Uint8Array[]>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir)) {
      if (e.startsWith('.')) continue;
      const p = join(dir, e);
      if (statSync(p).isDirectory()) walk(p);
      else {
        const t = tableOfKey(relative(lake, p));
        if (t) files.set(t, [...(files.get(t) ?? []), readFileSync(p)]);
      }
    }
  };
  walk(lake);
  const out = new Map<string, { rows: number; sha256: string }>();
  for (const [t, fs] of files) out.set(t, digest(await parquetRows(fs)));
  return out;
}

/** Per table path of a bucket lake: the digest of its rows, read through the tests' own client. */
export async function bucketDigests(
  c: S3Client,
  bucket: string,
  prefix: string,
): Promise<Map<string, { rows: number; sha256: string }>> {
  const files = new Map<string, Uint8Array[]>();
  for (const o of await listAll(c, bucket, `${prefix}/`)) {
    const t = tableOfKey(o.key.slice(prefix.length + 1));
    if (t) files.set(t, [...(files.get(t) ?? []), await getBytes(c, bucket, o.key)]);
  }
  const out = new Map<string, { rows: number; sha256: string }>();
  for (const [t, fs] of files) out.set(t, digest(await parquetRows(fs)));
  return out;
}
