/**
 * The exporter's whole run called in-process (`runOnce`) against a real sandbox process and real DuckDB files, so
 * that mutation testing reaches the orchestration, the store, the ledger, the status file and the lake (the
 * integration tier runs the CLI as a child process, out of reach of per-test coverage). Each test makes its own data
 * folder and runs: Stryker runs only the tests that cover a mutant, so no test leans on another's state. Results are
 * checked against the sandbox's own rows (`compareWithSandbox`: count, digest and every typed column against the
 * upstream text through decimal.js), never against the exporter's own output.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { JOBS } from '../../jobs/index.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { DATA_FOLDER_NAMES, dataFolder } from '../../src/config/data-folder.ts';
import { autoMemoryLimit } from '../../src/config/memory-limit.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import type { ProgressSink } from '../../src/export/run-args.ts';
import { compactLake } from '../../src/lake/compact.ts';
import { runOnce } from '../../src/pipeline/run.ts';
import { openLakeDb, reportViews } from '../../src/reports/views.ts';
import { callControl, type SandboxEndpoint, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { lockDataDir } from '../../src/store/data-lock.ts';
import { readStatusFile } from '../../src/store/status-file.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import {
  compareWithSandbox,
  killOnStart,
  lakeBehindWarehouse,
  progressOn,
  sandboxEnv,
} from '../support/export-check.ts';
import { freePort } from '../support/ports.ts';
import { SHARED_SANDBOX_FLAGS } from '../support/shared-sandbox.ts';

const CHAIN = 56;
/** One dataset of each cursor kind, and those the reports read: a run of these takes seconds, not a minute. */
const DATASETS = [
  'list.liquidity',
  'dodoex.dodo_zoos',
  'dodoex.pair_day_datas',
  'dodoex.token_day_datas',
  'dodoex.swaps',
  'dodoex.pairs',
  'dodoex.tokens',
];
/** The tier's shared sandbox (test/support/shared-sandbox.ts): read only, never advanced or reorganised here. */
let sb: SandboxEndpoint;
const dirs: string[] = [];

beforeAll(() => {
  const { url, apiKey } = inject('sharedSandbox');
  sb = { url, apiKey, control: (path, body) => callControl(url, path, body) };
});
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'pool-export-pipeline-'));
  dirs.push(d);
  return join(d, 'data');
}

interface Logged {
  event: string;
  fields: Record<string, unknown>;
  level: string;
}

async function exportOnce(
  dataDir: string,
  opts: {
    overrides?: Partial<Record<keyof Config, unknown>>;
    signal?: AbortSignal;
    datasets?: string[];
    waitLockSecs?: number;
    onEvent?: (e: Logged) => void;
    /** Another sandbox than the shared one. */
    sandbox?: SandboxEndpoint;
    progress?: ProgressSink;
  } = {},
) {
  const config = loadConfig({
    env: sandboxEnv(opts.sandbox ?? sb, dataDir),
    overrides: { chains: [String(CHAIN)], ...opts.overrides },
  });
  const tasks = buildPlan(config, { jobs: JOBS, chains: [CHAIN], datasets: opts.datasets ?? DATASETS });
  const events: Logged[] = [];
  const outcome = await runOnce({
    config,
    tasks,
    jobs: ['state', 'events'],
    signal: opts.signal ?? new AbortController().signal,
    log: (event, fields, level = 'info') => {
      events.push({ event, fields, level });
      opts.onEvent?.({ event, fields, level });
    },
    waitLockSecs: opts.waitLockSecs ?? 0,
    ...(opts.progress ? { progress: opts.progress } : {}),
  });
  return { outcome, events };
}

async function withWarehouse<T>(dataDir: string, f: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await Warehouse.open(dataDir, { readOnly: true });
  try {
    return await f(w);
  } finally {
    await w.close();
  }
}

/** Runs `f` with a sandbox of its own (for a test that changes the upstream's world), stopped after. */
async function withOwnSandbox(
  f: (own: SandboxProcess) => Promise<void>,
  flags: string[] = SHARED_SANDBOX_FLAGS,
): Promise<void> {
  const own = await startSandbox(flags);
  try {
    await f(own);
  } finally {
    await own.stop();
  }
}

/** Part files per lake folder that holds any. */
function partFiles(dir: string, out = new Map<string, number>()): Map<string, number> {
  const names = readdirSync(dir, { withFileTypes: true });
  const parts = names.filter((n) => n.isFile() && /^part-.*\.parquet$/.test(n.name)).length;
  if (parts) out.set(dir, parts);
  for (const n of names) if (n.isDirectory() && n.name !== '.tmp') partFiles(join(dir, n.name), out);
  return out;
}

/** A fingerprint of every stored swap (all columns), to tell whether a run rewrote stored rows. */
const swapsFingerprint = (w: Warehouse) =>
  w.all('SELECT count(*)::VARCHAR AS n, sum(hash(CAST(s AS VARCHAR)))::VARCHAR AS h FROM dodoex.swaps s');

describe('one run in-process', () => {
  it('exports each kind of dataset exactly, typed columns included; the lake and its views file match', async () => {
    const data = folder();
    const { outcome, events } = await exportOnce(data);
    expect(outcome.lakeError).toBeUndefined();
    expect(outcome.stopped).toBe(false);
    expect(outcome.results.map((r) => [r.task.ds.name, r.status]).sort()).toEqual(
      DATASETS.map((d) => [d, 'ok']).sort(),
    );
    const cmp = await compareWithSandbox(sb, data, [CHAIN], DATASETS);
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.checked).toBe(DATASETS.length - 1);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    // Each task's counters are what the warehouse holds.
    const stored = new Map<string, number>();
    await withWarehouse(data, async (w) => {
      for (const r of outcome.results.filter((x) => x.task.ds.kind !== 'snapshot' && x.task.ds.kind !== 'list')) {
        const [n] = await w.all(`SELECT count(*)::INTEGER AS n FROM ${r.task.ds.table}`);
        expect(r.stats.rows, r.task.ds.name).toBe(n!.n);
        stored.set(r.task.ds.name, Number(n!.n));
        expect(r.cursorBefore).toBeNull();
        expect(r.cursorAfter).not.toBeNull();
        expect(r.block).toBeGreaterThan(0);
      }
    });
    expect(events.filter((e) => e.level === 'error')).toEqual([]);
    // What the log says: the run, each task's start and end with its counters, the lake files on disk, the totals.
    const { runId } = outcome;
    const lakeFiles = (readdirSync(join(data, 'lake'), { recursive: true }) as string[]).filter((f) =>
      f.endsWith('.parquet'),
    ).length;
    expect(events[0]).toEqual({
      event: 'run-start',
      fields: {
        runId,
        jobs: ['state', 'events'],
        tasks: DATASETS.length,
        // The first line says the memory limit in force and where it came from (this host's `auto`).
        memoryLimit: autoMemoryLimit().limit,
        memoryLimitFrom: autoMemoryLimit().from,
      },
      level: 'info',
    });
    for (const r of outcome.results) {
      const label = { dataset: r.task.ds.name, chain: 'bsc', chainId: CHAIN };
      expect(events).toContainEqual({ event: 'task-start', fields: { ...label, block: r.block }, level: 'info' });
      const { rows, pages, requests, retries, duplicates } = r.stats;
      expect(events).toContainEqual({
        event: 'task-done',
        fields: { ...label, rows, pages, requests, retries, duplicates },
        level: 'info',
      });
      expect(pages).toBeGreaterThan(0);
      expect(requests).toBeGreaterThanOrEqual(pages);
    }
    // The run verifies what it touched (every identity of the chain, each over some groups, none of them differing)
    // while its lake step writes, whose publish to a bucket waits for it and then carries the verifications: the two
    // end in either order.
    const lakeFirst = events.at(-3)!.event === 'lake-written';
    expect(lakeFirst ? [events.at(-2), events.at(-3), events.at(-1)] : events.slice(-3)).toEqual([
      {
        event: 'verified',
        fields: { runId, chains: 1, groups: expect.any(Number), gaps: 0, errors: 0, requests: expect.any(Number) },
        level: 'info',
      },
      { event: 'lake-written', fields: { runId, files: lakeFiles, ms: expect.any(Number) }, level: 'info' },
      {
        event: 'run-done',
        fields: { runId, failed: 0, rows: outcome.results.reduce((a, r) => a + r.stats.rows, 0), stopped: false },
        level: 'info',
      },
    ]);
    expect(lakeFiles).toBeGreaterThan(DATASETS.length);
    // The lake write's time, which a first backfill's thousands of files make far longer than a millisecond.
    expect(events.find((e) => e.event === 'lake-written')!.fields.ms).toBeGreaterThan(10);
    expect(outcome.verification).toMatchObject({ gaps: 0, errors: 0 });
    expect(outcome.verification!.groups).toBeGreaterThan(10);
    // The status file shows the run's verification beside each dataset and chain it verified, as the warehouse's
    // verifications table records them.
    const checked = await withWarehouse(data, async (w) =>
      (
        await w.all(
          `SELECT DISTINCT dataset || '/' || chain_id AS k FROM _pool_export.verifications WHERE run_id = $1 AND skipped IS NULL`,
          [runId],
        )
      )
        .map((r) => String(r.k))
        .sort(),
    );
    expect(checked.length).toBeGreaterThan(0);
    const status = readStatusFile(data)!;
    expect(
      status.entries
        .filter((e) => e.verification)
        .map((e) => `${e.dataset}/${e.chainId}`)
        .sort(),
    ).toEqual(checked);
    for (const e of status.entries.filter((x) => x.verification)) expect(e.verification!.gaps).toBe(0);
    // The views file opens by itself in DuckDB, and every report view in it answers.
    const inst = await DuckDBInstance.create(dataFolder(data).views, { access_mode: 'READ_ONLY' });
    const conn = await inst.connect();
    try {
      for (const v of reportViews()) {
        const r = await conn.runAndReadAll(`SELECT count(*)::INTEGER AS n FROM reports.${v.name}`);
        expect(r.getRowObjects()[0]!.n, v.name).toBeGreaterThanOrEqual(0);
      }
      const swaps = await conn.runAndReadAll('SELECT count(*)::INTEGER AS n FROM dodoex.swaps');
      expect(swaps.getRowObjects()[0]!.n).toBe(stored.get('dodoex.swaps'));
      expect(stored.get('dodoex.swaps')).toBeGreaterThan(100);
    } finally {
      conn.closeSync();
      inst.closeSync();
    }
    expect(readdirSync(data)).not.toContain(`${DATA_FOLDER_NAMES.views}.tmp`);
  });

  it('a second run after new blocks and a reorganisation rewrites the stored rows it changed, and stays exact', async () => {
    // This test changes its sandbox's world: it has its own.
    await withOwnSandbox(reorgedRun);
  });

  async function reorgedRun(own: SandboxProcess): Promise<void> {
    const data = folder();
    // A window of two days, and a reorganisation of a day and a half of BSC blocks (3 s): it rewrites stored swaps.
    const overrides = { reorgWindowSecs: 172_800 };
    const first = await exportOnce(data, { overrides, sandbox: own });
    expect(first.outcome.results.every((r) => r.status === 'ok')).toBe(true);
    const before = await withWarehouse(data, swapsFingerprint);
    await own.control('reorg', { depth: 43_200, chainId: CHAIN });
    await own.control('advance', { blocks: 300 });
    const second = await exportOnce(data, { overrides, sandbox: own });
    expect(second.outcome.results.every((r) => r.status === 'ok')).toBe(true);
    const after = await withWarehouse(data, swapsFingerprint);
    expect(after).not.toEqual(before);
    const cmp = await compareWithSandbox(own, data, [CHAIN], DATASETS);
    expect(cmp.mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    // The ledger: two runs, each task once per run; the second starts where the first ended.
    await withWarehouse(data, async (w) => {
      const runs = await w.all(
        'SELECT status, tasks::INTEGER AS tasks, failed::INTEGER AS failed FROM _pool_export.runs',
      );
      expect(runs).toEqual([
        { status: 'ok', tasks: DATASETS.length, failed: 0 },
        { status: 'ok', tasks: DATASETS.length, failed: 0 },
      ]);
      for (const r of second.outcome.results) {
        const one = first.outcome.results.find((x) => x.task.ds.name === r.task.ds.name)!;
        if (r.task.ds.kind === 'event') expect(r.cursorBefore, r.task.ds.name).toBe(one.cursorAfter);
      }
      const tasks = await w.all(
        'SELECT dataset, count(*)::INTEGER AS n, count(DISTINCT run_id)::INTEGER AS runs FROM _pool_export.run_tasks GROUP BY dataset ORDER BY dataset',
      );
      expect(tasks).toEqual([...DATASETS].sort().map((d) => ({ dataset: d, n: 2, runs: 2 })));
    });
    // The status file is rebuilt from the warehouse at the end: rows as stored, each task's last success.
    const status = readStatusFile(data)!;
    expect(status.run.state).toBe('ended');
    await withWarehouse(data, async (w) => {
      for (const e of status.entries) {
        const ds = e.dataset;
        const table = second.outcome.results.find((r) => r.task.ds.name === ds)!.task.ds.table;
        const [n] = await w.all(`SELECT count(*)::INTEGER AS n FROM ${table} WHERE chain_id = ${CHAIN}`);
        expect(e.rows, ds).toBe(n!.n);
        expect(e.lastStatus).toBe('ok');
        expect(e.lastError).toBeNull();
        expect(Date.parse(e.lastSuccess!)).toBeGreaterThanOrEqual(Date.parse(status.run.startedAt));
      }
    });
    expect(status.entries.map((e) => e.dataset)).toEqual([...DATASETS].sort());
    // Two runs added their rows to each month's open file: every month holds one file (the data is small), and there
    // is nothing to compact.
    const months = partFiles(join(data, 'lake'));
    expect(months.size).toBeGreaterThan(5);
    expect([...months.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    await withWarehouse(data, async (w) => expect(await compactLake(w, data)).toEqual({ partitions: 0, files: 0 }));
  }

  it('a second run at the same head reads no page of a dataset whose last read ended there, says so once each, and stays exact', async () => {
    const data = folder();
    const first = await exportOnce(data);
    expect(first.outcome.results.every((r) => r.status === 'ok')).toBe(true);
    const again = await exportOnce(data);
    // Every dataset but the liquidity list, which has no block to have been read at, and is read again.
    const expected = DATASETS.filter((d) => d !== 'list.liquidity').sort();
    const unchanged = again.outcome.results.filter((r) => r.unchanged);
    expect(unchanged.map((r) => r.task.ds.name).sort()).toEqual(expected);
    for (const r of unchanged) {
      const before = first.outcome.results.find((x) => x.task.ds.name === r.task.ds.name)!;
      expect([r.status, r.stats.requests, r.stats.pages, r.block]).toEqual(['ok', 0, 0, before.block]);
      expect([r.cursorBefore, r.cursorAfter]).toEqual([before.cursorAfter, before.cursorAfter]);
    }
    // Nor is any first page asked in a batch for them.
    expect(again.events.filter((e) => e.event === 'first-pages')).toEqual([]);
    const said = again.events.filter((e) => e.event === 'task-unchanged');
    expect(said.map((e) => e.fields.dataset).sort()).toEqual(expected);
    expect(said.every((e) => e.fields.chainId === CHAIN && e.fields.block === first.outcome.results[0]!.block)).toBe(
      true,
    );
    const list = again.outcome.results.find((r) => r.task.ds.name === 'list.liquidity')!;
    expect(list.unchanged).toBeUndefined();
    expect(list.stats.requests).toBeGreaterThan(0);
    expect((await compareWithSandbox(sb, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
  });

  it('a run keeps the ledger to its last keepRuns runs: of an older run, only the tasks its checkpoints name stay', async () => {
    const data = folder();
    const overrides = { keepRuns: 1 };
    const first = await exportOnce(data, { overrides });
    expect(first.events.filter((e) => e.event === 'ledger-pruned')).toEqual([]);
    const tasksOf = (run: string) =>
      withWarehouse(data, (w) =>
        w.all('SELECT count(*)::INTEGER AS n FROM _pool_export.run_tasks WHERE run_id = $1', [run]),
      );
    expect(await tasksOf(first.outcome.runId)).toEqual([{ n: first.outcome.results.length }]);
    // The second run (at the same head: its tasks move no checkpoint but the list's) deletes the first's other tasks.
    const second = await exportOnce(data, { overrides });
    const pruned = second.events.filter((e) => e.event === 'ledger-pruned');
    expect(pruned.map((e) => e.fields.keepRuns)).toEqual([1]);
    const named = await withWarehouse(data, (w) =>
      w.all('SELECT count(*)::INTEGER AS n FROM _pool_export.checkpoints WHERE run_id = $1', [first.outcome.runId]),
    );
    expect(named[0]!.n).toBeGreaterThan(0);
    expect(await tasksOf(first.outcome.runId)).toEqual(named);
    expect(pruned[0]!.fields.tasks).toBe(first.outcome.results.length - Number(named[0]!.n));
    expect(await tasksOf(second.outcome.runId)).toEqual([{ n: second.outcome.results.length }]);
    // The third is within a tenth of keepRuns of the last pruning: it deletes nothing.
    const third = await exportOnce(data, { overrides });
    expect(third.events.filter((e) => e.event === 'ledger-pruned')).toEqual([]);
    expect(await tasksOf(second.outcome.runId)).toEqual([{ n: second.outcome.results.length }]);
  });

  it('a run after new blocks asks every first page of a route in one batched request, and none with batching off', async () => {
    await withOwnSandbox(async (own) => {
      for (const batchDatasets of [32, 0]) {
        const data = folder();
        const overrides = { batchDatasets };
        expect(
          (await exportOnce(data, { overrides, sandbox: own })).outcome.results.every((r) => r.status === 'ok'),
        ).toBe(true);
        await own.control('advance', { blocks: 100 });
        const next = await exportOnce(data, { overrides, sandbox: own });
        expect(next.outcome.results.every((r) => r.status === 'ok' && !r.unchanged)).toBe(true);
        const batches = next.events.filter((e) => e.event === 'first-pages').map((e) => e.fields);
        // The list is paged by number, not foreseen: the six others are asked in one request.
        if (batchDatasets)
          expect(batches).toEqual([expect.objectContaining({ datasets: 6, answered: 6, requests: 1 })]);
        else expect(batches).toEqual([]);
        // What each task then asked itself. Without the batch: its first page, and for a mutable dataset (tokens,
        // pairs) the question of which rows of its window are still upstream. With it: nothing, both being answered.
        const asked = Object.fromEntries(next.outcome.results.map((r) => [r.task.ds.name, r.stats.requests]));
        const alone = {
          'dodoex.tokens': 2,
          'dodoex.pairs': 2,
          'dodoex.swaps': 1,
          'dodoex.pair_day_datas': 1,
          'dodoex.token_day_datas': 1,
        };
        expect(asked).toMatchObject(batchDatasets ? Object.fromEntries(Object.keys(alone).map((d) => [d, 0])) : alone);
        expect((await compareWithSandbox(own, data, [CHAIN], DATASETS)).mismatches).toEqual([]);
      }
    });
  });

  it('a mutable dataset whose re-read window holds more rows than a page asks which are still upstream itself, not in the batch', async () => {
    await withOwnSandbox(async (own) => {
      const data = folder();
      const datasets = ['dodoex.pairs', 'dodoex.swaps'];
      // Pages of 5: the first run stored over a hundred pairs, all within the window the next run reads again.
      const overrides = { pageSize: 5 };
      await exportOnce(data, { datasets, overrides, sandbox: own });
      await own.control('advance', { blocks: 100 });
      const next = await exportOnce(data, { datasets, overrides, sandbox: own });
      expect(next.outcome.results.map((r) => r.status)).toEqual(['ok', 'ok']);
      // Both first pages in one batch. The batch asks which rows of a window are still upstream only for at most a
      // page of ids, so that no alias is larger than a page (graph-node's `first` is at most 1,000): the pairs task,
      // with over a hundred, asked that itself, page by page.
      expect(next.events.filter((e) => e.event === 'first-pages').map((e) => e.fields)).toEqual([
        expect.objectContaining({ datasets: 2, answered: 2, requests: 1 }),
      ]);
      const pairs = next.outcome.results.find((r) => r.task.ds.name === 'dodoex.pairs')!;
      expect(pairs.stats.requests).toBeGreaterThan(100 / 5);
      expect((await compareWithSandbox(own, data, [CHAIN], datasets)).mismatches).toEqual([]);
    });
  });

  it('a task that fails after committing pages: its result, log line, ledger row and status entry name it with what it stored', async () => {
    await withOwnSandbox(failedMidTask);
  });

  async function failedMidTask(own: SandboxProcess): Promise<void> {
    const data = folder();
    // In catalog order: pair_day_datas comes after swaps.
    const datasets = ['dodoex.pairs', 'dodoex.swaps', 'dodoex.pair_day_datas'];
    // Pages and batches of 5 rows: each page read is committed before the next is asked. No re-read window: every row
    // the second run reads is new.
    const overrides = { pageSize: 5, batchRows: 5, maxAttempts: 1, reorgWindowSecs: 0 };
    const first = await exportOnce(data, { datasets, overrides, sandbox: own });
    expect(first.outcome.results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
    // About 17 hours of BSC blocks: dozens of new swaps, several pages.
    await own.control('advance', { blocks: 20_000 });
    // A control call that blocks this process (and so the run) until the sandbox has taken it: no page is asked in
    // between.
    const controlNow = (path: string, body: unknown) =>
      execFileSync(process.execPath, [
        '-e',
        `fetch(${JSON.stringify(`${own.url}/_sandbox/${path}`)}, { method: 'POST', headers: { 'content-type': 'application/json' }, body: ${JSON.stringify(JSON.stringify(body))} }).then((r) => { if (!r.ok) process.exit(1); })`,
      ]);
    let garbled = false;
    let dayPages = 0;
    // The status file as the next task found it, while the run held the warehouse: it is written at most once a
    // second, so the next task's second page is made to come 1.1 s after its first.
    let meanwhile: ReturnType<typeof readStatusFile>;
    const progress = progressOn({
      page: (task) => {
        if (task.ds.name === 'dodoex.pair_day_datas' && ++dayPages <= 2) {
          if (dayPages === 2) meanwhile = readStatusFile(data);
          controlNow('faults', { latencyMs: dayPages === 1 ? 1100 : 0 });
        }
        // Once the run has read its first new page of swaps, the upstream sends amounts as JSON numbers.
        if (task.ds.name !== 'dodoex.swaps' || garbled) return;
        garbled = true;
        controlNow('garbage', { mode: 'wrong-type', entity: 'Swap', field: 'amountIn' });
      },
    });
    // One task at a time, in the plan's order (no batch of first pages to reorder them).
    const one = { ...overrides, concurrency: 1, batchDatasets: 0 };
    const second = await exportOnce(data, { datasets, overrides: one, sandbox: own, progress });
    expect(garbled).toBe(true);
    const swaps = second.outcome.results.find((r) => r.task.ds.name === 'dodoex.swaps')!;
    const pairs = second.outcome.results.find((r) => r.task.ds.name === 'dodoex.pairs')!;
    const before = first.outcome.results.find((r) => r.task.ds.name === 'dodoex.swaps')!.cursorAfter;
    expect([swaps.status, pairs.status]).toEqual(['failed', 'ok']);
    // The words of the data check (test/integration/garbage.int.test.ts), after the task's name.
    expect(swaps.error!.message).toMatch(
      /^dodoex\.swaps on bsc: upstream sent invalid data for dodoex\.swaps on bsc \(chain 56\), field "amountIn": expected a BigDecimal as a decimal string, got 12\.5\./,
    );
    // What it stored before the bad page is kept, and counted. It read the rows of its checkpoint's second again (its
    // pages start there, on that second's first id), and the new rows, which carry its run id.
    const seq = Number((JSON.parse(before!) as { seq: string }).seq);
    const added = await withWarehouse(data, async (w) => {
      const [n] = await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps WHERE _run_id = ? OR "timestamp" = ?', [
        second.outcome.runId,
        seq,
      ]);
      return n!.n as number;
    });
    expect(added).toBeGreaterThan(0);
    expect([swaps.status, swaps.stats.rows, swaps.block, swaps.cursorBefore, swaps.cursorAfter]).toEqual([
      'failed',
      added,
      pairs.block,
      before,
      null,
    ]);
    expect(swaps.stats.pages).toBeGreaterThanOrEqual(added / 5);
    const failed = second.events.filter((e) => e.level === 'error');
    expect(failed).toEqual([
      {
        event: 'task-failed',
        fields: {
          dataset: 'dodoex.swaps',
          chain: 'bsc',
          chainId: CHAIN,
          errorClass: swaps.error!.cls,
          error: swaps.error!.message,
        },
        level: 'error',
      },
    ]);
    // The ledger's class of bad upstream data.
    expect(swaps.error!.cls).toBe('GarbageError');
    await withWarehouse(data, async (w) => {
      const rows = await w.all(
        `SELECT status, rows::INTEGER AS rows, pages, cursor_before, cursor_after, error_class, error, head
         FROM _pool_export.run_tasks WHERE run_id = ? AND dataset = 'dodoex.swaps'`,
        [second.outcome.runId],
      );
      expect(rows).toEqual([
        {
          status: 'failed',
          rows: added,
          pages: swaps.stats.pages,
          cursor_before: before,
          cursor_after: null,
          error_class: swaps.error!.cls,
          error: swaps.error!.message,
          head: null,
        },
      ]);
    });
    // The status file says so as soon as the task ended (`status` reads it while the run holds the warehouse), and
    // at the run's end, rebuilt from the ledger.
    const said = (st: ReturnType<typeof readStatusFile>) =>
      st!.entries
        .map((e) => [e.dataset, e.lastStatus, e.lastError])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    expect(said(meanwhile)).toEqual([
      ['dodoex.pair_day_datas', 'ok', null],
      ['dodoex.pairs', 'ok', null],
      ['dodoex.swaps', 'failed', swaps.error!.message],
    ]);
    expect(said(readStatusFile(data))).toEqual(said(meanwhile));
    // Upstream well again: the next run goes on from the failed task's last commit and is exact.
    await own.control('garbage', {});
    const third = await exportOnce(data, { datasets, overrides, sandbox: own });
    expect(third.outcome.results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok']);
    expect((await compareWithSandbox(own, data, [CHAIN], datasets)).mismatches).toEqual([]);
  }

  it('an upstream that refuses the key fails every task with its class, stores no row, and the ledger says so', async () => {
    const data = folder();
    const { outcome } = await exportOnce(data, {
      overrides: { apiKey: 'not-the-key-0123456789abcdef0123' },
      datasets: ['dodoex.swaps', 'dodoex.pairs'],
    });
    expect(outcome.results.map((r) => [r.status, r.error?.cls])).toEqual([
      ['failed', 'upstream-auth'],
      ['failed', 'upstream-auth'],
    ]);
    for (const r of outcome.results) expect(r.error!.message).not.toContain('not-the-key');
    await withWarehouse(data, async (w) => {
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps')).toEqual([{ n: 0 }]);
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM _pool_export.checkpoints')).toEqual([{ n: 0 }]);
      expect(await w.all('SELECT status, failed::INTEGER AS failed FROM _pool_export.runs')).toEqual([
        { status: 'failed', failed: 2 },
      ]);
    });
    const status = readStatusFile(data)!;
    expect(status.entries.map((e) => [e.dataset, e.lastStatus, e.lastSuccess, e.rows])).toEqual([
      ['dodoex.pairs', 'failed', null, 0],
      ['dodoex.swaps', 'failed', null, 0],
    ]);
  });

  it('a deployment that lacks an entity skips its dataset as unavailable, asks nothing for it in a batch, and exports the others', async () => {
    await withOwnSandbox(
      async (own) => {
        const data = folder();
        const datasets = ['dodoex.positive_slippages', 'dodoex.swaps'];
        const { outcome, events } = await exportOnce(data, { datasets, sandbox: own });
        const [skipped, swaps] = datasets.map((d) => outcome.results.find((r) => r.task.ds.name === d)!);
        const message = `dodoex.positive_slippages on bsc: unavailable: the dodoex deployment at ${skipped!.task.endpoint.label} has no PositiveSlippage entity (older deployments lack some); skipped there`;
        expect(skipped).toMatchObject({
          status: 'unavailable',
          block: swaps!.block,
          cursorBefore: null,
          cursorAfter: null,
          error: { cls: 'unavailable', message },
          stats: { rows: 0, pages: 0, requests: 0 },
        });
        expect(swaps!.status).toBe('ok');
        const warned = events.filter((e) => e.level === 'warn');
        expect(warned).toEqual([
          {
            event: 'task-unavailable',
            fields: {
              dataset: 'dodoex.positive_slippages',
              chain: 'bsc',
              chainId: CHAIN,
              entity: 'PositiveSlippage',
              deployment: expect.any(String),
              message,
            },
            level: 'warn',
          },
        ]);
        expect(events.filter((e) => e.event === 'task-start').map((e) => e.fields.dataset)).toEqual(['dodoex.swaps']);
        expect((await compareWithSandbox(own, data, [CHAIN], ['dodoex.swaps'])).mismatches).toEqual([]);
        await withWarehouse(data, async (w) => {
          expect(await w.all('SELECT dataset, status, error FROM _pool_export.run_tasks ORDER BY dataset')).toEqual([
            { dataset: 'dodoex.positive_slippages', status: 'unavailable', error: message },
            { dataset: 'dodoex.swaps', status: 'ok', error: null },
          ]);
        });
        // A folder whose last run read both on a deployment that had the entity (the shared sandbox, the same world):
        // after new blocks on the one that lacks it, the batch of first pages asks only for swaps, there being no field
        // to ask the other's in.
        const moved = folder();
        const before = await exportOnce(moved, { datasets });
        expect(before.outcome.results.map((r) => r.status)).toEqual(['ok', 'ok']);
        await own.control('advance', { blocks: 100 });
        const next = await exportOnce(moved, { datasets, sandbox: own });
        expect(next.outcome.results.map((r) => [r.task.ds.name, r.status])).toEqual([
          ['dodoex.positive_slippages', 'unavailable'],
          ['dodoex.swaps', 'ok'],
        ]);
        expect(next.events.filter((e) => e.event === 'first-pages').map((e) => e.fields)).toEqual([
          expect.objectContaining({ datasets: 1, answered: 1, requests: 1 }),
        ]);
        expect((await compareWithSandbox(own, moved, [CHAIN], ['dodoex.swaps'])).mismatches).toEqual([]);
      },
      [...SHARED_SANDBOX_FLAGS, '--profile', 'gateway'],
    );
  });

  it('a subgraph that reports indexing errors fails its tasks before reading a page, naming the chain and schema', async () => {
    await withOwnSandbox(async (own) => {
      await own.control('garbage', { mode: 'indexing-errors' });
      const data = folder();
      const { outcome, events } = await exportOnce(data, { datasets: ['dodoex.swaps', 'dodoex.pairs'], sandbox: own });
      const why =
        'the block lookup failed: the dodoex subgraph of bsc reports indexing errors, so its data may be incomplete; these datasets are skipped until it recovers';
      const byName = [...outcome.results].sort((a, b) => a.task.ds.name.localeCompare(b.task.ds.name));
      expect(byName.map((r) => [r.status, r.error, r.block, r.stats.requests])).toEqual([
        ['failed', { cls: 'upstream-graphql', message: `dodoex.pairs on bsc: ${why}` }, null, 0],
        ['failed', { cls: 'upstream-graphql', message: `dodoex.swaps on bsc: ${why}` }, null, 0],
      ]);
      expect(events.filter((e) => e.level === 'error').map((e) => [e.event, e.fields.errorClass])).toEqual([
        ['task-failed', 'upstream-graphql'],
        ['task-failed', 'upstream-graphql'],
      ]);
      expect(events.at(-1)).toMatchObject({ event: 'run-done', fields: { failed: 2, rows: 0 } });
      await withWarehouse(data, async (w) => {
        expect(await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps')).toEqual([{ n: 0 }]);
      });
    });
  });

  it('a host that cannot be reached is tried three times with one endpoint, then fails every task in one line', async () => {
    const closed = await freePort();
    const down: SandboxEndpoint = { url: `http://127.0.0.1:${closed}`, apiKey: sb.apiKey, control: sb.control };
    const data = folder();
    const datasets = ['dodoex.swaps', 'token.tokens', 'list.liquidity'];
    const { outcome, events } = await exportOnce(data, { datasets, sandbox: down });
    const unreachable = events.filter((e) => e.event === 'host-unreachable');
    // Two endpoints probed on the host: the exchange subgraph (whose probe the list shares) and the token subgraph.
    expect(unreachable).toEqual([
      {
        event: 'host-unreachable',
        fields: { host: `127.0.0.1:${closed}`, endpoints: 2, error: expect.stringContaining('127.0.0.1') },
        level: 'error',
      },
    ]);
    expect(events.filter((e) => e.event === 'retry').map((e) => e.fields.attempt)).toEqual([1, 2]);
    const messages = outcome.results.map((r) => r.error!.message.replace(/^\S+ on bsc: /, ''));
    expect(new Set(messages)).toEqual(new Set([unreachable[0]!.fields.error]));
    expect(outcome.results.map((r) => [r.task.ds.name, r.status, r.error!.cls]).sort()).toEqual(
      datasets.map((d) => [d, 'failed', 'upstream-unreachable']).sort(),
    );
  });

  it('a host that dies after the probe fails its tasks with its own error, and with one route moves them nowhere', async () => {
    await withOwnSandbox(async (own) => {
      // The host dies once the run has probed it and planned its tasks, before their first pages.
      const { progress, killed } = killOnStart(own);
      const data = folder();
      const { outcome, events } = await exportOnce(data, {
        datasets: ['dodoex.swaps'],
        overrides: { maxAttempts: 2 },
        sandbox: own,
        progress,
      });
      await killed();
      const [swaps] = outcome.results;
      expect([swaps!.status, swaps!.error!.cls, swaps!.failovers]).toEqual([
        'failed',
        'upstream-unreachable',
        undefined,
      ]);
      expect(swaps!.error!.message).toContain(
        `dodoex.swaps on bsc: the upstream host ${new URL(own.url).host} could not be reached`,
      );
      expect(events.filter((e) => e.event.startsWith('failover'))).toEqual([]);
    });
  });

  it('a run asked to stop before it starts ends stopped, with nothing half-written, and the next run completes it', async () => {
    const data = folder();
    const stop = new AbortController();
    stop.abort();
    const { outcome } = await exportOnce(data, { signal: stop.signal, datasets: ['dodoex.swaps'] });
    expect(outcome.stopped).toBe(true);
    // A task not started before the stop is left out: no result, no ledger row.
    expect(outcome.results).toEqual([]);
    await withWarehouse(data, async (w) => {
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM _pool_export.run_tasks')).toEqual([{ n: 0 }]);
      expect(await w.all('SELECT status FROM _pool_export.runs')).toEqual([{ status: 'stopped' }]);
      expect(await w.all('SELECT count(*)::INTEGER AS n FROM dodoex.swaps')).toEqual([{ n: 0 }]);
    });
    const again = await exportOnce(data, { datasets: ['dodoex.swaps'] });
    expect(again.outcome.stopped).toBe(false);
    expect((await compareWithSandbox(sb, data, [CHAIN], ['dodoex.swaps'])).mismatches).toEqual([]);
  });

  it('a scheduled run finds the folder held by a manual run: it says so, waits, and runs once the lock is free', async () => {
    const data = folder();
    const manual = await lockDataDir(data, { what: 'run of events', waitSecs: 0, onLost: () => {} });
    let waiting!: (e: Logged) => void;
    const waitSeen = new Promise<Logged>((r) => (waiting = r));
    const run = exportOnce(data, {
      datasets: ['dodoex.pairs'],
      waitLockSecs: 60,
      onEvent: (e) => e.event === 'lock-wait' && waiting(e),
    });
    const wait = await waitSeen;
    expect(wait.fields).toEqual({ owner: expect.stringMatching(/^pid \d+, run of events, since /), waitSecs: 60 });
    // Nothing of the run happened while the lock was held.
    expect(readdirSync(data)).not.toContain('warehouse.duckdb');
    await manual.release();
    const { outcome, events } = await run;
    expect(outcome.results.map((r) => r.status)).toEqual(['ok']);
    expect(events.map((e) => e.event).indexOf('lock-wait')).toBeLessThan(
      events.map((e) => e.event).indexOf('run-start'),
    );
    expect((await compareWithSandbox(sb, data, [CHAIN], ['dodoex.pairs'])).mismatches).toEqual([]);
  });

  it('the in-memory lake database holds the configured trusted tokens and threshold', async () => {
    const data = folder();
    await exportOnce(data, { datasets: ['dodoex.pairs'] });
    const tokens = [
      { chainId: CHAIN, token: '0xabc', symbol: 'ABC' },
      { chainId: 1, token: '0xdef', symbol: null },
    ];
    const lake = await openLakeDb(data, { tokens, minLiquidityUsd: 2500.5 });
    try {
      const r = await lake.conn.runAndReadAll(
        'SELECT chain_id, token, symbol FROM reports.trusted_tokens ORDER BY chain_id DESC',
      );
      expect(r.getRowObjects()).toEqual([
        { chain_id: CHAIN, token: '0xabc', symbol: 'ABC' },
        { chain_id: 1, token: '0xdef', symbol: null },
      ]);
      const m = await lake.conn.runAndReadAll('SELECT reports.min_tracked_liquidity_usd() AS m');
      expect(m.getRowObjects()).toEqual([{ m: 2500.5 }]);
    } finally {
      lake.close();
    }
  });
});
