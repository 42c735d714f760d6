/**
 * What a bucket lake costs, against s3rver (its own process on 127.0.0.1) and the sandbox at the demo's size (8 chains,
 * 5,000 swaps each): a first export and an incremental run to the bucket beside the same runs to a local lake (the
 * baseline, measured in the same run), a run from an empty data folder that resumes from the bucket, `restore`, and a
 * reader's first and second `query` from a folder with no warehouse. Requests to the bucket are the exporter's own
 * count (its log); requests to the upstream, the sandbox's. Then the upload throughput of one 64 MiB object, multipart.
 * `npx tsx bench/bucket-cost.ts` (about 3 min).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Bucket } from '../src/bucket/bucket.ts';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';
import { bucketEnv, startS3rver } from '../test/support/s3-store.ts';

const sandbox = await startSandbox(['--scale', '5000']);
const s3 = await startS3rver();
const dir = mkdtempSync(join(tmpdir(), 'pool-export-bucket-cost-'));
const url = `s3://${s3.bucket}/bench`;
const base = { ...process.env, POOL_EXPORT_API_KEY: sandbox.apiKey, POOL_EXPORT_BASE_URL: sandbox.url };

interface Timed {
  secs: number;
  upstream: number;
  events: Record<string, Record<string, unknown>>;
  stderr: string;
}

/** Runs the CLI; its wall seconds, the upstream requests the sandbox served, and its log's events by name. */
async function timed(args: string[], data: string, bucket: boolean): Promise<Timed> {
  await sandbox.control('stats', {});
  const started = performance.now();
  const env = { ...base, POOL_EXPORT_DATA_DIR: data, ...(bucket ? bucketEnv(s3.endpoint, url) : {}) };
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('exit', (c) => resolve({ code: c, stderr: err }));
  });
  const secs = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-800)}`);
  const { requests } = await sandbox.control<{ requests: number }>('stats');
  const events: Timed['events'] = {};
  for (const l of stderr.split('\n'))
    if (l.startsWith('{')) {
      const e = JSON.parse(l) as Record<string, unknown>;
      events[String(e.event)] = e;
    }
  return { secs, upstream: requests, events, stderr };
}

const RUN = ['run', '--no-verify', '--log-format', 'json'];
const mb = (n: unknown) => (Number(n) / 1e6).toFixed(1);
const reqs = (e: Record<string, unknown> | undefined) => {
  const r = (e?.requests ?? {}) as Record<string, number>;
  return `${r.put ?? 0} PUT, ${r.list ?? 0} LIST, ${r.delete ?? 0} DELETE, ${r.get ?? 0} GET`;
};

try {
  const local = join(dir, 'local');
  const remote = join(dir, 'remote');
  const rows: string[][] = [];
  const pair = async (what: string) => {
    const l = await timed(RUN, local, false);
    const b = await timed(RUN, remote, true);
    const p = b.events['lake-published']!;
    rows.push([
      what,
      `${l.secs.toFixed(1)} s`,
      `${b.secs.toFixed(1)} s (${(b.secs / l.secs).toFixed(2)} ×)`,
      `${p.uploaded} objects, ${mb(p.bytes)} MB in ${(Number(p.ms) / 1000).toFixed(1)} s; ${reqs(p)}`,
    ]);
  };
  await pair('first export, 8 chains');
  await sandbox.control('advance', { blocks: 1200 });
  await pair('incremental run (1,200 new blocks)');

  await sandbox.control('advance', { blocks: 1200 });
  const inc = await timed(RUN, local, false);
  const fresh = await timed(RUN, join(dir, 'fresh'), true);
  const r = fresh.events.restored!;
  const p = fresh.events['lake-published']!;
  console.log('| what | local lake | bucket lake | published to the bucket |\n|---|---|---|---|');
  for (const row of rows) console.log(`| ${row.join(' | ')} |`);
  console.log(
    `| run from an empty data folder (1,200 new blocks) | ${inc.secs.toFixed(1)} s, ${inc.upstream} upstream requests | ${fresh.secs.toFixed(1)} s, ${fresh.upstream} upstream requests; restored ${r.objects} objects (${mb(r.bytes)} MB) in ${(Number(r.ms) / 1000).toFixed(1)} s | ${p.uploaded} objects, ${mb(p.bytes)} MB; ${reqs(p)} |`,
  );

  const restoreStarted = performance.now();
  await timed(['restore'], join(dir, 'restored'), true);
  const restoreSecs = (performance.now() - restoreStarted) / 1000;
  const reader = join(dir, 'reader');
  const q = ['query', 'SELECT chain, count(*) FROM dodoex.swaps GROUP BY ALL'];
  const first = await timed(q, reader, true);
  const second = await timed(q, reader, true);
  const fetched = /fetched (\d+) objects \(([\d.]+) MB\)/.exec(first.stderr);
  console.log(
    `\n\`restore\` into an empty folder: ${restoreSecs.toFixed(1)} s. A reader's first \`query\` from a folder with no warehouse: ${first.secs.toFixed(1)} s, fetching ${fetched?.[1]} objects (${fetched?.[2]} MB); its second: ${second.secs.toFixed(1)} s, fetching ${/fetched/.test(second.stderr) ? 'some' : 'nothing'}.`,
  );

  // One large object through the exporter's own upload path: multipart, 16 MiB parts, four at once.
  const big = join(dir, 'big.bin');
  const size = 64 * 1024 ** 2;
  writeFileSync(big, Buffer.alloc(size, 7));
  process.env.AWS_ENDPOINT_URL_S3 = s3.endpoint;
  process.env.AWS_ACCESS_KEY_ID = 'S3RVER';
  process.env.AWS_SECRET_ACCESS_KEY = 'S3RVER';
  const bucket = new Bucket({ bucket: s3.bucket, prefix: 'throughput' });
  const t0 = performance.now();
  await bucket.upload('big.bin', big, size);
  const secs = (performance.now() - t0) / 1000;
  console.log(
    `Upload of one 64 MiB object (multipart, ${bucket.requests.put} PUT requests): ${secs.toFixed(2)} s, ${(size / 1024 ** 2 / secs).toFixed(0)} MiB/s.`,
  );
  bucket.close();
} finally {
  await sandbox.stop();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
