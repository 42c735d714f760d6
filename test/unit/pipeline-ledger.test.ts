/**
 * The exporter's whole run called in-process (`runOnce`, as test/unit/pipeline.test.ts says) against a real sandbox
 * process and real DuckDB files: the ledger kept to its last runs, a run's first pages asked in one batched request,
 * a mutable window larger than a page, and a task that fails after committing pages. Checked against the sandbox's
 * own rows.
 */
import { execFileSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import type { SandboxProcess } from '../../src/sandbox/spawn.ts';
import { readStatusFile } from '../../src/store/status-file.ts';
import { progressOn } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import {
  CHAIN,
  DATASETS,
  exportOnce,
  folder,
  usePipelineFixture,
  withOwnSandbox,
  withWarehouse,
} from '../support/pipeline-fixture.ts';

usePipelineFixture();

describe('one run in-process', () => {
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
});
