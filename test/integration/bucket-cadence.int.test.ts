/**
 * A bucket lake published on a cadence (`lake.publishEvery`), against a real S3-compatible server (s3rver, its own
 * process, behind a proxy that records and can refuse requests) and a sandbox process: runs within the cadence write
 * the warehouse and the local lake and send the bucket nothing; the first run after it sends what the others left, so
 * that the bucket then holds, table for table, the rows of the local lake (read by the tests' own S3 client and
 * hyparquet); a publish that failed is taken up by the next run whatever the cadence; and `schedule` publishes what its
 * runs left as it stops on a signal. Time passing is played by moving the data folder's record of the last publish
 * back, not by waiting. And nothing is lost through 12 SIGKILLs with the cadence on, nor by a run resumed from an empty
 * data folder after a kill between two publishes.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { dataFolder } from '../../src/config/data-folder.ts';
import { callControl, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import {
  bucketDigests,
  bucketEnv,
  getBytes,
  localDigests,
  type S3Proxy,
  type S3Server,
  s3ErrorBody,
  startS3Proxy,
  startS3rver,
  testClient,
} from '../support/s3-store.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

const PREFIX = 'cadence';

let sb: SandboxProcess;
let s3: S3Server;
let proxy: S3Proxy;
let dir: string;
let data: string;
let env: Record<string, string>;
let config: string;

beforeAll(async () => {
  [sb, s3] = await Promise.all([startSandbox(['--scale', '300', '--chains', '56']), startS3rver()]);
  proxy = await startS3Proxy(s3.endpoint);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-cadence-'));
  data = join(dir, 'data');
  config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ chains: ['bsc'], lake: { publishEvery: '1h' } }));
  env = {
    ...sandboxEnv(sb, data),
    ...bucketEnv(proxy.endpoint, `s3://${s3.bucket}/${PREFIX}`),
  };
});
afterAll(async () => {
  await proxy?.stop();
  await Promise.all([sb?.stop(), s3?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** The writes the bucket was sent since `from` (an index into the proxy's log): PUTs, POSTs and DELETEs. */
const writesSince = (from: number) => proxy.seen.slice(from).filter((r) => r.method !== 'GET' && r.method !== 'HEAD');

/** A run of the jobs of the config's chain; its exit code, its log events, and the bucket writes it sent. */
async function run() {
  const from = proxy.seen.length;
  const r = await cli(['run', '--config', config, '--no-verify', '--log-format', 'json'], env);
  const events = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { event: string; runId?: string });
  return { ...r, events, writes: writesSince(from) };
}

const advance = (blocks: number) => callControl(sb.url, 'advance', { blocks });

/** Moves the record of the last publish back by `secs` (time passing), or marks it just now. */
function lastPublishAgo(secs: number): void {
  const file = dataFolder(data).bucketSync;
  const s = JSON.parse(readFileSync(file, 'utf8')) as { publishedAt: number };
  s.publishedAt = Date.now() - secs * 1000;
  writeFileSync(file, JSON.stringify(s));
}

/** The run that last published the bucket's state. */
async function headRun(): Promise<string> {
  const body = await getBytes(testClient(s3.endpoint), s3.bucket, `${PREFIX}/_state/head.json`);
  return (JSON.parse(Buffer.from(body).toString('utf8')) as { runId: string }).runId;
}

/** The bucket's tables equal the local lake's, row for row. */
async function bucketHoldsLocalLake(): Promise<void> {
  const [bucket, local] = await Promise.all([
    bucketDigests(testClient(s3.endpoint), s3.bucket, PREFIX),
    localDigests(dataFolder(data).lake),
  ]);
  expect(bucket).toEqual(local);
}

async function status(): Promise<{ bucket: { behind: boolean; publishedAt: string | null } }> {
  const r = await cli(['status', '--config', config, '--json', '--offline'], env);
  return JSON.parse(r.stdout);
}

describe('a bucket lake published on a cadence', () => {
  it('sends nothing within the cadence, what the runs left after it, and takes up a failed publish at once', async () => {
    // The first run publishes: the bucket was never published from this data folder.
    const first = await run();
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    expect(first.writes.length).toBeGreaterThan(0);
    await bucketHoldsLocalLake();
    const published = await headRun();
    expect((await status()).bucket.behind).toBe(false);

    // Within the hour: the warehouse and the local lake move on, the bucket is sent nothing.
    await advance(40);
    const within = await run();
    expect(within.code, within.stderr.slice(-2000)).toBe(0);
    expect(within.events.map((e) => e.event)).toContain('lake-publish-deferred');
    expect(within.writes).toEqual([]);
    expect(await headRun()).toBe(published);
    const behind = await status();
    expect(behind.bucket.behind).toBe(true);
    // The local lake has rows the bucket lacks.
    const [b, l] = await Promise.all([
      bucketDigests(testClient(s3.endpoint), s3.bucket, PREFIX),
      localDigests(dataFolder(data).lake),
    ]);
    expect(b).not.toEqual(l);

    // An hour later: the next run, though it brings nothing new, sends what the last one left.
    lastPublishAgo(3700);
    const after = await run();
    expect(after.code, after.stderr.slice(-2000)).toBe(0);
    expect(after.writes.length).toBeGreaterThan(0);
    await bucketHoldsLocalLake();
    expect(await headRun()).not.toBe(published);
    expect((await status()).bucket.behind).toBe(false);

    // A publish that fails (every write refused) ...
    await advance(40);
    lastPublishAgo(3700);
    proxy.rule = (r) =>
      r.method === 'PUT' || r.method === 'POST'
        ? { status: 503, body: s3ErrorBody('ServiceUnavailable', 'refused by the test') }
        : 'pass';
    let failed: Awaited<ReturnType<typeof run>>;
    try {
      failed = await run();
    } finally {
      proxy.rule = () => 'pass';
    }
    expect(failed.code).not.toBe(0);
    expect(failed.stderr).toMatch(/"event":"lake-failed"/);
    // ... is taken up by the next run, though the record says the last publish was just now.
    lastPublishAgo(0);
    const retried = await run();
    expect(retried.code, retried.stderr.slice(-2000)).toBe(0);
    expect(retried.events.map((e) => e.event)).not.toContain('lake-publish-deferred');
    await bucketHoldsLocalLake();
  }, 240_000);

  it('publishes what its runs left as schedule stops on a signal', async () => {
    // Published just now: every run of the schedule is within the hour.
    lastPublishAgo(0);
    const before = await headRun();
    await advance(40);
    let deferred = 0;
    const r = await cli(
      ['schedule', '--config', config, '--every', '1s', '--run-now', '--no-verify', '--log-format', 'json'],
      env,
      {
        // Stopped once a run wrote the local lake and left the bucket behind.
        termWhen: (stderr) => (deferred = (stderr.match(/"event":"lake-publish-deferred"/g) ?? []).length) >= 1,
        killAfterMs: 120_000,
      },
    );
    expect(deferred).toBeGreaterThanOrEqual(1);
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stderr).toMatch(/"event":"lake-published-on-stop"/);
    expect(await headRun()).not.toBe(before);
    await bucketHoldsLocalLake();
    expect((await status()).bucket.behind).toBe(false);
  }, 180_000);

  it('ends exact through 12 SIGKILLs with the cadence on, and a run from an empty data folder resumes from the last publish, exact', async () => {
    const folder = join(dir, 'killed');
    const killedEnv = { ...env, ...sandboxEnv(sb, folder), ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/killed`) };
    const runIn = (e: Record<string, string>, opts: Parameters<typeof cli>[2] = {}) =>
      cli(['run', '--config', config, '--no-verify'], e, opts);
    const first = await runIn(killedEnv);
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    // Each run killed once the sandbox has served the next number of its requests (an incremental run of the chain
    // makes about ten): before, during and after its batches, its commits and its lake write. Every run is within
    // the hour of the first run's publish, so the bucket stays at it all along.
    let killed = 0;
    for (let i = 0; i < 12; i++) {
      const n = 1 + (i % 9);
      await advance(20);
      await sb.control('stats', {});
      const r = await runIn(killedEnv, { killWhen: waitForRequests(sb, n) });
      expect(r.signal === 'SIGKILL' || r.code === 0, `killed after ${n} requests: ${r.stderr.slice(-1500)}`).toBe(true);
      if (r.signal === 'SIGKILL') killed++;
    }
    expect(killed).toBeGreaterThanOrEqual(10);
    const final = await runIn(killedEnv);
    expect(final.code, final.stderr.slice(-2000)).toBe(0);
    expect((await compareWithSandbox(sb, folder, [56])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(folder)).toEqual([]);
    // The data folder is lost between two publishes: a run from an empty one restores the bucket's last publish (the
    // first run's) and reads again what the bucket lacks.
    const fresh = join(dir, 'fresh');
    const resumed = await runIn({
      ...killedEnv,
      ...sandboxEnv(sb, fresh),
      ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/killed`),
    });
    expect(resumed.code, resumed.stderr.slice(-2000)).toBe(0);
    expect(resumed.stderr).toMatch(/restored/);
    expect((await compareWithSandbox(sb, fresh, [56])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(fresh)).toEqual([]);
  }, 300_000);
});
