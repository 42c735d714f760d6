/**
 * What an incremental run uploads to a bucket lake, against the size of its new rows and of the month they join. One
 * chain whose one month holds N swaps (400,000 by default: a full file of 250,000 and an open one), backfilled to a
 * bucket lake (s3rver, its own process), then run again after each of three steps of 100 new blocks. For each run: the
 * objects and bytes it uploaded (its `lake-published` event, manifests apart), the Parquet bytes of its new rows (how
 * much its local lake grew), and the bytes of the whole month, which is what a lake of one object per month (every
 * version before this one) uploaded for the same run: the baseline, measured in the same run.
 *
 *   npx tsx bench/bucket-upload.ts [--swaps N]      (make bench-upload; about 2 minutes at 400,000)
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';
import { bucketEnv, startS3rver } from '../test/support/s3-store.ts';

const at = process.argv.indexOf('--swaps');
const SWAPS = at > 0 ? Number(process.argv[at + 1]) : 400_000;
/** History of 25 days ending on the 28th: every swap in one calendar month. */
const NOW = '2026-10-28T00:00:00Z';
const sandbox = await startSandbox(['--scale', String(SWAPS), '--chains', '56', '--history-days', '25', '--now', NOW]);
const s3 = await startS3rver();
const dir = mkdtempSync(join(tmpdir(), 'pool-export-upload-'));
const data = join(dir, 'data');
const env = {
  ...process.env,
  POOL_EXPORT_API_KEY: sandbox.apiKey,
  POOL_EXPORT_BASE_URL: sandbox.url,
  POOL_EXPORT_DATA_DIR: data,
  ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/upload`),
};

/** One run of the chain's swaps to the bucket; its `lake-published` event. */
async function run(): Promise<{ uploaded: number; bytes: number; manifests: number }> {
  const args = ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--no-verify', '--log-format', 'json'];
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    child.on('exit', (c) => resolve({ code: c, stderr: err }));
  });
  if (code !== 0) throw new Error(`run exited ${code}: ${stderr.slice(-800)}`);
  const line = stderr.split('\n').find((l) => l.includes('"event":"lake-published"'));
  if (!line) throw new Error('the run published nothing');
  return JSON.parse(line) as { uploaded: number; bytes: number; manifests: number };
}

/** The swaps' month folder of the local lake: its files and their bytes. */
function month(): { files: number; bytes: number } {
  const base = join(data, 'lake', 'dodoex', 'swaps', 'chain=bsc');
  let [files, bytes] = [0, 0];
  for (const m of readdirSync(base))
    for (const f of readdirSync(join(base, m)).filter((n) => n.endsWith('.parquet'))) {
      files++;
      bytes += statSync(join(base, m, f)).size;
    }
  return { files, bytes };
}

const mb = (n: number) => `${(n / 1e6).toFixed(2)} MB`;
try {
  const first = await run();
  const rows = [
    `backfill of ${SWAPS.toLocaleString('en')} swaps: ${first.uploaded} objects, ${mb(first.bytes)}; the month is ${month().files} files`,
  ];
  const table = [
    '| run | uploaded (manifests apart) | new rows (Parquet) | the month (one object per month uploaded it whole) | uploaded / new rows | month / new rows |',
    '|---|---|---|---|---|---|',
  ];
  for (let step = 1; step <= 3; step++) {
    const before = month().bytes;
    await sandbox.control('advance', { blocks: 100 });
    const p = await run();
    const after = month();
    const added = Math.max(1, after.bytes - before);
    table.push(
      `| after 100 new blocks (${step}) | ${p.uploaded} objects, ${mb(p.bytes)} | ${mb(added)} | ${after.files} files, ${mb(after.bytes)} | ${(p.bytes / added).toFixed(1)} × | ${(after.bytes / added).toFixed(1)} × |`,
    );
  }
  console.log([...rows, '', ...table].join('\n'));
} finally {
  await sandbox.stop();
  await s3.stop();
  rmSync(dir, { recursive: true, force: true });
}
