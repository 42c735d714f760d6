/**
 * A subgraph of any schema exported as DODO's datasets are: `runOnce` in-process against a real sandbox process that
 * serves the test schema (`--subgraph`), with real DuckDB files. Checked against the sandbox's own rows
 * (`compareWithSandbox`: count, digest and every typed column against the upstream text through decimal.js), after the
 * backfill, and again after new blocks and a reorganisation that rewrites stored rows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS, type Dataset } from '../../src/catalog/catalog.ts';
import { subgraphJob } from '../../src/catalog/subgraphs.ts';
import { loadConfig } from '../../src/config/config.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import type { ProgressSink } from '../../src/export/run-args.ts';
import { runOnce } from '../../src/pipeline/run.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { UpstreamClient } from '../../src/upstream/client.ts';
import { repair, repairTargets } from '../../src/verify/repair.ts';
import { IDS_IDENTITY } from '../../src/verify/subgraph-ids.ts';
import { verify } from '../../src/verify/verify.ts';
import { progressOn, sandboxEnv } from '../support/cli-process.ts';
import { EVERY_TYPE_SCHEMA, everyTypeDatasets } from '../support/every-type.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { allRows } from '../support/sandbox-client.ts';

const CHAINS = [1, 56];

let sb: SandboxProcess;
let dir: string;
let urls: string[];

beforeAll(async () => {
  // 3 days at scale 10,000: 200 swaps and price ticks a chain, one every 22 minutes, so that a reorganisation of the
  // last hour (within the re-read window) rewrites some; 50 rows of each mutable entity.
  sb = await startSandbox([
    ...['--scale', '10000', '--history-days', '3', '--chains', CHAINS.join(',')],
    ...['--subgraph', `pools=${EVERY_TYPE_SCHEMA}`],
  ]);
  urls = [...sb.banner.matchAll(/^subgraph pools: (\S+)$/gm)].map((m) => m[1]!);
  dir = mkdtempSync(join(tmpdir(), 'pe-any-subgraph-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A run of every entity of the test schema; `batch` commits every `rows` rows and is told of every page read. */
async function run(
  data: string,
  on: SandboxProcess = sb,
  at: string[] = urls,
  pageSize = 100,
  batch?: { rows: number; signal: AbortSignal; progress: ProgressSink },
) {
  const config = loadConfig({
    env: sandboxEnv(on, data),
    overrides: {
      subgraphs: { pools: { deployments: { ethereum: at[0], bsc: at[1] }, schema: EVERY_TYPE_SCHEMA } },
      // Pages of 100 rows, so that every entity's and aggregation's keyset goes past its first page.
      pageSize,
      ...(batch ? { batchRows: batch.rows } : {}),
    },
  });
  const tasks = buildPlan(config, { jobs: [subgraphJob('pools')] });
  const outcome = await runOnce({
    config,
    tasks,
    jobs: ['pools'],
    signal: batch?.signal ?? new AbortController().signal,
    log: () => undefined,
    waitLockSecs: 0,
    ...(batch ? { progress: batch.progress } : {}),
  });
  return { outcome, tasks };
}

const POOLS = () => DATASETS.filter((d) => d.schema === 'pools').map((d) => d.name);

describe('a subgraph of any schema', () => {
  it('exports every entity of every chain exactly, typed columns included, with the lake matching', async () => {
    const data = join(dir, 'a');
    const { outcome, tasks } = await run(data);
    expect(
      outcome.results
        .filter((r) => r.status !== 'ok')
        .map((r) => `${r.task.ds.name}@${r.task.chainId}: ${r.error?.message}`),
    ).toEqual([]);
    // Every entity on both chains: the plan read the subgraph's deployments, not DODO's chains.
    expect(tasks.map((t) => `${t.ds.name}@${t.chainId}`).sort()).toEqual(
      POOLS()
        .flatMap((n) => CHAINS.map((c) => `${n}@${c}`))
        .sort(),
    );
    expect(POOLS()).toEqual(everyTypeDatasets('pools'));
    const cmp = await compareWithSandbox(sb, data, CHAINS, POOLS());
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.checked).toBe(18);
    expect(cmp.rows).toBeGreaterThan(1000);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    // The kinds: an immutable entity with a timestamp in seconds is an event; the others (the timeseries among them)
    // are read by id and by _change_block.
    expect(
      DATASETS.filter((d) => d.schema === 'pools').map((d) => `${d.entity}:${d.kind}:${d.idType ?? 'ID'}`),
    ).toEqual([
      'Factory:mutable:ID',
      'Token:mutable:Bytes',
      'Pool:mutable:ID',
      'Swap:event:Bytes',
      'Mint:event:Bytes',
      'PriceTick:mutable:Int8',
      'Account:mutable:Bytes',
      'TokenPriceStat:mutable:Int8',
      'TokenPriceStat:mutable:Int8',
    ]);
    // The aggregation at both its intervals, each with its rows (a bucket of every token with a tick in that hour or day).
    const stats = await Warehouse.open(data, { readOnly: true });
    try {
      const n = async (t: string) => Number((await stats.all(`SELECT count(*) AS n FROM pools.${t}`))[0]!.n);
      expect(await n('token_price_stats_hour')).toBeGreaterThan(await n('token_price_stats_day'));
      expect(await n('token_price_stats_day')).toBeGreaterThan(20);
    } finally {
      await stats.close();
    }
  });

  it('verifies each dataset by its row ids at its checkpoint block, finds a row lost, one too many and a lost bucket, and repairs them', async () => {
    const data = join(dir, 'a');
    const config = loadConfig({
      env: sandboxEnv(sb, data),
      overrides: {
        subgraphs: { pools: { deployments: { ethereum: urls[0], bsc: urls[1] }, schema: EVERY_TYPE_SCHEMA } },
        // Pages of 50 ids, so that each dataset's ids take several.
        pageSize: 50,
      },
    });
    const client = UpstreamClient.forConfig(config);
    const datasets = new Set(POOLS());
    const w = await Warehouse.open(data);
    try {
      const check = () => verify({ config, warehouse: w, client, chains: CHAINS, datasets, lake: false });
      const clean = await check();
      const ids = clean.checks.filter((c) => c.identity === IDS_IDENTITY);
      expect(ids.map((c) => `${c.dataset}@${c.chainId}`).sort()).toEqual(
        POOLS()
          .flatMap((n) => CHAINS.map((c) => `${n}@${c}`))
          .sort(),
      );
      expect(ids.filter((c) => c.skipped || c.error || c.groups !== 1)).toEqual([]);
      expect(clean.mismatches).toEqual([]);
      // Pages of ids: at least one request a dataset and chain, and a probe per deployment.
      expect(clean.requests).toBeGreaterThanOrEqual(ids.length + 2);
      // A swap and an hourly bucket lost on ethereum, a factory that is not upstream on bsc.
      const one = async (sql: string) => String((await w.all(sql))[0]!.id);
      const swap = await one('SELECT id FROM pools.swaps WHERE chain_id = 1 ORDER BY id LIMIT 1');
      const bucket = await one('SELECT id FROM pools.token_price_stats_hour WHERE chain_id = 1 ORDER BY id LIMIT 1');
      await w.exec('DELETE FROM pools.swaps WHERE chain_id = 1 AND id = $1', [swap]);
      await w.exec('DELETE FROM pools.token_price_stats_hour WHERE chain_id = 1 AND id = $1', [bucket]);
      await w.exec(
        "INSERT INTO pools.factories SELECT * REPLACE ('not-upstream' AS id) FROM pools.factories WHERE chain_id = 56 LIMIT 1",
      );
      const found = await check();
      expect(
        found.mismatches.map((m) => `${m.dataset}@${m.chainId} ${m.keyKind} ${m.key} ${m.expected}/${m.found}`).sort(),
      ).toEqual(
        [
          `pools.swaps@1 id ${swap} 1/0`,
          `pools.token_price_stats_hour@1 id ${bucket} 1/0`,
          'pools.factories@56 id not-upstream 0/1',
        ].sort(),
      );
      const repaired = await repair(
        { config, warehouse: w, client, signal: new AbortController().signal, log: () => undefined },
        repairTargets(found.checks),
      );
      expect(repaired.map((r) => `${r.dataset}@${r.chainId}:${r.ranges}`).sort()).toEqual(
        ['pools.factories@56:ids', 'pools.swaps@1:ids', 'pools.token_price_stats_hour@1:ids'].sort(),
      );
      expect((await check()).mismatches).toEqual([]);
    } finally {
      await w.close();
    }
    expect((await compareWithSandbox(sb, data, CHAINS, POOLS())).mismatches).toEqual([]);
  });

  it('reads every row again by id where the endpoint has no _change_block (graph-node before v0.27), and stays exact', async () => {
    const old = await startSandbox([
      ...['--scale', '2000', '--history-days', '3', '--chains', CHAINS.join(','), '--profile', 'ancient'],
      ...['--subgraph', `pools=${EVERY_TYPE_SCHEMA}`],
    ]);
    try {
      const at = [...old.banner.matchAll(/^subgraph pools: (\S+)$/gm)].map((m) => m[1]!);
      const data = join(dir, 'ancient');
      expect((await run(data, old, at)).outcome.results.every((r) => r.status === 'ok')).toBe(true);
      await old.control('advance', { blocks: 100 });
      await old.control('reorg', { depth: 50 });
      await old.control('stats', {});
      const second = await run(data, old, at);
      expect(second.outcome.results.every((r) => r.status === 'ok')).toBe(true);
      const cmp = await compareWithSandbox(old, data, CHAINS, POOLS());
      expect(cmp.mismatches).toEqual([]);
      // The mutable entities were read whole (their 10 rows each and a new one), where _change_block would have read
      // the few changed since.
      const factories = second.outcome.results.filter((r) => r.task.ds.name === 'pools.factories');
      for (const r of factories) expect(r.stats.rows).toBeGreaterThanOrEqual(10);
    } finally {
      await old.stop();
    }
  });

  it('stays exact after new blocks and a reorganisation that rewrites stored rows', async () => {
    const data = join(dir, 'b');
    expect((await run(data)).outcome.results.every((r) => r.status === 'ok')).toBe(true);
    const before = new Map(
      await Promise.all(
        CHAINS.map(async (c) => [c, (await allRows(sb, c, 'pools', 'Swap')).map((r) => r.id)] as const),
      ),
    );
    await sb.control('advance', { blocks: 100 });
    // 250 blocks: 50 minutes of ethereum, 12 of bsc, both within the hour the runs re-read.
    await sb.control('reorg', { depth: 250 });
    const after = new Map(
      await Promise.all(
        CHAINS.map(async (c) => [c, (await allRows(sb, c, 'pools', 'Swap')).map((r) => r.id)] as const),
      ),
    );
    // The reorganisation replaced swaps the first run stored (on ethereum at least, whose blocks are 12 s).
    const replaced = before.get(1)!.filter((id) => !after.get(1)!.includes(id));
    expect(replaced.length).toBeGreaterThan(0);
    // Pages of 5 rows: the rows written since the window's first block go past their first page too, for the
    // aggregations as for the entities.
    const second = await run(data, sb, urls, 5);
    expect(second.outcome.results.filter((r) => r.status !== 'ok')).toEqual([]);
    const cmp = await compareWithSandbox(sb, data, CHAINS, POOLS());
    expect(cmp.mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      const stored = await w.all(`SELECT count(*) AS n FROM pools.swaps WHERE id IN (SELECT unnest($1::VARCHAR[]))`, [
        `[${replaced.map((id) => JSON.stringify(id)).join(',')}]`,
      ]);
      expect(Number(stored[0]!.n)).toBe(0);
    } finally {
      await w.close();
    }
  });

  it("resumes an aggregation's interrupted first pass below its last committed row, and reads the rows written since it began", async () => {
    const data = join(dir, 'resumed');
    expect((await run(data)).outcome.results.filter((r) => r.status !== 'ok')).toEqual([]);
    // As if the first pass of each aggregation on ethereum had stopped halfway down its keyset (newest first, by
    // timestamp and id as numbers): the older half of its rows not yet stored, its checkpoint at the last row stored,
    // and the block and time it began at those of the run that read them.
    const aggregations = DATASETS.filter((d) => d.schema === 'pools' && d.aggregation);
    expect(aggregations.length).toBe(2);
    const w = await Warehouse.open(data);
    try {
      for (const ds of aggregations) {
        const rows = (
          await w.all(
            `SELECT CAST(epoch_us("timestamp") AS VARCHAR) AS ts, CAST(id AS VARCHAR) AS id FROM ${ds.table} WHERE chain_id = 1`,
          )
        )
          .map((r) => ({ ts: BigInt(String(r.ts)), id: BigInt(String(r.id)) }))
          .sort((a, b) => (a.ts === b.ts ? (a.id > b.id ? -1 : 1) : a.ts > b.ts ? -1 : 1));
        expect(rows.length).toBeGreaterThan(20);
        const last = rows[Math.floor(rows.length / 2)]!;
        const unread = rows.slice(Math.floor(rows.length / 2) + 1).map((r) => String(r.id));
        await w.exec(
          `DELETE FROM ${ds.table} WHERE chain_id = 1 AND CAST(id AS VARCHAR) IN (SELECT unnest($1::VARCHAR[]))`,
          [JSON.stringify(unread)],
        );
        const [cp] = await w.all('SELECT cursor FROM _pool_export.checkpoints WHERE chain_id = 1 AND dataset = $1', [
          ds.name,
        ]);
        const done = JSON.parse(String(cp!.cursor)) as { mode: string; seq: string; block: number };
        expect(done.mode).toBe('incremental');
        const began = { block: done.block, ts: Number(done.seq) };
        const cursor = { mode: 'full', seq: String(last.ts), id: String(last.id), began, block: began.block };
        await w.exec('UPDATE _pool_export.checkpoints SET cursor = $1 WHERE chain_id = 1 AND dataset = $2', [
          JSON.stringify(cursor),
          ds.name,
        ]);
      }
    } finally {
      await w.close();
    }
    // New rows upstream while it was stopped: newer than its keyset, so read from the block it began at.
    await sb.control('advance', { blocks: 300 });
    const resumed = await run(data, sb, urls, 5);
    expect(resumed.outcome.results.filter((r) => r.status !== 'ok')).toEqual([]);
    const cmp = await compareWithSandbox(
      sb,
      data,
      CHAINS,
      aggregations.map((d) => d.name),
    );
    expect(cmp.mismatches).toEqual([]);
    // It went on below its keyset rather than down again from the top: the hourly one read fewer rows than it now
    // stores (a pass from the top reads every one of them; the daily one's few rows are mostly read again by the
    // catch-up, whose window reaches into the day it began).
    const hourly = aggregations.find((d) => d.aggregation!.interval === 'hour')!;
    const ww = await Warehouse.open(data, { readOnly: true });
    try {
      const [stored] = await ww.all(`SELECT count(*) AS n FROM ${hourly.table} WHERE chain_id = 1`);
      const [read] = resumed.outcome.results.filter((r) => r.task.ds.name === hourly.name && r.task.chainId === 1);
      expect(read!.stats.rows).toBeLessThan(Number(stored!.n));
    } finally {
      await ww.close();
    }
  });
  it("checkpoints an aggregation's first pass at each batch it commits, newest first, and a stopped pass goes on from there", async () => {
    const data = join(dir, 'stopped');
    // The schema's datasets are known once a run's configuration has named the subgraph.
    const isHourly = (d: Dataset) => d.schema === 'pools' && d.aggregation?.interval === 'hour';
    // Pages of 5 and batches of 10: the run is stopped once the hourly aggregation of ethereum has read 20 rows, so
    // that one batch or two of its first pass are committed, and the pass is not done.
    const stop = new AbortController();
    const progress = progressOn({
      page: (task, stats) => {
        if (isHourly(task.ds) && task.chainId === 1 && stats.rows >= 20) stop.abort();
      },
    });
    const stopped = await run(data, sb, urls, 5, { rows: 10, signal: stop.signal, progress });
    expect(stopped.outcome.stopped).toBe(true);
    const hourly = DATASETS.find(isHourly)!;
    const w = await Warehouse.open(data, { readOnly: true });
    let stored: { ts: bigint; id: bigint }[];
    let cursor: { mode: string; seq: string; id: string; began: { block: number; ts: number }; block: number };
    try {
      stored = (
        await w.all(
          `SELECT CAST(epoch_us("timestamp") AS VARCHAR) AS ts, CAST(id AS VARCHAR) AS id FROM ${hourly.table} WHERE chain_id = 1`,
        )
      ).map((r) => ({ ts: BigInt(String(r.ts)), id: BigInt(String(r.id)) }));
      const [cp] = await w.all('SELECT cursor FROM _pool_export.checkpoints WHERE chain_id = 1 AND dataset = $1', [
        hourly.name,
      ]);
      cursor = JSON.parse(String(cp!.cursor));
    } finally {
      await w.close();
    }
    // Whole batches of 10 stored, fewer than the aggregation holds upstream.
    const upstream = (await allRows(sb, 1, hourly.schema, hourly.entity, undefined, hourly.aggregation!.interval))
      .length;
    expect(stored.length % 10).toBe(0);
    expect(stored.length).toBeGreaterThanOrEqual(10);
    expect(stored.length).toBeLessThan(upstream);
    // The checkpoint is a full pass's, at the oldest row stored: the keyset goes down by timestamp, then id.
    const oldest = stored.reduce((a, b) => (b.ts < a.ts || (b.ts === a.ts && b.id < a.id) ? b : a));
    expect(cursor.mode).toBe('full');
    expect([cursor.seq, cursor.id]).toEqual([String(oldest.ts), String(oldest.id)]);
    expect(cursor.block).toBe(cursor.began.block);
    // The next run goes on below it, and every row is there.
    await sb.control('advance', { blocks: 50 });
    const resumed = await run(data, sb, urls, 5);
    expect(resumed.outcome.results.filter((r) => r.status !== 'ok')).toEqual([]);
    expect((await compareWithSandbox(sb, data, CHAINS, [hourly.name])).mismatches).toEqual([]);
  });
});
