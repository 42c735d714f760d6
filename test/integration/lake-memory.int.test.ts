/**
 * A lake write that runs out of DuckDB's memory (played by `POOL_EXPORT_FAULT_LAKE_MEMORY`, a memory limit for the lake
 * step alone, so that the run's tasks store their rows as usual): the run fails with one line naming
 * `duckdbMemoryLimit`, its figure and where it came from; the entries that failed stay listed, so the next run
 * completes the lake; and a bucket lake publishes what the other entries wrote but not the exporter's state, so that a
 * run resumed from the bucket in an empty data folder fetches again the rows the bucket lacks. The oracle is a local
 * lake of the same upstream, read by the tests' own S3 client and hyparquet.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { callControl, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import {
  bucketDigests,
  bucketEnv,
  getBytes,
  localDigests,
  type S3Server,
  startS3rver,
  testClient,
} from '../support/s3-store.ts';

const PREFIX = 'pe';
/** The lake's table paths whose rows are the upstream's at the head, whichever runs read them. */
const UPSTREAM_TABLES = new Set(
  DATASETS.filter((d) => d.kind === 'event' || d.kind === 'bucket' || d.kind === 'mutable').map((d) =>
    d.table.replace('.', '/'),
  ),
);
/** Too little for DuckDB to sort and write any table of the lake, enough to set once the warehouse is checkpointed. */
const SQUEEZE = { POOL_EXPORT_FAULT_LAKE_MEMORY: '8MB' };

let sb: SandboxProcess;
let s3: S3Server;
let dir: string;
let config: string;
const data = (name: string) => join(dir, name);

beforeAll(async () => {
  [sb, s3] = await Promise.all([startSandbox(['--scale', '400']), startS3rver()]);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-lake-memory-'));
  // A re-read window of a minute: the new rows of the failed run lie before it when the next run starts, so a run that
  // trusted a state published past them would never fetch them again.
  config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ reorgWindowSecs: 60 }));
});
afterAll(async () => {
  await Promise.all([sb?.stop(), s3?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** A run of bsc into the data folder `name`: its local lake, or the bucket lake; `env` adds to the environment. */
async function run(name: string, opts: { bucket?: boolean; env?: Record<string, string> } = {}) {
  const env = {
    ...sandboxEnv(sb, data(name)),
    ...(opts.bucket ? bucketEnv(s3.endpoint, `s3://${s3.bucket}/${PREFIX}`) : {}),
    ...opts.env,
  };
  const r = await cli(['run', '--chains', 'bsc', '--config', config, '--no-verify', '--log-format', 'json'], env);
  const events = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...r, events };
}

/** The run that published the bucket's state last. */
async function head(): Promise<string> {
  const bytes = await getBytes(testClient(s3.endpoint), s3.bucket, `${PREFIX}/_state/head.json`);
  return (JSON.parse(Buffer.from(bytes).toString()) as { runId: string }).runId;
}

/** The one line a failed lake write prints, checked: the setting, its figure and source, and no DuckDB SQL advice. */
function expectMemoryLine(stdout: string): void {
  const failed = stdout.split('\n').filter((l) => l.startsWith('FAILED'));
  expect(failed, stdout).toHaveLength(1);
  expect(failed[0]).toMatch(
    /^FAILED the Parquet lake was not brought up to date \(.*\): dodoex\.\w+ on bsc \(and \d+ more of its entries\): DuckDB ran out of memory under duckdbMemoryLimit \d+MiB \(auto: .*\): (failed|could not) .*; set duckdbMemoryLimit in the config file/,
  );
  expect(failed[0]).not.toMatch(/\\x0a|Possible solutions|SET threads/);
}

describe('the default memory limit', () => {
  it('of a host whose control group sets 512 MiB (204MiB) exports a chain exactly, every job, and writes its lake', async () => {
    const host = { POOL_EXPORT_HOST_FILES: resolve('test/fixtures/hosts/limit-512mib') };
    const dry = await cli(['run', '--chains', 'bsc', '--dry-run'], { ...sandboxEnv(sb, data('limited')), ...host });
    expect(dry.stdout).toMatch(
      /^DuckDB memory limit: 204MiB \(auto: 40% of the control group's memory limit, 512 MiB; duckdbMemoryLimit in the config file sets it\)$/m,
    );
    const r = await run('limited', { env: host });
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.events[0]).toMatchObject({ event: 'run-start', memoryLimit: '204MiB' });
    expect((await compareWithSandbox(sb, data('limited'), [56])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data('limited'))).toEqual([]);
    // And the tier's own host, without a limit: a quarter of its 8 GiB.
    const free = await cli(['run', '--dry-run'], sandboxEnv(sb, data('limited')));
    expect(free.stdout).toMatch(
      /^DuckDB memory limit: 2048MiB \(auto: 25% of the machine's 8\.0 GiB, no control group/m,
    );
  }, 120_000);
});

describe('a lake write out of memory', () => {
  it('fails the run with one line, and the next run completes the local lake from the warehouse', async () => {
    const failed = await run('local-squeezed', { env: SQUEEZE });
    expect(failed.code, failed.stderr.slice(-2000)).toBe(1);
    expectMemoryLine(failed.stdout);
    expect((await lakeBehindWarehouse(data('local-squeezed'))).length).toBeGreaterThan(10);
    const next = await run('local-squeezed');
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect(await lakeBehindWarehouse(data('local-squeezed'))).toEqual([]);
  }, 120_000);

  it('publishes to a bucket what it wrote but not the state, so a run from an empty data folder fetches what the bucket lacks', async () => {
    const first = await run('bucket', { bucket: true });
    expect(first.code, first.stderr.slice(-2000)).toBe(0);
    // The oracle follows the same upstream to a local lake, a run at each of the same heads.
    expect((await run('oracle')).code).toBe(0);
    const runA = await head();
    // 3000 blocks of bsc (3 s each): two and a half hours, far past the re-read window.
    await callControl(sb.url, 'advance', { blocks: 3000 });
    const squeezed = await run('bucket', { bucket: true, env: SQUEEZE });
    expect(squeezed.code, squeezed.stderr.slice(-2000)).toBe(1);
    expectMemoryLine(squeezed.stdout);
    const published = squeezed.events.find((e) => e.event === 'lake-published');
    // The entries that did fit went up; the state did not, and the head is the first run's still.
    expect(published, squeezed.stderr.slice(-2000)).toMatchObject({ state: false });
    expect(await head()).toBe(runA);
    const runB = String(squeezed.events.find((e) => e.event === 'run-start')?.runId);
    expect(readFileSync(join(data('bucket'), 'warehouse.duckdb')).length).toBeGreaterThan(0);

    const fresh = await run('fresh', { bucket: true });
    expect(fresh.code, fresh.stderr.slice(-2000)).toBe(0);
    expect(fresh.events.find((e) => e.event === 'restored')).toMatchObject({ publishedBy: runA });
    expect(runB).not.toBe(runA);
    const local = await run('oracle');
    expect(local.code, local.stderr.slice(-2000)).toBe(0);
    const [l, b] = await Promise.all([
      localDigests(join(data('oracle'), 'lake')),
      bucketDigests(testClient(s3.endpoint), s3.bucket, PREFIX),
    ]);
    // Events, buckets and the state of mutable entities: what the upstream holds at the head. Snapshots and history
    // record each run's reads, and the bucket's runs were others than the oracle's.
    const upstream = (m: typeof l) => Object.fromEntries([...m].filter(([t]) => UPSTREAM_TABLES.has(t)));
    expect(Object.keys(upstream(b)).length).toBeGreaterThan(20);
    expect(upstream(b)).toEqual(upstream(l));
  }, 300_000);
});
