/**
 * A route that answers the run's probe and then stops answering: the run's wait is bounded by one request's attempts,
 * not by every task's. The first requests on the route spend their attempts (`maxAttempts` of `timeoutMs` each), each
 * retry logged at warn level with its attempt; then the route is given up for the run and its other tasks fail at once
 * with the same message, which the summary prints once with what to do. The run's other routes finish, and the next run
 * completes the export exactly. A first SIGTERM stops a run that waits on such a route at once.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { type S3Proxy, startS3Proxy } from '../support/s3-store.ts';

let sb: SandboxProcess;
let proxy: S3Proxy;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '300', '--chains', '56']);
  // The HTTP proxy of the bucket tests, here in front of the upstream: it can hold a request unanswered.
  proxy = await startS3Proxy(sb.url);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-route-stall-'));
});
afterAll(async () => {
  proxy?.drop();
  await proxy?.stop();
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const ROUTE = 'schemaName=dodoex';
const CONCURRENCY = 4;
const ATTEMPTS = 3;

describe('a route that stops answering during the run', () => {
  it('is given up after one request’s attempts: its tasks fail with one line, the others finish', async () => {
    // The route's first request (the probe of its head) is answered; every later one is held, unanswered.
    let answered = 0;
    proxy.rule = (r) => (!r.url.includes(ROUTE) || answered++ === 0 ? 'pass' : 'hold');
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ timeoutMs: 1500, maxAttempts: ATTEMPTS, concurrency: CONCURRENCY }));
    const env = { ...sandboxEnv({ ...sb, url: proxy.endpoint }, join(dir, 'data')) };
    const r = await cli(['run', '--chains', 'bsc', '--no-verify', '--config', config, '--log-format', 'json'], env);
    proxy.drop();
    expect(r.code, r.stderr.slice(-3000)).toBe(1);
    const dodoex = DATASETS.filter((d) => d.name.startsWith('dodoex.')).length;
    // Held: the first tasks' attempts, at most one round of the run's concurrency; not every task's eight.
    const held = proxy.seen.filter((s) => s.url.includes(ROUTE)).length - 1;
    expect(held).toBeGreaterThanOrEqual(ATTEMPTS);
    expect(held).toBeLessThanOrEqual(CONCURRENCY * ATTEMPTS);
    const events = r.stderr
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    // Each wait is a warning (a terminal shows it) with its attempt of how many.
    const retries = events.filter((e) => e.event === 'retry');
    expect(retries.length).toBeGreaterThan(0);
    for (const e of retries) expect([e.level, e.kind, e.of]).toEqual([40, 'timeout', ATTEMPTS]);
    const failed = events.filter((e) => e.event === 'task-failed');
    expect(failed).toHaveLength(dodoex);
    expect(new Set(failed.map((e) => String(e.error).replace(/^\S+ on bsc: /, ''))).size).toBe(1);
    const done = events.filter((e) => e.event === 'task-done').map((e) => String(e.dataset));
    expect(done.some((d) => d.startsWith('token.')) && done.some((d) => d.startsWith('mine.'))).toBe(true);
    // The summary: one line for the cause, with the tasks it hit and what to do.
    const lines = r.stdout.split('\n').filter((l) => l.startsWith('FAILED'));
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(
          `^FAILED ${dodoex} tasks \\(${dodoex} datasets on bsc\\): no answer within 1500 ms from http://127\\.0\\.0\\.1:\\d+/subgraph/graphql\\?chainId=56&schemaName=dodoex&apikey=\\*\\*\\* \\(gave up after ${ATTEMPTS} attempts\\); the route stopped answering during the run and is given up until the next run: check the service's status, or raise timeoutMs \\(config\\) if its answers are only slow$`,
        ),
      ),
    ]);
    expect(r.stdout + r.stderr).not.toContain(sb.apiKey);

    // The route answers again: the next run completes the export, exactly.
    proxy.rule = () => 'pass';
    const next = await cli(['run', '--chains', 'bsc', '--no-verify'], env);
    expect(next.code, next.stderr.slice(-3000)).toBe(0);
    const check = await compareWithSandbox(sb, join(dir, 'data'), [56]);
    expect(check.mismatches).toEqual([]);
    expect(check.rows).toBeGreaterThan(0);
  }, 120_000);

  it('a first SIGTERM stops a run waiting on it, by the signal, not after its time limits; the next run is exact', async () => {
    // The defaults: a held request would be retried 8 times, 30 s each. The signal comes once one is held.
    let answered = 0;
    proxy.rule = (r) => (!r.url.includes(ROUTE) || answered++ === 0 ? 'pass' : 'hold');
    const data = join(dir, 'stopped');
    const env = { ...sandboxEnv({ ...sb, url: proxy.endpoint }, data) };
    const r = await cli(['run', '--chains', 'bsc', '--no-verify', '--log-format', 'json'], env, {
      termOn: proxy.held(),
    });
    proxy.rule = () => 'pass';
    proxy.drop();
    // Ended by the signal (a shell reports 143), not by a failure after the time limits, nor by a second signal.
    expect([r.code, r.signal], r.stderr.slice(-2000)).toEqual([null, 'SIGTERM']);
    expect(r.stderr).toMatch(/"event":"stop-requested"/);
    expect(r.stderr).not.toMatch(/"event":"retry"/);
    const next = await cli(['run', '--chains', 'bsc', '--no-verify'], env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect((await compareWithSandbox(sb, data, [56])).mismatches).toEqual([]);
  }, 120_000);
});
