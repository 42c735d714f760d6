/**
 * The lake on a bucket, against a real S3-compatible server (s3rver, its own process) and a sandbox process. The
 * oracle is an export of the same upstream to a local lake, read by the tests' own S3 client and by hyparquet, not by
 * the exporter's code: per table, the digests of the rows of the bucket equal those of the local lake after a backfill
 * and after each of two incremental runs. A run from an empty data folder resumes from the bucket; `restore` rebuilds
 * a warehouse equal to the one that published; bad buckets fail with one line naming the bucket and the fix.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { lakeTables } from '../../src/lake/lake-ddl.ts';
import { callControl, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import {
  bucketDigests,
  bucketEnv,
  getBytes,
  type Listed,
  listAll,
  localDigests,
  type S3Proxy,
  type S3Server,
  s3ErrorBody,
  startS3Proxy,
  startS3rver,
  testClient,
} from '../support/s3-store.ts';

const CHAINS = 'bsc,polygon';
const PREFIX = 'team/pool-export';

let sb: SandboxProcess;
let s3: S3Server;
let proxy: S3Proxy;
let dir: string;
const data = (name: string) => join(dir, name);
const client = () => testClient(s3.endpoint);

beforeAll(async () => {
  [sb, s3] = await Promise.all([startSandbox(['--scale', '400']), startS3rver()]);
  proxy = await startS3Proxy(s3.endpoint);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-bucket-'));
});
afterAll(async () => {
  await proxy?.stop();
  await Promise.all([sb?.stop(), s3?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/**
 * A run of the two chains, to the local lake of `name` or, with `bucket`, to the bucket lake; without its own
 * verification unless `verify`.
 */
async function run(name: string, opts: { bucket?: boolean; endpoint?: string; verify?: boolean } = {}) {
  const env = {
    ...sandboxEnv(sb, data(name)),
    ...(opts.bucket ? bucketEnv(opts.endpoint ?? s3.endpoint, `s3://${s3.bucket}/${PREFIX}`) : {}),
  };
  const r = await cli(
    ['run', '--chains', CHAINS, ...(opts.verify ? [] : ['--no-verify']), '--log-format', 'json'],
    env,
  );
  if (r.code !== 0) throw new Error(`run of ${name} ended ${r.code}: ${r.stderr.slice(-2000)}`);
  const events = r.stderr
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
  const requests = Number(/(\d+) requests/.exec(r.stdout)?.[1]);
  return { ...r, events, requests };
}

/** New blocks on every chain (bsc: 3 s each, polygon: 2 s); resolves with each chain's new head. */
const advance = (blocks: number) =>
  callControl<{ chains: { chainId: number; timestamp: number }[] }>(sb.url, 'advance', { blocks });

/** The bucket's objects by key below the prefix. */
async function listing(): Promise<Map<string, Listed>> {
  return new Map((await listAll(client(), s3.bucket, `${PREFIX}/`)).map((o) => [o.key.slice(PREFIX.length + 1), o]));
}

describe('a bucket lake', () => {
  it('holds after a backfill and two incremental runs the rows of a local lake of the same upstream, table for table, each month (under 250,000 rows here) one object that its manifest names', async () => {
    for (let step = 0; step < 3; step++) {
      if (step > 0) expect((await advance(900)).chains.length).toBeGreaterThan(1);
      await run('local');
      const b = await run('bucket', { bucket: true });
      const published = b.events.find((e) => e.event === 'lake-published');
      expect(published, `step ${step}: the run published`).toMatchObject({ state: true });
      const [local, remote] = await Promise.all([
        localDigests(join(data('local'), 'lake')),
        bucketDigests(client(), s3.bucket, PREFIX),
      ]);
      expect(remote.size, `step ${step}: tables`).toBeGreaterThan(30);
      expect(Object.fromEntries(remote), `step ${step}`).toEqual(Object.fromEntries(local));
    }
    const objects = await listing();
    // Each month partition is one object (a file of under 250,000 rows); each table's manifest names exactly its objects, with their ETags.
    const months = [...objects.keys()].filter((k) => k.includes('/month='));
    const partitions = new Set(months.map((k) => k.slice(0, k.lastIndexOf('/'))));
    expect(months.length).toBe(partitions.size);
    const manifests = [...objects.keys()].filter((k) => k.endsWith('/_manifest.json'));
    for (const m of manifests) {
      const table = m.slice(0, -'/_manifest.json'.length);
      const manifest = JSON.parse(Buffer.from(await getBytes(client(), s3.bucket, `${PREFIX}/${m}`)).toString());
      const named = Object.fromEntries(
        (manifest.objects as { key: string; etag: string }[]).map((o) => [o.key, o.etag]),
      );
      const listed = Object.fromEntries(
        [...objects].filter(([k]) => k.startsWith(`${table}/`) && k.endsWith('.parquet')).map(([k, o]) => [k, o.etag]),
      );
      expect(named, m).toEqual(listed);
    }
    const tables = new Set(
      [...objects.keys()]
        .filter((k) => k.endsWith('.parquet') && !k.startsWith('_state/'))
        .map((k) => k.split('/').slice(0, 2).join('/')),
    );
    expect(manifests.length).toBe(tables.size);
    expect(objects.has('_state/head.json')).toBe(true);
  }, 300_000);

  it('gives lake ddl the bucket URL of the config, and DuckDB views only for the table paths that hold objects', async () => {
    // A reader's folder: no warehouse, no local lake; the URL comes from the environment's lake.url.
    const env = { ...sandboxEnv(sb, data('ddl-reader')), ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/${PREFIX}`) };
    const athena = await cli(['lake', 'ddl', '--engine', 'athena'], env);
    expect(athena.code, athena.stderr).toBe(0);
    expect(athena.stdout).toContain(`LOCATION 's3://${s3.bucket}/${PREFIX}/dodoex/swaps/'`);
    const duck = await cli(['lake', 'ddl', '--engine', 'duckdb'], env);
    expect(duck.code, duck.stderr).toBe(0);
    // The store's endpoint (AWS_ENDPOINT_URL_S3), path-style and plain http, as the exporter reaches it.
    const { host } = new URL(s3.endpoint);
    expect(duck.stdout).toContain(
      `CREATE SECRET IF NOT EXISTS pool_export_lake (TYPE s3, PROVIDER credential_chain, ENDPOINT '${host}', URL_STYLE 'path', USE_SSL false, REGION 'us-east-1');`,
    );
    const bad = await cli(['lake', 'ddl', '--engine', 'duckdb'], { ...env, AWS_ENDPOINT_URL_S3: 'localhost:9000' });
    expect([bad.code, bad.stderr]).toEqual([
      2,
      expect.stringMatching(/AWS_ENDPOINT_URL_S3 .* must be an http or https URL/),
    ]);
    const viewed = [...duck.stdout.matchAll(/read_parquet\('s3:\/\/[^/]+\/[^/]+\/[^/]+\/([^/]+\/[^/]+)\//g)].map(
      (m) => m[1],
    );
    const emptied = [...duck.stdout.matchAll(/^-- (\S+) holds no file yet/gm)].map((m) => m[1]);
    const holding = [
      ...new Set(
        [...(await listing()).keys()]
          .filter((k) => k.endsWith('.parquet') && !k.startsWith('_state/'))
          .map((k) => k.split('/').slice(0, 2).join('/')),
      ),
    ];
    expect(viewed.sort()).toEqual(holding.sort());
    expect(emptied.length).toBeGreaterThan(0);
    expect(emptied.filter((p) => holding.includes(p!))).toEqual([]);
    expect(viewed.length + emptied.length).toBe(lakeTables().length);
  }, 60_000);

  it('is resumed by a run from an empty data folder, with the requests of an incremental run, rewriting no month the re-read window cannot reach', async () => {
    const before = await listing();
    const heads = await advance(900);
    const local = await run('local');
    // Verified, so that the state it publishes holds its verifications (the restore test compares them).
    const fresh = await run('fresh', { bucket: true, verify: true });
    const restored = fresh.events.find((e) => e.event === 'restored');
    expect(restored, fresh.stderr.slice(-1000)).toBeDefined();
    // An incremental run's requests, not a backfill's (which is several times more).
    expect(Math.abs(fresh.requests - local.requests)).toBeLessThanOrEqual(Math.max(5, local.requests * 0.1));
    const after = await listing();
    // Months that ended before the re-read window (an hour before the upstream's head, in the sandbox's time) began.
    const earliest = Math.min(...heads.chains.map((c) => c.timestamp));
    const openFrom = new Date((earliest - 3600) * 1000).toISOString().slice(0, 7);
    const old = [...before].filter(([key]) => {
      const m = /\/month=(\d{4}-\d{2})\//.exec(key);
      return m !== null && m[1]! < openFrom;
    });
    expect(old.length, 'months older than the window').toBeGreaterThan(10);
    const rewritten = old.filter(([key, o]) => JSON.stringify(after.get(key)) !== JSON.stringify(o));
    expect(
      rewritten.map(([key, o]) => `${key} ${o.etag === after.get(key)?.etag ? 'same bytes' : 'new bytes'}`),
    ).toEqual([]);
    // And the rows are those of the local lake.
    const [l, r] = await Promise.all([
      localDigests(join(data('local'), 'lake')),
      bucketDigests(client(), s3.bucket, PREFIX),
    ]);
    expect(Object.fromEntries(r)).toEqual(Object.fromEntries(l));
  }, 300_000);

  it('stops a data folder that is not the last to publish from overwriting the bucket', async () => {
    // `fresh` published last: `bucket`, its former writer, is refused before it fetches anything.
    const env = { ...sandboxEnv(sb, data('bucket')), ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/${PREFIX}`) };
    const r = await cli(['run', '--chains', CHAINS, '--no-verify'], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/s3:\/\/lake\/team\/pool-export was last published by run .* another data folder writes/);
  }, 60_000);

  it('is restored into a warehouse equal to the one that published it', async () => {
    const env = { ...sandboxEnv(sb, data('restored')), ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/${PREFIX}`) };
    const r = await cli(['restore'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^restored the warehouse of .* from s3:\/\/lake\/team\/pool-export/);
    const tables = async (name: string) => {
      const w = await Warehouse.open(data(name), { readOnly: true });
      try {
        const out: Record<string, unknown> = {};
        for (const ds of DATASETS) {
          const has = await w.all(
            `SELECT count(*) AS n FROM duckdb_tables() WHERE schema_name || '.' || table_name = '${ds.table}'`,
          );
          if (Number(has[0]!.n) === 0) continue;
          const [d] = await w.all(`SELECT count(*) AS n, sum(hash(t)) AS h FROM (SELECT * FROM ${qt(ds.table)}) t`);
          out[ds.table] = { n: Number(d!.n), h: String(d!.h) };
        }
        // The verifications too: a run verifies before its lake step publishes the state, so its own are in it.
        for (const t of ['checkpoints', 'runs', 'run_tasks', 'verifications'])
          out[t] = (await w.all(`SELECT count(*) AS n, sum(hash(t)) AS h FROM _pool_export.${t} t`)).map(
            (x) => `${x.n}:${x.h}`,
          );
        return out;
      } finally {
        await w.close();
      }
    };
    const [mine, theirs] = [await tables('restored'), await tables('fresh')];
    expect(Object.keys(theirs).length).toBeGreaterThan(30);
    expect(theirs.verifications).toEqual([expect.stringMatching(/^[1-9]\d*:/)]);
    // Every table of the publisher, equal; the restore also makes the tables of datasets no run has filled (empty).
    expect(Object.fromEntries(Object.keys(theirs).map((t) => [t, mine[t]]))).toEqual(theirs);
    for (const t of Object.keys(mine)) if (!(t in theirs)) expect(mine[t], t).toEqual({ n: 0, h: 'null' });
    // A second restore refuses to overwrite the warehouse it made.
    const again = await cli(['restore'], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/warehouse\.duckdb exists/);
  }, 120_000);

  describe('refuses bad buckets with one line naming the bucket and the fix, and no secret', () => {
    const SECRET = 'sEcReT-3f9a1c77e2b04d5e';
    const attempt = async (env: Record<string, string>, args = ['run', '--chains', 'bsc', '--no-verify']) => {
      const name = `bad-${Math.random().toString(36).slice(2)}`;
      const r = await cli(args, { ...sandboxEnv(sb, data(name)), ...env });
      const lines = r.stderr.trim().split('\n');
      expect(r.stderr + r.stdout).not.toContain(SECRET);
      // Nothing was fetched from the upstream, nothing stored.
      expect(existsSync(join(data(name), 'warehouse.duckdb'))).toBe(false);
      return { code: r.code, last: lines.at(-1)! };
    };
    const env = (over: Record<string, string> = {}) => ({
      ...bucketEnv(s3.endpoint, `s3://${s3.bucket}/${PREFIX}`, { id: 'S3RVER', secret: SECRET }),
      ...over,
    });

    it('an unreachable endpoint', async () => {
      const r = await attempt(env({ AWS_ENDPOINT_URL_S3: 'http://127.0.0.1:9' }));
      expect(r).toEqual({
        code: 1,
        last: 'pool-export: the bucket lake s3://lake/team/pool-export cannot be reached at http://127.0.0.1:9 (ECONNREFUSED); check AWS_ENDPOINT_URL_S3 (or AWS_ENDPOINT_URL) and the network',
      });
    }, 60_000);

    it('wrong credentials', async () => {
      const r = await attempt(env({ AWS_ACCESS_KEY_ID: 'AKIAWRONG' }));
      expect(r.code).toBe(1);
      expect(r.last).toMatch(/credentials for s3:\/\/lake\/team\/pool-export were refused \(InvalidAccessKeyId\)/);
    }, 60_000);

    it('a missing bucket', async () => {
      const r = await attempt(env({ POOL_EXPORT_LAKE_URL: 's3://no-such-bucket/x' }));
      expect(r.code).toBe(1);
      expect(r.last).toMatch(/the bucket "no-such-bucket" does not exist at .*; create it, or fix lake.url/);
    }, 60_000);

    it('a prefix access is denied to', async () => {
      proxy.rule = (req) =>
        req.url.includes('prefix=team%2Fdenied') || req.url.includes('/team/denied/')
          ? { status: 403, body: s3ErrorBody('AccessDenied', 'Access Denied') }
          : 'pass';
      try {
        const r = await attempt(
          env({ AWS_ENDPOINT_URL_S3: proxy.endpoint, POOL_EXPORT_LAKE_URL: `s3://${s3.bucket}/team/denied` }),
        );
        expect(r.code).toBe(1);
        expect(r.last).toMatch(
          /access to s3:\/\/lake\/team\/denied is denied \(AccessDenied\); the credentials need s3:ListBucket/,
        );
      } finally {
        proxy.rule = () => 'pass';
      }
    }, 60_000);

    it('a local folder given as the lake', async () => {
      const r = await attempt(env({ POOL_EXPORT_LAKE_URL: join(dir, 'somewhere') }));
      expect(r.code).toBe(2);
      expect(r.last).toMatch(/POOL_EXPORT_LAKE_URL is a local folder .*: a local lake is the data folder's lake\//);
    }, 60_000);
  });
});
