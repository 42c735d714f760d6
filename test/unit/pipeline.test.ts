/**
 * The exporter's whole run called in-process (`runOnce`) against a real sandbox process and real DuckDB files, so
 * that mutation testing reaches the orchestration, the store, the ledger, the status file and the lake (the
 * integration tier runs the CLI as a child process, out of reach of per-test coverage). Each test makes its own data
 * folder and runs: Stryker runs only the tests that cover a mutant, so no test leans on another's state. Results are
 * checked against the sandbox's own rows (`compareWithSandbox`: count, digest and every typed column against the
 * upstream text through decimal.js), never against the exporter's own output. This file: exact exports, a second
 * run after a reorganisation and at the same head, and the lake's database; the ledger, batched first pages and a
 * failed task, and the upstream's failures, are in pipeline-*.test.ts beside it (fixture: test/support/pipeline-fixture.ts).
 */

import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { DATA_FOLDER_NAMES, dataFolder } from '../../src/config/data-folder.ts';
import { autoMemoryLimit } from '../../src/config/memory-limit.ts';
import { compactLake } from '../../src/lake/compact.ts';
import { openLakeDb, reportViews } from '../../src/reports/views.ts';
import type { SandboxProcess } from '../../src/sandbox/spawn.ts';
import { readStatusFile } from '../../src/store/status-file.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import {
  CHAIN,
  DATASETS,
  exportOnce,
  folder,
  partFiles,
  sb,
  swapsFingerprint,
  usePipelineFixture,
  withOwnSandbox,
  withWarehouse,
} from '../support/pipeline-fixture.ts';

usePipelineFixture();

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
