/**
 * The run ledger and the status file on a real warehouse file: what `status` reads while a run holds the warehouse.
 * Expected values are written out from the rows the test itself put in, not read back through the code under test.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { dataFolder } from '../../src/config/data-folder.ts';
import { createTable } from '../../src/store/ddl.ts';
import { type LedgerTask, RunLedger } from '../../src/store/run-ledger.ts';
import { readEntries } from '../../src/store/status-entries.ts';
import { readStatusFile, StatusKeeper } from '../../src/store/status-file.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

let dir: string;
let w: Warehouse;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-status-'));
  w = await Warehouse.open(dir);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Creates the swaps table as a run would. */
async function swapsTable(): Promise<void> {
  await w.exec('CREATE SCHEMA IF NOT EXISTS dodoex');
  await w.exec(createTable(findDataset('dodoex.swaps')!));
}

const task = (over: Partial<LedgerTask>): LedgerTask => ({
  chainId: 56,
  dataset: 'dodoex.swaps',
  status: 'ok',
  startedAt: new Date('2026-01-01T00:00:00Z'),
  endedAt: new Date('2026-01-01T00:01:00Z'),
  pages: 3,
  rows: 10,
  requests: 4,
  retries: 1,
  duplicates: 0,
  block: 100,
  cursorBefore: null,
  cursorAfter: '{"seq":5}',
  ...over,
});

describe('the run ledger', () => {
  it('records a run, its tasks, and closes it with the sums and the status the tasks give', async () => {
    const ledger = new RunLedger(w);
    await ledger.start('r1', ['events', 'state']);
    const tasks = [
      task({}),
      task({ dataset: 'dodoex.pairs', rows: 5, requests: 2, retries: 0 }),
      task({
        chainId: 1,
        status: 'failed',
        rows: 0,
        requests: 7,
        retries: 6,
        error: { cls: 'upstream-http', message: 'HTTP 500' },
      }),
    ];
    await ledger.tasks('r1', tasks);
    await ledger.finish('r1', tasks, false);
    expect(
      await w.all(
        'SELECT jobs, status, tasks::INTEGER AS t, failed::INTEGER AS f, rows::INTEGER AS r, requests::INTEGER AS q, retries::INTEGER AS y, error, ended_at IS NOT NULL AS ended FROM _pool_export.runs',
      ),
    ).toEqual([{ jobs: 'events,state', status: 'failed', t: 3, f: 1, r: 15, q: 13, y: 7, error: null, ended: true }]);
    expect(
      await w.all(
        "SELECT chain_id, dataset, status, pages::INTEGER AS p, block::INTEGER AS b, cursor_before, cursor_after, error_class, error, strftime(started_at AT TIME ZONE 'UTC', '%H:%M') AS s FROM _pool_export.run_tasks ORDER BY chain_id, dataset",
      ),
    ).toEqual([
      {
        chain_id: 1,
        dataset: 'dodoex.swaps',
        status: 'failed',
        p: 3,
        b: 100,
        cursor_before: null,
        cursor_after: '{"seq":5}',
        error_class: 'upstream-http',
        error: 'HTTP 500',
        s: '00:00',
      },
      {
        chain_id: 56,
        dataset: 'dodoex.pairs',
        status: 'ok',
        p: 3,
        b: 100,
        cursor_before: null,
        cursor_after: '{"seq":5}',
        error_class: null,
        error: null,
        s: '00:00',
      },
      {
        chain_id: 56,
        dataset: 'dodoex.swaps',
        status: 'ok',
        p: 3,
        b: 100,
        cursor_before: null,
        cursor_after: '{"seq":5}',
        error_class: null,
        error: null,
        s: '00:00',
      },
    ]);
    await ledger.start('r2', []);
    await ledger.finish('r2', [task({})], true);
    const r2 = await w.all("SELECT status, error FROM _pool_export.runs WHERE run_id = 'r2'");
    expect(r2).toEqual([
      { status: 'stopped', error: 'stopped on request; the next run resumes from the last committed batch' },
    ]);
    await ledger.start('r3', []);
    await ledger.finish('r3', [task({})], false);
    expect(await w.all("SELECT status FROM _pool_export.runs WHERE run_id = 'r3'")).toEqual([{ status: 'ok' }]);
  });
});

describe('the status file', () => {
  it('lists each dataset and chain with a checkpoint or a task: rows, block, last success, last error', async () => {
    await w.exec(
      "INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, block, block_time) VALUES (56, 'dodoex.swaps', 'c', 100, TIMESTAMPTZ '2026-01-01 00:00:05+00')",
    );
    await swapsTable();
    await w.exec("INSERT INTO dodoex.swaps (chain_id, id) VALUES (56, 'a'), (56, 'b'), (1, 'c')");
    const ledger = new RunLedger(w);
    await ledger.start('r1', []);
    await ledger.tasks('r1', [
      task({ route: 'route one' }),
      task({ chainId: 1, dataset: 'dodoex.pairs', status: 'failed', error: { cls: 'x', message: 'boom' } }),
    ]);
    await ledger.start('r2', []);
    await ledger.tasks('r2', [
      task({
        status: 'failed',
        startedAt: new Date('2026-01-02T00:00:00Z'),
        endedAt: new Date('2026-01-02T00:00:09Z'),
        error: { cls: 'x', message: 'later' },
        route: 'route two',
      }),
    ]);
    // Verifications of swaps on 56: an older one with gaps; the last one, of two identities (their gaps summed); and a
    // later one that checked nothing (skipped), which does not count.
    await w.exec(
      `INSERT INTO _pool_export.verifications (run_id, chain_id, dataset, identity, checked_at, groups, gaps, skipped, error) VALUES
        ('v1', 56, 'dodoex.swaps', 'swaps per pool and day', TIMESTAMPTZ '2026-01-01 00:00:00+00', 9, 4, NULL, NULL),
        ('v2', 56, 'dodoex.swaps', 'swaps per pool and day', TIMESTAMPTZ '2026-01-02 00:00:00+00', 9, 0, NULL, NULL),
        ('v2', 56, 'dodoex.swaps', 'lake rows', TIMESTAMPTZ '2026-01-02 00:00:01+00', 3, 1, NULL, 'the lake was slow'),
        ('v3', 56, 'dodoex.swaps', 'swaps per pool and day', TIMESTAMPTZ '2026-01-03 00:00:00+00', 0, 0, 'not yet', NULL)`,
    );
    expect(await readEntries(w)).toEqual([
      {
        dataset: 'dodoex.pairs',
        chainId: 1,
        lastSuccess: null,
        lastStatus: 'failed',
        lastError: 'boom',
        rows: 0,
        block: null,
        blockTime: null,
        route: null,
        verification: null,
      },
      {
        dataset: 'dodoex.swaps',
        chainId: 56,
        lastSuccess: '2026-01-01T00:01:00.000Z',
        lastStatus: 'failed',
        lastError: 'later',
        rows: 2,
        block: 100,
        blockTime: '2026-01-01T00:00:05.000Z',
        // The route of the last task.
        route: 'route two',
        verification: { at: '2026-01-02T00:00:01.000Z', gaps: 1, error: 'the lake was slow' },
      },
    ]);
    expect(await readEntries(w, { dataset: 'dodoex.swaps', chainId: 56 })).toHaveLength(1);
    // A ledger written by a version without routes (read-only, not upgraded): no route, the rest as before.
    await w.exec('ALTER TABLE _pool_export.run_tasks DROP COLUMN route');
    await w.close();
    w = await Warehouse.open(dir, { readOnly: true });
    expect((await readEntries(w)).map((e) => [e.dataset, e.lastError, e.route])).toEqual([
      ['dodoex.pairs', 'boom', null],
      ['dodoex.swaps', 'later', null],
    ]);
    expect(await readEntries(w, { dataset: 'dodoex.swaps', chainId: 1 })).toEqual([]);
  });

  it("reads a task's rows again at most once a second, and every entry at the run's end", async () => {
    let clock = Date.parse('2026-01-03T00:00:00Z');
    await swapsTable();
    const keeper = await StatusKeeper.start(w, dir, 'run-1');
    keeper.now = () => clock;
    const ended = (endedAt: string) =>
      keeper.taskEnded({ dataset: 'dodoex.swaps', chainId: 56, status: 'ok', error: null, endedAt: new Date(endedAt) });
    const rows = () => readStatusFile(dir)!.entries.find((e) => e.dataset === 'dodoex.swaps')!.rows;
    await w.exec("INSERT INTO dodoex.swaps (chain_id, id) VALUES (56, 'a')");
    await w.exec(
      "INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, block, block_time) VALUES (56, 'dodoex.swaps', 'c', 100, TIMESTAMPTZ '2026-01-01 00:00:05+00')",
    );
    // Not seen yet: read at once.
    await ended('2026-01-03T00:00:00Z');
    expect(rows()).toBe(1);
    await w.exec("INSERT INTO dodoex.swaps (chain_id, id) VALUES (56, 'b')");
    clock += 999;
    await ended('2026-01-03T00:00:01Z');
    // Within the second: the file is written when the second ends, with the outcome and the count read before.
    expect(readStatusFile(dir)!.entries[0]!.lastSuccess).toBe('2026-01-03T00:00:00.000Z');
    await new Promise((r) => setTimeout(r, 50));
    expect(rows()).toBe(1);
    expect(readStatusFile(dir)!.entries[0]!.lastSuccess).toBe('2026-01-03T00:00:01.000Z');
    clock += 1;
    await w.exec(
      "UPDATE _pool_export.checkpoints SET block = 101, block_time = TIMESTAMPTZ '2026-01-01 00:00:07+00' WHERE dataset = 'dodoex.swaps'",
    );
    await ended('2026-01-03T00:00:02Z');
    // Read again (a second since the last read), rows and block, and written a second after the last write.
    await new Promise((r) => setTimeout(r, 1100));
    expect(rows()).toBe(2);
    expect(readStatusFile(dir)!.entries[0]).toMatchObject({ block: 101, blockTime: '2026-01-01T00:00:07.000Z' });
    await w.exec("INSERT INTO dodoex.swaps (chain_id, id) VALUES (56, 'c')");
    await ended('2026-01-03T00:00:03Z');
    expect(rows()).toBe(2);
    await keeper.end();
    expect(rows()).toBe(3);
  });

  it('a run keeps the file current: at its start, after each task, and rebuilt from the warehouse at its end', async () => {
    expect(readStatusFile(dir)).toBeUndefined();
    const keeper = await StatusKeeper.start(w, dir, 'run-1');
    // A second between the tasks' ends: each is written at once (see the once-a-second test for what is within one).
    let clock = Date.now();
    keeper.now = () => (clock += 1000);
    let file = readStatusFile(dir)!;
    expect(file.run).toEqual({ id: 'run-1', pid: process.pid, startedAt: expect.any(String), state: 'running' });
    expect(file.entries).toEqual([]);
    await swapsTable();
    await w.exec("INSERT INTO dodoex.swaps (chain_id, id) VALUES (56, 'a')");
    await keeper.taskEnded({
      dataset: 'dodoex.swaps',
      chainId: 56,
      status: 'failed',
      error: 'boom',
      endedAt: new Date('2026-01-03T00:00:00Z'),
    });
    file = readStatusFile(dir)!;
    expect(file.entries).toEqual([
      {
        dataset: 'dodoex.swaps',
        chainId: 56,
        lastSuccess: null,
        lastStatus: 'failed',
        lastError: 'boom',
        rows: 0,
        block: null,
        blockTime: null,
      },
    ]);
    await keeper.taskEnded({
      dataset: 'dodoex.swaps',
      chainId: 56,
      status: 'ok',
      error: 'ignored',
      endedAt: new Date('2026-01-04T00:00:00Z'),
    });
    await keeper.taskEnded({
      dataset: 'dodoex.pairs',
      chainId: 1,
      status: 'failed',
      error: 'x',
      endedAt: new Date('2026-01-04T00:00:00Z'),
    });
    file = readStatusFile(dir)!;
    expect(file.entries.map((e) => [e.dataset, e.chainId, e.lastStatus, e.lastError, e.lastSuccess])).toEqual([
      ['dodoex.pairs', 1, 'failed', 'x', null],
      ['dodoex.swaps', 56, 'ok', null, '2026-01-04T00:00:00.000Z'],
    ]);
    // The end rebuilds the file from the warehouse, where no ledger row was written here: no entries are left.
    await keeper.end();
    file = readStatusFile(dir)!;
    expect(file.run.state).toBe('ended');
    expect(file.entries).toEqual([]);
    expect(existsSync(`${dataFolder(dir).status}.tmp`)).toBe(false);
    expect(readFileSync(dataFolder(dir).status, 'utf8').endsWith('\n')).toBe(true);
  });
});
