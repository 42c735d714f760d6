/**
 * A bucket that accepts connections and never answers, and one that stalls mid-publish: every wait has a bound. A run
 * whose bucket never answers fails within its request time limits, with one line naming the bucket and its endpoint
 * and none of the SDK's own warnings; a run held by the bucket during its publish stops at the first SIGTERM, and the
 * next run completes the publish.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { type SilentServer, silentServer } from '../support/ports.ts';
import { bucketEnv, type S3Proxy, type S3Server, startS3Proxy, startS3rver } from '../support/s3-store.ts';

let sb: SandboxProcess;
let s3: S3Server;
let proxy: S3Proxy;
let silent: SilentServer;
let dir: string;

beforeAll(async () => {
  [sb, s3] = await Promise.all([startSandbox(['--scale', '300', '--chains', '56']), startS3rver()]);
  proxy = await startS3Proxy(s3.endpoint);
  // A store that hangs.
  silent = await silentServer();
  dir = mkdtempSync(join(tmpdir(), 'pool-export-bucket-stall-'));
});
afterAll(async () => {
  await silent?.close();
  await proxy?.stop();
  await Promise.all([sb?.stop(), s3?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

const ARGS = ['run', '--chains', 'bsc', '--jobs', 'liquidity', '--no-verify'];

describe('a bucket that does not answer', () => {
  it('fails the run within its time limits, with one line naming the bucket, its endpoint and the fix', async () => {
    const endpoint = `http://127.0.0.1:${silent.port}`;
    const r = await cli(ARGS, { ...sandboxEnv(sb, join(dir, 'silent')), ...bucketEnv(endpoint, 's3://lake/pe') });
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(silent.sockets.length).toBeGreaterThan(0);
    expect(r.stderr.trim().split('\n')).toEqual([
      `pool-export: the bucket lake s3://lake/pe at ${endpoint} accepted the connection but did not answer within 10 s, tried again; check that AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) names an S3 endpoint, and the network`,
    ]);
  }, 90_000);

  it('stops a run held by the bucket during its publish at the first SIGTERM; the next run completes the publish', async () => {
    const env = { ...sandboxEnv(sb, join(dir, 'held')), ...bucketEnv(proxy.endpoint, `s3://${s3.bucket}/pe`) };
    // The first upload of a Parquet object is held, unanswered, for as long as the run waits.
    proxy.rule = (req) => (req.method === 'PUT' && /\.parquet/.test(req.url) ? 'hold' : 'pass');
    const held = proxy.held();
    const r = await cli(ARGS, env, { termOn: held });
    proxy.rule = () => 'pass';
    proxy.drop();
    // Ended by the signal (a shell reports 143), not by the held request's time limit nor by a second signal.
    expect([r.code, r.signal], r.stderr.slice(-2000)).toEqual([null, 'SIGTERM']);
    expect(r.stderr).toMatch(/"event":"stop-requested"/);
    expect(r.stderr).toMatch(/"event":"lake-deferred".*stopped during the lake write/);
    const next = await cli([...ARGS, '--log-format', 'json'], env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect(next.stderr).toMatch(/"event":"lake-published".*"state":true/);
  }, 120_000);
});
