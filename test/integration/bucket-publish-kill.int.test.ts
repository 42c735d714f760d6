/**
 * A run killed (SIGKILL) at ten points of publishing to a bucket, the first a backfill's: among the data objects, between the data and the
 * manifests, among the manifests, among the state's objects, before the state's head. A reader polls the bucket's
 * listing all along, as a listing engine would (list, then read every object of the swaps table), and never sees a
 * swap twice nor loses one it saw before (no reorganization happens here, so the rows only grow). The next run
 * completes what the killed one left: in the end every table of the bucket holds the rows of the data folder's own
 * lake (both read by hyparquet), each manifest names exactly its table's objects, and the state's head names the last
 * run. And a run killed in the middle of a multipart upload, twice (after its first part; with every part up but not
 * completed), which a listing never shows.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callControl, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import {
  bucketDigests,
  bucketEnv,
  getBytes,
  listAll,
  localDigests,
  parquetRows,
  type S3Proxy,
  type S3Server,
  startS3Proxy,
  startS3rver,
  testClient,
} from '../support/s3-store.ts';

const CHAINS = 'bsc';
const PREFIX = 'killed';

let sb: SandboxProcess;
let s3: S3Server;
let proxy: S3Proxy;
let dir: string;

beforeAll(async () => {
  [sb, s3] = await Promise.all([startSandbox(['--scale', '200']), startS3rver()]);
  proxy = await startS3Proxy(s3.endpoint);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-bucket-kill-'));
});
afterAll(async () => {
  await proxy?.stop();
  await Promise.all([sb?.stop(), s3?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** What a request of a publish is, from its method and path. */
function kindOf(req: { method: string; url: string }): string | null {
  const path = decodeURIComponent(req.url.split('?')[0]!);
  if (!path.startsWith(`/${'lake'}/${PREFIX}/`)) return null;
  if (req.method === 'POST' && req.url.includes('delete')) return 'delete';
  if (req.method !== 'PUT') return null;
  if (path.endsWith('/_state/head.json')) return 'head';
  if (path.includes('/_state/')) return 'state';
  if (path.endsWith('/_manifest.json')) return 'manifest';
  return path.endsWith('.parquet') ? 'data' : null;
}

/** The ten kill points: the n-th request of a kind in a run's publish. */
const POINTS: [kind: string, n: number][] = [
  // The first is the backfill's publish: months that no later run rewrites are among what it had not uploaded.
  ['data', 20],
  ['data', 1],
  ['data', 3],
  ['data', 12],
  ['manifest', 1],
  ['manifest', 6],
  ['manifest', 20],
  ['state', 1],
  ['state', 5],
  ['head', 1],
];

const run = (name: string, bucket: boolean, killWhen?: Promise<unknown>) =>
  cli(
    ['run', '--chains', CHAINS, '--no-verify', '--log-format', 'json'],
    {
      ...sandboxEnv(sb, join(dir, name)),
      ...(bucket ? bucketEnv(proxy.endpoint, `s3://${s3.bucket}/${PREFIX}`) : {}),
    },
    killWhen ? { killWhen } : {},
  );

describe('a run killed while publishing to a bucket', () => {
  it('never shows a listing reader a row twice or without one it showed, and the next run completes the publish', async () => {
    const client = testClient(s3.endpoint);

    // The reader: lists the swaps, reads every object listed, checks its ids.
    let seen = new Set<string>();
    let polls = 0;
    const problems: string[] = [];
    let reading = true;
    const errors: string[] = [];
    const reader = (async () => {
      while (reading) {
        const ids: string[] = [];
        try {
          const objects = (await listAll(client, s3.bucket, `${PREFIX}/dodoex/swaps/`)).filter((o) =>
            o.key.endsWith('.parquet'),
          );
          for (const o of objects)
            for (const r of await parquetRows([await getBytes(client, s3.bucket, o.key)]))
              ids.push(String((JSON.parse(r) as { id: string }).id));
        } catch (e) {
          // An object replaced between the listing and the read, or a connection s3rver reset under load: the poll
          // is taken again (what a poll sees, not whether it could read, is what is checked).
          errors.push(String(e));
          continue;
        }
        const now = new Set(ids);
        if (now.size !== ids.length) problems.push(`poll ${polls}: ${ids.length - now.size} swaps twice`);
        const lost = [...seen].filter((id) => !now.has(id));
        if (lost.length) problems.push(`poll ${polls}: ${lost.length} swaps gone`);
        seen = now;
        polls++;
        await new Promise((r) => setTimeout(r, 50));
      }
    })();

    const killed: string[] = [];
    try {
      for (const [i, [kind, n]] of POINTS.entries()) {
        if (i > 0) await callControl(sb.url, 'advance', { blocks: 300 });
        let count = 0;
        proxy.rule = (req) => (kindOf(req) === kind && ++count === n ? 'hold' : 'pass');
        const held = proxy.held();
        const r = await run('bucket', true, held);
        proxy.rule = () => 'pass';
        proxy.drop();
        expect(r.signal, `${kind} #${n}: the run was killed there (${r.stderr.slice(-300)})`).toBe('SIGKILL');
        killed.push(`${kind}#${n}`);
      }
    } finally {
      reading = false;
      await reader;
    }
    expect(killed).toHaveLength(10);
    expect(
      polls,
      `the reader polled throughout (${errors.length} polls retried: ${errors.slice(0, 3)})`,
    ).toBeGreaterThan(10);
    expect(problems).toEqual([]);

    // The next run completes the publish.
    const last = await run('bucket', true);
    expect(last.code, last.stderr.slice(-1000)).toBe(0);
    const runId = /"event":"run-done","runId":"([^"]+)"/.exec(last.stderr)?.[1];
    // What the publisher's own lake holds is what the bucket must hold (that rows equal an export to a local lake is
    // bucket-lake.int.test.ts's).
    const [local, remote] = await Promise.all([
      localDigests(join(dir, 'bucket', 'lake')),
      bucketDigests(client, s3.bucket, PREFIX),
    ]);
    expect(Object.fromEntries(remote)).toEqual(Object.fromEntries(local));
    const objects = await listAll(client, s3.bucket, `${PREFIX}/`);
    const etags = new Map(objects.map((o) => [o.key.slice(PREFIX.length + 1), o.etag]));
    for (const m of [...etags.keys()].filter((k) => k.endsWith('/_manifest.json'))) {
      const table = m.slice(0, -'/_manifest.json'.length);
      const manifest = JSON.parse(Buffer.from(await getBytes(client, s3.bucket, `${PREFIX}/${m}`)).toString()) as {
        objects: { key: string; etag: string }[];
      };
      expect(Object.fromEntries(manifest.objects.map((o) => [o.key, o.etag])), m).toEqual(
        Object.fromEntries([...etags].filter(([k]) => k.startsWith(`${table}/`) && k.endsWith('.parquet'))),
      );
    }
    const head = JSON.parse(Buffer.from(await getBytes(client, s3.bucket, `${PREFIX}/_state/head.json`)).toString());
    expect(head.runId).toBe(runId);
  }, 600_000);
});

/**
 * Mid-multipart: a month of swaps above the part size (`lake.partMiB` 5, S3's smallest) goes up as a multipart upload,
 * and a run is killed once after its first part and once with every part up but the upload not completed. A listing
 * shows the month's previous object throughout (same ETag, same rows), never a part; the next run completes it.
 */
describe('a run killed in the middle of a multipart upload', () => {
  it('leaves the listing showing the previous object, and the next run completes the upload', async () => {
    // 60,000 swaps on one chain, all in October (25 days of history ending on the 28th), make one month object of
    // more than 5 MiB (about 125 bytes a swap); the new blocks of each step below add swaps to that month, so each run
    // uploads it again (a run uploads only the months its new or changed rows fall in).
    const big = await startSandbox([
      '--scale',
      '60000',
      '--chains',
      '56',
      '--history-days',
      '25',
      '--now',
      '2026-10-28T00:00:00Z',
    ]);
    const folder = join(dir, 'multipart');
    const config = join(dir, 'multipart.config.json');
    writeFileSync(config, JSON.stringify({ lake: { partMiB: 5 } }));
    const prefix = 'multipart';
    const client = testClient(s3.endpoint);
    const swapsPrefix = `${prefix}/dodoex/swaps/`;
    const runBig = (killWhen?: Promise<unknown>) =>
      cli(
        ['run', '--chains', CHAINS, '--datasets', 'dodoex.swaps', '--no-verify', '--config', config],
        { ...sandboxEnv(big, folder), ...bucketEnv(proxy.endpoint, `s3://${s3.bucket}/${prefix}`) },
        killWhen ? { killWhen } : {},
      );
    /** The swaps objects the listing shows, with their ETags, and the swap ids they hold. */
    const listed = async () => {
      const objects = (await listAll(client, s3.bucket, swapsPrefix)).filter((o) => o.key.endsWith('.parquet'));
      const ids: string[] = [];
      for (const o of objects)
        for (const r of await parquetRows([await getBytes(client, s3.bucket, o.key)]))
          ids.push(String((JSON.parse(r) as { id: string }).id));
      return { objects: Object.fromEntries(objects.map((o) => [o.key, o.etag])), ids: ids.sort() };
    };
    try {
      const first = await runBig();
      expect(first.code, first.stderr.slice(-1000)).toBe(0);
      const before = await listed();
      const sizes = (await listAll(client, s3.bucket, swapsPrefix)).map((o) => o.size);
      expect(Math.max(...sizes), 'a month object above one part').toBeGreaterThan(5 * 1024 * 1024);
      expect(before.ids.length).toBeGreaterThan(40_000);

      const isSwaps = (url: string) => decodeURIComponent(url).startsWith(`/${s3.bucket}/${swapsPrefix}`);
      const points: [string, (req: { method: string; url: string }) => boolean][] = [
        ['after its first part', (r) => r.method === 'PUT' && isSwaps(r.url) && /[?&]partNumber=2(&|$)/.test(r.url)],
        [
          'with every part up, before the upload is completed',
          (r) => r.method === 'POST' && isSwaps(r.url) && /[?&]uploadId=/.test(r.url),
        ],
      ];
      for (const [where, matches] of points) {
        await callControl(big.url, 'advance', { blocks: 400 });
        const seen: string[] = [];
        proxy.rule = (req) => {
          if (isSwaps(req.url)) seen.push(`${req.method} ${req.url.split('?')[1] ?? ''}`);
          return matches(req) ? 'hold' : 'pass';
        };
        const held = proxy.held();
        const r = await runBig(held);
        proxy.rule = () => 'pass';
        proxy.drop();
        expect(r.signal, `killed ${where} (${r.stderr.slice(-300)})`).toBe('SIGKILL');
        expect(
          seen.some((x) => x.startsWith('POST uploads')),
          `${where}: the upload was multipart (${seen})`,
        ).toBe(true);
        // The month being uploaded in parts shows its previous object, ETag for ETag; other months the run had put
        // whole before it may be new. Rows only grow here (no reorganization): none twice, none lost.
        const key = decodeURIComponent((await held).url.split('?')[0]!).slice(`/${s3.bucket}/`.length);
        const now = await listed();
        expect(before.objects[key], `${where}: ${key} had an object before`).toBeDefined();
        expect(now.objects[key], `${where}: ${key} shows its previous object`).toBe(before.objects[key]);
        expect(new Set(now.ids).size, `${where}: no swap twice`).toBe(now.ids.length);
        const listedNow = new Set(now.ids);
        expect(
          before.ids.filter((id) => !listedNow.has(id)),
          `${where}: no swap lost`,
        ).toEqual([]);
      }

      const last = await runBig();
      expect(last.code, last.stderr.slice(-1000)).toBe(0);
      const after = await listed();
      expect(Object.values(after.objects)).not.toEqual(Object.values(before.objects));
      expect(after.ids.length).toBeGreaterThan(before.ids.length);
      const [local, remote] = await Promise.all([
        localDigests(join(folder, 'lake')),
        bucketDigests(client, s3.bucket, prefix),
      ]);
      expect(remote.get('dodoex/swaps')).toEqual(local.get('dodoex/swaps'));
    } finally {
      await big.stop();
    }
  }, 600_000);
});
