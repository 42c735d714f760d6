/**
 * The run ledger on a real warehouse file: every task's record read back as it was handed over, whatever its texts
 * hold, in one statement however many tasks there are; and the ledger kept to its last runs, the rows it keeps beyond
 * them written out by hand.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type LedgerTask, pruneLedger, RunLedger } from '../../src/store/run-ledger.ts';
import { readEntries } from '../../src/store/status-entries.ts';
import { Warehouse } from '../../src/store/warehouse.ts';

let dir: string;
let w: Warehouse;
beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-ledger-'));
  w = await Warehouse.open(dir);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

const task = (i: number, over: Partial<LedgerTask> = {}): LedgerTask => ({
  chainId: 56,
  dataset: `dodoex.t${i}`,
  status: 'ok',
  startedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)),
  endedAt: new Date(Date.UTC(2026, 0, 1, 0, 1, i)),
  pages: i,
  rows: 1_000_000_000_000 + i,
  requests: i + 1,
  retries: 0,
  duplicates: 0,
  block: 31_000_000 + i,
  cursorBefore: null,
  cursorAfter: JSON.stringify({ seq: String(i), id: `0x${i}` }),
  ...over,
});

describe('the run ledger', () => {
  it('stores each task as given: numbers, times, nulls, routes and failovers as JSON, hostile error text byte for byte', async () => {
    const ledger = new RunLedger(w);
    await ledger.start('r1', ['events']);
    const hostile = 'a "quoted" \\ back\u0000nul \u001b[2J\u202e rtl \u{1F600} \'\'; DROP TABLE x; -- {"json":1}';
    const tasks = [
      task(1),
      task(2, {
        status: 'failed',
        cursorBefore: '{"seq":"1"}',
        cursorAfter: null,
        block: null,
        error: { cls: 'http', message: hostile },
        route: 'gateway',
        routes: [{ label: 'gateway', head: 5, lagBlocks: 0, state: 'chosen', note: null }],
        failovers: [{ from: 'a', to: 'b', block: 7, reason: 'r' }],
        duplicates: 3,
      }),
      task(3, { status: 'unavailable', error: { cls: 'unavailable', message: 'lone \ud800 half' } }),
    ];
    await ledger.tasks('r1', tasks);
    const rows = await w.all(
      `SELECT run_id, chain_id, dataset, epoch_ms(started_at) AS s, epoch_ms(ended_at) AS e, status, pages, rows::VARCHAR AS rows,
              requests, retries, block, cursor_before, cursor_after, error_class, error, duplicate_ids, route, routes, failovers
       FROM _pool_export.run_tasks ORDER BY dataset`,
    );
    expect(rows).toHaveLength(3);
    tasks.forEach((t, i) => {
      const r = rows[i]!;
      expect(r).toMatchObject({
        run_id: 'r1',
        chain_id: 56,
        dataset: t.dataset,
        // BIGINTs come back as text.
        s: String(t.startedAt.getTime()),
        e: String(t.endedAt.getTime()),
        status: t.status,
        pages: t.pages,
        rows: String(t.rows),
        requests: t.requests,
        retries: 0,
        block: t.block === null ? null : String(t.block),
        cursor_before: t.cursorBefore,
        cursor_after: t.cursorAfter,
        error_class: t.error?.cls ?? null,
        duplicate_ids: t.duplicates,
        route: t.route ?? null,
      });
      expect(r.routes === null ? null : JSON.parse(String(r.routes))).toEqual(t.routes ?? null);
      expect(r.failovers === null ? null : JSON.parse(String(r.failovers))).toEqual(t.failovers ?? null);
    });
    expect(rows[0]!.error).toBeNull();
    expect(rows[1]!.error).toBe(hostile);
    // A lone surrogate half cannot be UTF-8: it is stored as U+FFFD, as DuckDB stores any bound string holding one.
    expect(rows[2]!.error).toBe('lone \ufffd half');
  });

  it('records a run of 400 tasks, every one of them', async () => {
    const ledger = new RunLedger(w);
    await ledger.start('r2', ['all']);
    await ledger.tasks(
      'r2',
      Array.from({ length: 400 }, (_, i) => task(i)),
    );
    const [n] = await w.all(
      'SELECT count(*)::INTEGER AS n, count(DISTINCT dataset)::INTEGER AS d, sum(pages)::INTEGER AS p FROM _pool_export.run_tasks',
    );
    expect(n).toEqual({ n: 400, d: 400, p: (399 * 400) / 2 });
  });
});

describe('the ledger kept to its last runs', () => {
  /** Run `r<i>` started at minute i of 2026-01-01, with the given tasks (`[chain, dataset, status]`), ended a second later. */
  async function run(i: number, tasks: readonly (readonly [number, string, string])[]) {
    const at = `2026-01-01 00:${String(i).padStart(2, '0')}:00+00`;
    await w.exec(`INSERT INTO _pool_export.runs (run_id, started_at, status) VALUES ($1, $2::TIMESTAMPTZ, 'ok')`, [
      `r${i}`,
      at,
    ]);
    for (const [chain, dataset, status] of tasks)
      await w.exec(
        `INSERT INTO _pool_export.run_tasks (run_id, chain_id, dataset, started_at, ended_at, status, error, route)
         VALUES ($1, $2, $3, $4::TIMESTAMPTZ, $4::TIMESTAMPTZ + INTERVAL 1 SECOND, $5, $6, $7)`,
        [`r${i}`, chain, dataset, at, status, status === 'ok' ? null : `failed in r${i}`, `route of r${i}`],
      );
  }
  const verified = (run: string, dataset: string, minute: number, skipped: string | null = null) =>
    w.exec(
      `INSERT INTO _pool_export.verifications (run_id, chain_id, dataset, identity, checked_at, gaps, skipped)
       VALUES ($1, 1, $2, 'count', $3::TIMESTAMPTZ, $4, $5)`,
      [run, dataset, `2026-01-01 00:${String(minute).padStart(2, '0')}:30+00`, minute, skipped],
    );
  const left = async (sql: string) => (await w.all(sql)).map((r) => Object.values(r).join('/'));

  it('deletes the runs before the last ones, but for the rows a checkpoint, a status or a verification still reads, and status reads the same', async () => {
    // 30 runs. a (chain 1): ok in each. b (chain 1): ok in r5, failed from r6 on. c (chain 56): ok in r2, failed in r3,
    // then out of the plan. d: ok from r7 on, and its checkpoint still names r7 (nothing new since); e: likewise from r8
    // on, with a shard checkpoint.
    for (let i = 1; i <= 30; i++)
      await run(i, [
        [1, 'a', 'ok'],
        [1, 'b', i <= 5 ? 'ok' : 'failed'],
        ...(i <= 3 ? [[56, 'c', i === 3 ? 'failed' : 'ok'] as const] : []),
        ...(i >= 7 ? [[1, 'd', 'ok'] as const] : []),
        ...(i >= 8 ? [[1, 'e', 'ok'] as const] : []),
      ]);
    await w.exec(
      `INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, run_id) VALUES (1, 'd', '{}', 'r7')`,
    );
    await w.exec(
      `INSERT INTO _pool_export.shard_checkpoints (chain_id, dataset, shard, shards, cursor, run_id) VALUES (1, 'e', 0, 2, '{}', 'r8')`,
    );
    // a verified by every run, and once by the command before r1; b's last verification that counted was r4's (r9's
    // was skipped).
    for (let i = 1; i <= 30; i++) await verified(`r${i}`, 'a', i);
    await verified('verify-x', 'a', 0);
    await verified('r4', 'b', 4);
    await verified('r9', 'b', 9, 'its first backfill is under way');
    const before = await readEntries(w);

    // Kept: the last 10 runs (r21-r30), and then only what is still read.
    // Of the 70 task rows of r1-r20 (a and b 20 each, c 3, d 14, e 13), 5 stay: c's of r2 (its last success) and r3
    // (its last task), b's of r5 (its last success), d's of r7 and e's of r8 (their checkpoints).
    expect(await pruneLedger(w, 10)).toBe(70 - 5);
    expect(await left('SELECT run_id FROM _pool_export.runs ORDER BY started_at')).toEqual([
      'r2',
      'r3',
      'r4',
      'r5',
      'r7',
      'r8',
      ...Array.from({ length: 10 }, (_, k) => `r${21 + k}`),
    ]);
    expect(
      await left(
        `SELECT run_id, chain_id, dataset FROM _pool_export.run_tasks WHERE run_id NOT IN ('r21','r22','r23','r24','r25','r26','r27','r28','r29','r30') ORDER BY started_at, dataset`,
      ),
    ).toEqual(['r2/56/c', 'r3/56/c', 'r5/1/b', 'r7/1/d', 'r8/1/e']);
    expect(await left('SELECT count(*) FROM _pool_export.run_tasks')).toEqual([String(5 + 10 * 4)]);
    expect(
      await left(
        `SELECT run_id, dataset FROM _pool_export.verifications WHERE checked_at < '2026-01-01 00:21:00+00' ORDER BY checked_at`,
      ),
    ).toEqual(['r4/b']);
    expect(await left('SELECT count(*) FROM _pool_export.verifications')).toEqual(['11']);
    expect(await readEntries(w)).toEqual(before);

    // Within a tenth of the runs kept since it last pruned, it deletes nothing; past it, the two oldest of the last runs
    // go (the tasks of a, b, d and e in r21 and r22), and status still reads the same.
    await run(31, [[1, 'a', 'ok']]);
    expect(await pruneLedger(w, 10)).toBe(0);
    expect(await left('SELECT count(*) FROM _pool_export.runs')).toEqual(['17']);
    await run(32, [[1, 'a', 'ok']]);
    const later = await readEntries(w);
    expect(await pruneLedger(w, 10)).toBe(8);
    expect(await left(`SELECT count(*) FROM _pool_export.runs WHERE run_id IN ('r21', 'r22')`)).toEqual(['0']);
    expect(await left('SELECT count(*) FROM _pool_export.runs')).toEqual(['16']);
    expect(await readEntries(w)).toEqual(later);
  });
});
