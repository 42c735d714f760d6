/**
 * The DuckDB sink on a real warehouse file: what each kind of batch replaces, the checkpoint it moves by
 * compare-and-set, the ids it reports replaced, and what it leaves for the lake. Expected tables are written out by
 * hand from the rules in `store/sink.ts`'s `Replace`, not computed by its statements.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import { ConcurrentWriterError } from '../../src/errors.ts';
import type { Batch, Replace } from '../../src/store/batch.ts';
import { createTable } from '../../src/store/ddl.ts';
import { DuckDBSink } from '../../src/store/sink.ts';
import { commitLanes } from '../../src/store/sink-lanes.ts';
import type { Sql } from '../../src/store/sql-port.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { PROBE_ROWS, probeDataset } from '../support/probes.ts';
import { fakeDataset } from '../support/task-fakes.ts';

let dir: string;
let w: Warehouse;
let sink: DuckDBSink;
const EVENTS = fakeDataset('event');
const STATE = fakeDataset('mutable');
const BUCKETS = fakeDataset('bucket');
const LIST = fakeDataset('list');
const SNAP = fakeDataset('snapshot');

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-sink-'));
  w = await Warehouse.open(dir);
  await w.exec('CREATE SCHEMA IF NOT EXISTS fake');
  for (const ds of [EVENTS, STATE, LIST, BUCKETS, SNAP]) await w.exec(createTable(ds));
  sink = new DuckDBSink(w, dir);
});
afterEach(async () => {
  await w.close();
  rmSync(dir, { recursive: true, force: true });
});

const row = (ds: Dataset, id: string, seq: number | null, value: string | null = `v-${id}`) => ({
  id,
  [ds.seq!]: seq === null ? null : String(seq),
  value,
});

/** A batch of `rows` on chain 56 moving the checkpoint from `prev` to `next`. */
function batch(
  ds: Dataset,
  rows: Record<string, unknown>[],
  move: { prev: string | null; next: string; replace: Replace },
): Batch {
  return {
    ds,
    chainId: 56,
    runId: 'r1',
    block: 100,
    blockTime: '2026-01-01T00:00:00Z',
    rows,
    pages: [],
    count: rows.length,
    replace: move.replace,
    checkpoint: { prev: move.prev, next: move.next },
  };
}

async function stored(ds: Dataset): Promise<string[]> {
  const seq = ds.seq!;
  const rows = await w.all(`SELECT id, CAST("${seq}" AS VARCHAR) AS s, value FROM ${qt(ds.table)} ORDER BY id`);
  return rows.map((r) => `${r.id}@${r.s ?? 'null'}=${r.value}`);
}

/** Records every statement the sink runs inside its transactions, one list per transaction. */
function spyStatements(): string[][] {
  const txs: string[][] = [];
  const transaction = w.transaction.bind(w);
  w.transaction = ((fn: Parameters<Warehouse['transaction']>[0]) =>
    transaction((tx) => {
      const seen: string[] = [];
      txs.push(seen);
      return fn({
        exec: (sql, params) => {
          seen.push(sql);
          return tx.exec(sql, params);
        },
        all: (sql, params) => {
          seen.push(sql);
          return tx.all(sql, params);
        },
      });
    })) as Warehouse['transaction'];
  return txs;
}

const checkpoint = async (ds: Dataset) =>
  (await w.all('SELECT cursor FROM _pool_export.checkpoints WHERE dataset = $1', [ds.name]))[0]?.cursor ?? null;
const pending = async () =>
  (await w.all('SELECT dataset, from_seq FROM _pool_export.lake_pending ORDER BY dataset')).map((r) => ({
    dataset: r.dataset,
    from_seq: r.from_seq === null ? null : Number(r.from_seq),
  }));

describe('the DuckDB sink', () => {
  it("'from' replaces the chain's rows from a key on, keeps the older ones, and marks the lake from there", async () => {
    await sink.write(
      batch(EVENTS, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'c', 30)], {
        prev: null,
        next: '1',
        replace: { kind: 'from', column: 'timestamp', from: 0 },
      }),
    );
    const w2 = await sink.write(
      batch(EVENTS, [row(EVENTS, 'd', 25, 'new')], {
        prev: '1',
        next: '2',
        replace: { kind: 'from', column: 'timestamp', from: 20 },
      }),
    );
    expect(await stored(EVENTS)).toEqual(['a@10=v-a', 'd@25=new']);
    expect(w2).toEqual({ rows: 1, replacedIds: [] });
    expect(await checkpoint(EVENTS)).toBe('2');
    // From the earliest row either batch wrote or removed: a@10 (the first), then b@20 and c@30 (removed).
    expect(await pending()).toEqual([{ dataset: EVENTS.name, from_seq: 10 }]);
  });

  /** Each stored row with the run that wrote it. */
  const runs = async (ds: Dataset) =>
    (await w.all(`SELECT id, _run_id FROM ${qt(ds.table)} ORDER BY id`)).map((r) => `${r.id}:${r._run_id}`);
  const again = (b: Batch, runId: string): Batch => ({ ...b, runId, block: 200 });

  it("a 'from' window read again unchanged writes nothing: the rows keep their run, the lake is not marked, the checkpoint moves", async () => {
    // A null compares equal to a null: a row with one is unchanged too.
    const three = [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20, null), row(EVENTS, 'c', 30)];
    await sink.write(
      batch(EVENTS, three, { prev: null, next: '1', replace: { kind: 'from', column: 'timestamp', from: 0 } }),
    );
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const w2 = await sink.write(
      again(
        batch(EVENTS, three.slice(1), {
          prev: '1',
          next: '2',
          replace: { kind: 'from', column: 'timestamp', from: 20 },
        }),
        'r2',
      ),
    );
    expect(w2).toEqual({ rows: 0, replacedIds: [] });
    expect(await stored(EVENTS)).toEqual(['a@10=v-a', 'b@20=null', 'c@30=v-c']);
    expect(await runs(EVENTS)).toEqual(['a:r1', 'b:r1', 'c:r1']);
    expect(await pending()).toEqual([]);
    expect(await checkpoint(EVENTS)).toBe('2');
  });

  /** A liquidity-list snapshot of `rows` by run `runId` at `block`, taken at `takenAt`. */
  const listSnapshot = (rows: [string, string | null][], runId: string, block: number, takenAt: string): Batch => ({
    ...batch(
      LIST,
      rows.map(([id, value]) => ({ id, value })),
      { prev: null, next: String(block), replace: { kind: 'snapshot' } },
    ),
    runId,
    block,
    takenAt,
  });
  /** The stored snapshots: each row with its block, run and time taken (ISO minutes). */
  const snapshots = async () =>
    (
      await w.all(
        `SELECT id, value, _block, _run_id, strftime(_taken_at AT TIME ZONE 'UTC', '%d %H:%M') AS t FROM ${qt(LIST.table)} ORDER BY _block, id`,
      )
    ).map((r) => `${r.id}=${r.value ?? 'null'} @${r._block} ${r._run_id} ${r.t}`);
  const moveList = (b: Batch, prev: string): Batch => ({ ...b, checkpoint: { prev, next: String(b.block) } });

  for (const how of ['by its digest', 'row by row (no digest recorded: a warehouse of an earlier version)'])
    it(`a list snapshot equal to the day's last one (nulls alike) stores nothing and marks no lake, found ${how}; a changed one, or one of the next day, is stored`, async () => {
      const forget = how.startsWith('row') ? () => w.exec('DELETE FROM _pool_export.snapshot_digests') : async () => 0;
      const txs = spyStatements();
      const pools: [string, string | null][] = [
        ['p1', 'a'],
        ['p2', null],
        ['p3', '<b>x</b>\u001b[31m'],
      ];
      await sink.write(listSnapshot(pools, 'r1', 100, '2026-01-01T10:00:00Z'));
      await w.exec('DELETE FROM _pool_export.lake_pending');
      await forget();
      // Same rows, in another order, at a later block of the same day: nothing written, the checkpoint still moves.
      const same = await sink.write(
        moveList(listSnapshot([...pools].reverse(), 'r2', 110, '2026-01-01T10:15:00Z'), '100'),
      );
      expect(same).toEqual({ rows: 0, replacedIds: [] });
      expect(await pending()).toEqual([]);
      expect(await checkpoint(LIST)).toBe('110');
      await forget();
      // The same read again at the block already stored (a run that saw the same head): nothing either.
      expect(await sink.write(moveList(listSnapshot(pools, 'r3', 100, '2026-01-01T10:00:00Z'), '110'))).toEqual({
        rows: 0,
        replacedIds: [],
      });
      const first = ['p1=a @100 r1 01 10:00', 'p2=null @100 r1 01 10:00', 'p3=<b>x</b>\u001b[31m @100 r1 01 10:00'];
      expect(await snapshots()).toEqual(first);
      await forget();
      // One value changed (a null that became a value counts): a new snapshot, all of its rows, and a lake mark.
      const changed: [string, string | null][] = [pools[0]!, ['p2', ''], pools[2]!];
      expect(await sink.write(moveList(listSnapshot(changed, 'r4', 120, '2026-01-01T10:30:00Z'), '100'))).toEqual({
        rows: 3,
        replacedIds: [],
      });
      expect(await pending()).toEqual([{ dataset: LIST.name, from_seq: null }]);
      // A pool fewer, or one more, is a change too.
      await w.exec('DELETE FROM _pool_export.lake_pending');
      await forget();
      expect(
        (await sink.write(moveList(listSnapshot(changed.slice(0, 2), 'r5', 130, '2026-01-01T10:45:00Z'), '120'))).rows,
      ).toBe(2);
      expect((await sink.write(moveList(listSnapshot(changed, 'r6', 140, '2026-01-01T11:00:00Z'), '130'))).rows).toBe(
        3,
      );
      await forget();
      // The first snapshot of a new UTC day is stored even when equal to the last one: each day keeps its own.
      expect((await sink.write(moveList(listSnapshot(changed, 'r7', 150, '2026-01-02T00:00:00Z'), '140'))).rows).toBe(
        3,
      );
      const rows = await snapshots();
      expect(rows.slice(0, 3)).toEqual(first);
      expect(rows.filter((r) => r.includes(' r4 ')).length).toBe(3);
      expect(rows.filter((r) => r.includes(' r5 ')).length).toBe(2);
      expect(rows.filter((r) => r.includes(' r6 ')).length).toBe(3);
      expect(rows.filter((r) => r.includes(' r7 02 00:00')).length).toBe(3);
      expect(rows.length).toBe(14);
      // The digest spares reading the rows: no statement compared them.
      expect(txs.flat().some((q) => q.includes('_pe_incoming'))).toBe(how.startsWith('row'));
      // A snapshot no longer stored whole (retention, a repair) is never taken as the one read again.
      await w.exec(`DELETE FROM ${qt(LIST.table)} WHERE _run_id = 'r7' AND id = 'p3'`);
      expect((await sink.write(moveList(listSnapshot(changed, 'r8', 160, '2026-01-02T00:15:00Z'), '150'))).rows).toBe(
        3,
      );
    });

  it('a list snapshot stored without a block or a run (a column left empty by an earlier version) is compared row by row, and an equal one is not stored again', async () => {
    const pools: [string, string | null][] = [
      ['p1', 'a'],
      ['p2', null],
    ];
    await sink.write(listSnapshot(pools, 'r1', 100, '2026-01-01T10:00:00Z'));
    await w.exec(`UPDATE ${qt(LIST.table)} SET _block = NULL, _run_id = NULL`);
    await w.exec('DELETE FROM _pool_export.snapshot_digests');
    await w.exec('DELETE FROM _pool_export.lake_pending');
    expect(await sink.write(moveList(listSnapshot(pools, 'r2', 110, '2026-01-01T10:15:00Z'), '100'))).toEqual({
      rows: 0,
      replacedIds: [],
    });
    expect(await snapshots()).toEqual(['p1=a @null null 01 10:00', 'p2=null @null null 01 10:00']);
    expect(await pending()).toEqual([]);
    // A changed one is stored.
    expect((await sink.write(moveList(listSnapshot([pools[0]!], 'r3', 120, '2026-01-01T10:30:00Z'), '110'))).rows).toBe(
      1,
    );
  });

  for (const how of ['by its digest', 'row by row (no digest recorded)'])
    it(`an entity snapshot equal to the stored one is not stored again at the same block, and is at a later one of the same day (found ${how})`, async () => {
      const forget = how.startsWith('row') ? () => w.exec('DELETE FROM _pool_export.snapshot_digests') : async () => 0;
      const take = (runId: string, block: number, takenAt: string, prev: string | null): Batch => ({
        ...batch(SNAP, [{ id: 'global', value: '7' }], { prev, next: String(block), replace: { kind: 'snapshot' } }),
        runId,
        block,
        takenAt,
      });
      const rows = async () =>
        (await w.all(`SELECT id, value, _block, _run_id FROM ${qt(SNAP.table)} ORDER BY _block`)).map(
          (r) => `${r.id}=${r.value} @${r._block} ${r._run_id}`,
        );
      expect((await sink.write(take('r1', 100, '2026-01-01T10:00:00Z', null))).rows).toBe(1);
      await w.exec('DELETE FROM _pool_export.lake_pending');
      await forget();
      // The same head read again: the stored snapshot stands for it.
      expect(await sink.write(take('r2', 100, '2026-01-01T10:05:00Z', '100'))).toEqual({ rows: 0, replacedIds: [] });
      expect(await pending()).toEqual([]);
      await forget();
      // A later block: an entity's snapshot is kept per block, however like the last one (the list's rule of one a
      // day is the list's alone).
      expect((await sink.write(take('r3', 110, '2026-01-01T10:10:00Z', '100'))).rows).toBe(1);
      expect(await rows()).toEqual(['global=7 @100 r1', 'global=7 @110 r3']);
      expect(await checkpoint(SNAP)).toBe('110');
    });

  it('a snapshot replaces the one stored at its block, and a block-less list the one of its run; every other stays', async () => {
    const take = (ds: Dataset, value: string, runId: string, block: number | null, move: [string | null, string]) => ({
      ...batch(ds, [{ id: 'global', value }], { prev: move[0], next: move[1], replace: { kind: 'snapshot' } }),
      runId,
      block,
      takenAt: '2026-01-01T10:00:00Z',
    });
    const rows = async (ds: Dataset) =>
      (await w.all(`SELECT value, _block, _run_id FROM ${qt(ds.table)} ORDER BY _run_id, value`)).map(
        (r) => `${r.value} @${r._block} ${r._run_id}`,
      );
    // An entity's snapshot by one run at two blocks: both kept.
    await sink.write(take(SNAP, '7', 'r1', 100, [null, '100']));
    await sink.write(take(SNAP, '8', 'r1', 110, ['100', '110']));
    expect(await rows(SNAP)).toEqual(['7 @100 r1', '8 @110 r1']);
    // Another one at block 110 (a route at the same height that answered otherwise) stands alone for it.
    expect((await sink.write(take(SNAP, '9', 'r2', 110, ['110', '110']))).rows).toBe(1);
    expect(await rows(SNAP)).toEqual(['7 @100 r1', '9 @110 r2']);
    // The list read with no block: a run's second read replaces its first, another run's read is kept beside it.
    await sink.write(take(LIST, 'a', 'r1', null, [null, 'l1']));
    await sink.write(take(LIST, 'b', 'r1', null, ['l1', 'l2']));
    expect(await rows(LIST)).toEqual(['b @null r1']);
    await sink.write(take(LIST, 'c', 'r2', null, ['l2', 'l3']));
    expect(await rows(LIST)).toEqual(['b @null r1', 'c @null r2']);
  });

  it('tells the lake to search its files only when rows of another run left: a snapshot at a stored block, a re-read', async () => {
    const take = (ds: Dataset, value: string, runId: string, block: number | null, move: [string | null, string]) => ({
      ...batch(ds, [{ id: 'global', value }], { prev: move[0], next: move[1], replace: { kind: 'snapshot' } }),
      runId,
      block,
      takenAt: '2026-01-01T10:00:00Z',
    });
    const dropped = async (ds: Dataset) =>
      (await w.all('SELECT dropped FROM _pool_export.lake_pending WHERE dataset = $1', [ds.name]))[0]?.dropped;
    // A snapshot at a block none was stored at, and the next at another: nothing of another run left.
    await sink.write(take(SNAP, '7', 'r1', 100, [null, '100']));
    expect(await dropped(SNAP)).toBe(false);
    await sink.write(take(SNAP, '8', 'r2', 110, ['100', '110']));
    expect(await dropped(SNAP)).toBe(false);
    // Block 110 taken again: r2's row left the warehouse, and the lake must lose it too.
    await sink.write(take(SNAP, '9', 'r3', 110, ['110', '110']));
    expect(await dropped(SNAP)).toBe(true);
    // The entry, not yet written to the lake, keeps saying so after a commit that took nothing out.
    await sink.write(take(SNAP, '10', 'r4', 120, ['110', '120']));
    expect(await dropped(SNAP)).toBe(true);
    // The block-less list: a run's second read replaces its own first, rows no other run's lake write holds.
    await sink.write(take(LIST, 'a', 'r1', null, [null, 'l1']));
    await sink.write(take(LIST, 'b', 'r1', null, ['l1', 'l2']));
    expect(await dropped(LIST)).toBe(false);
    // A re-read window of events replaces stored rows of other runs.
    await sink.write(
      batch(EVENTS, [row(EVENTS, 'a', 10)], {
        prev: null,
        next: '1',
        replace: { kind: 'from', column: 'timestamp', from: 0 },
      }),
    );
    expect(await dropped(EVENTS)).toBe(true);
  });

  it('a repair of a snapshot equal to the stored one still checks that its checkpoint stands', async () => {
    const take = (runId: string, prev: string | null, keep: boolean): Batch => ({
      ...batch(SNAP, [{ id: 'global', value: '7' }], { prev, next: '100', replace: { kind: 'snapshot' } }),
      runId,
      takenAt: '2026-01-01T10:00:00Z',
      checkpoint: { prev, next: keep ? (prev ?? '100') : '100', ...(keep ? { keep } : {}) },
    });
    await sink.write(take('r1', null, false));
    // The checkpoint stands at 100: the repair writes the snapshot again, in place of the stored one.
    await sink.write(take('repair-1', '100', true));
    expect(await w.all(`SELECT value, _run_id FROM ${qt(SNAP.table)}`)).toEqual([{ value: '7', _run_id: 'repair-1' }]);
    // A repair that found the checkpoint at 90, which stands at 100 now: refused, the stored snapshot left as it was.
    await expect(sink.write(take('repair-2', '90', true))).rejects.toBeInstanceOf(ConcurrentWriterError);
    expect(await w.all(`SELECT value, _run_id FROM ${qt(SNAP.table)}`)).toEqual([{ value: '7', _run_id: 'repair-1' }]);
    expect(await checkpoint(SNAP)).toBe('100');
  });

  it("a 'from' window with one row changed, one gone and one new rewrites those alone, and marks the lake from the earliest", async () => {
    const four = [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'c', 30), row(EVENTS, 'd', 40)];
    await sink.write(
      batch(EVENTS, four, { prev: null, next: '1', replace: { kind: 'from', column: 'timestamp', from: 0 } }),
    );
    await w.exec('DELETE FROM _pool_export.lake_pending');
    // The window from 20: b as it was, c gone (a reorg), d with another value, e new.
    const w2 = await sink.write(
      again(
        batch(EVENTS, [row(EVENTS, 'b', 20), row(EVENTS, 'd', 40, 'changed'), row(EVENTS, 'e', 50)], {
          prev: '1',
          next: '2',
          replace: { kind: 'from', column: 'timestamp', from: 20 },
        }),
        'r2',
      ),
    );
    expect(w2).toEqual({ rows: 2, replacedIds: [] });
    expect(await stored(EVENTS)).toEqual(['a@10=v-a', 'b@20=v-b', 'd@40=changed', 'e@50=v-e']);
    expect(await runs(EVENTS)).toEqual(['a:r1', 'b:r1', 'd:r2', 'e:r2']);
    // c@30 was removed: the lake rewrites from there, not from the window's start (20), where nothing changed.
    expect(await pending()).toEqual([{ dataset: EVENTS.name, from_seq: 30 }]);
    // Only d changed: from 40.
    await w.exec('DELETE FROM _pool_export.lake_pending');
    await sink.write(
      again(
        batch(EVENTS, [row(EVENTS, 'b', 20), row(EVENTS, 'd', 40, 'again'), row(EVENTS, 'e', 50)], {
          prev: '2',
          next: '3',
          replace: { kind: 'from', column: 'timestamp', from: 20 },
        }),
        'r3',
      ),
    );
    expect(await runs(EVENTS)).toEqual(['a:r1', 'b:r1', 'd:r3', 'e:r2']);
    expect(await pending()).toEqual([{ dataset: EVENTS.name, from_seq: 40 }]);
  });

  it("'ids' leaves a mutable row that did not change as it is, and marks the lake only for one that did", async () => {
    await sink.write(
      batch(STATE, [row(STATE, 'x', 5), row(STATE, 'y', null)], { prev: null, next: '1', replace: { kind: 'ids' } }),
    );
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const same = await sink.write(
      again(
        batch(STATE, [row(STATE, 'x', 5), row(STATE, 'y', null)], { prev: '1', next: '2', replace: { kind: 'ids' } }),
        'r2',
      ),
    );
    expect(same.rows).toBe(0);
    expect(await runs(STATE)).toEqual(['x:r1', 'y:r1']);
    expect(await pending()).toEqual([]);
    await sink.write(
      again(
        batch(STATE, [row(STATE, 'x', 5), row(STATE, 'y', null, 'set')], {
          prev: '2',
          next: '3',
          replace: { kind: 'ids' },
        }),
        'r3',
      ),
    );
    expect(await stored(STATE)).toEqual(['x@5=v-x', 'y@null=set']);
    expect(await runs(STATE)).toEqual(['x:r1', 'y:r3']);
    expect(await pending()).toEqual([{ dataset: STATE.name, from_seq: null }]);
  });

  it("'range' replaces only the rows of its key range; an id stored outside it is replaced and reported", async () => {
    await sink.write(
      batch(EVENTS, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'c', 30)], {
        prev: null,
        next: '1',
        replace: { kind: 'none' },
      }),
    );
    const r = await sink.write(
      batch(EVENTS, [row(EVENTS, 'b2', 21), row(EVENTS, 'c', 22, 'moved')], {
        prev: '1',
        next: '2',
        replace: { kind: 'range', column: 'timestamp', from: 20, to: 25 },
      }),
    );
    expect(await stored(EVENTS)).toEqual(['a@10=v-a', 'b2@21=v-b2', 'c@22=moved']);
    expect(r.replacedIds).toEqual(['c']);
  });

  it('stores rows of 21 MB each byte for byte: the JSON reader is sized from the longest line, not left at 16 MiB', async () => {
    // 7,000,000 code units of '€' are 21,000,000 bytes of UTF-8, past DuckDB's 16 MiB default object size. Six such
    // rows among small ones make its reader refuse the file when left at the default (or sized by code units); the
    // expected bytes are counted here from the text, not by the sink.
    const huge = '€'.repeat(7_000_000);
    const rows = Array.from({ length: 6 }, (_, k) => [
      row(EVENTS, `big-${k}`, k, huge),
      ...Array.from({ length: 3000 }, (_, j) => row(EVENTS, `s-${k}-${j}`, k, 'y'.repeat(j % 500))),
    ]).flat();
    await sink.write(batch(EVENTS, rows, { prev: null, next: '1', replace: { kind: 'none' } }));
    const got = await w.all(
      `SELECT count(*)::INTEGER AS n, sum(octet_length(encode(value)))::BIGINT::VARCHAR AS bytes,
        count(*) FILTER (WHERE value = $1)::INTEGER AS huge FROM ${qt(EVENTS.table)}`,
      [huge],
    );
    const smallBytes = 6 * Array.from({ length: 3000 }, (_, j) => j % 500).reduce((a, b) => a + b, 0);
    expect(got).toEqual([{ n: 6 * 3001, bytes: String(6 * 21_000_000 + smallBytes), huge: 6 }]);
  });

  it('shard batches that share one INSERT are read with room for the longest line among all their files', async () => {
    // A row of 39 MB (13,000,000 code units of '€', 3 bytes each) in the last of three shard batches that wait for one
    // commit together: DuckDB's reader refuses that line at its 16 MiB default wherever it lies in the files, so the
    // one INSERT must be sized for that batch's line, not for the first batch's short ones.
    const huge = '€'.repeat(13_000_000);
    const shard = (k: number, rows: Record<string, unknown>[], next: string) => ({
      ...batch(EVENTS, rows, { prev: null, next, replace: { kind: 'none' } }),
      checkpoint: { prev: null, next, shard: { shard: k, shards: 3 } },
    });
    const txs = spyStatements();
    const first = sink.write(shard(1, [row(EVENTS, 'a', 1)], 'a'));
    const group = [
      sink.write(shard(2, [row(EVENTS, 'b', 100)], 'b')),
      sink.write(shard(3, [row(EVENTS, 'c', 200, huge), row(EVENTS, 'd', 201)], 'c')),
    ];
    await first;
    expect((await Promise.all(group)).map((x) => x.rows)).toEqual([1, 2]);
    expect(txs.map((t) => t.filter((sql) => sql.startsWith(`INSERT INTO ${qt(EVENTS.table)}`)).length)).toEqual([1, 1]);
    const got = await w.all(
      `SELECT id, octet_length(encode(value))::INTEGER AS bytes FROM ${qt(EVENTS.table)} ORDER BY id`,
    );
    expect(got).toEqual([
      { id: 'a', bytes: 3 },
      { id: 'b', bytes: 3 },
      { id: 'c', bytes: 39_000_000 },
      { id: 'd', bytes: 3 },
    ]);
  });

  it('a batch that needs more memory than the limit fails naming duckdbMemoryLimit, and stores nothing', async () => {
    const small = join(dir, 'small');
    const limited = await Warehouse.open(small, { memoryLimit: '16MB' });
    try {
      await limited.exec('CREATE SCHEMA IF NOT EXISTS fake');
      await limited.exec(createTable(EVENTS));
      const rows = Array.from({ length: 20_000 }, (_, j) => row(EVENTS, `r-${j}`, j, 'v'.repeat(200)));
      const err = await new DuckDBSink(limited, small)
        .write(batch(EVENTS, rows, { prev: null, next: '1', replace: { kind: 'none' } }))
        .then(
          () => undefined,
          (e: Error) => e,
        );
      expect(err?.message).toMatch(
        /^DuckDB needed more memory than duckdbMemoryLimit allows while storing fake\.\w+ on chain 56 \(Out of Memory Error: .*\); raise duckdbMemoryLimit in the config \(e\.g\. "1GB"\)/,
      );
      // DuckDB's own error stays attached, for a log that shows causes.
      expect(String((err?.cause as Error | undefined)?.message)).toMatch(/^Out of Memory Error/);
      expect(await limited.all(`SELECT count(*)::INTEGER AS n FROM ${qt(EVENTS.table)}`)).toEqual([{ n: 0 }]);
    } finally {
      await limited.close();
    }
  });

  it('rereads a kept page byte for byte and drops kept pages, one already gone included', async () => {
    const text = '[{"id":"p","name":"<b>€</b>\\u001b"}]';
    const file = sink.pageFile();
    writeFileSync(file, text);
    expect(sink.reread({ file, length: text.length })).toBe(text);
    const other = sink.pageFile();
    writeFileSync(other, '[]');
    sink.drop([
      { file, length: text.length },
      { file: join(dir, 'gone.json'), length: 2 },
      { file: other, length: 2 },
    ]);
    expect([existsSync(file), existsSync(other)]).toEqual([false, false]);
  });

  it('refuses a batch that holds both kept pages and mapped rows, naming its dataset, and stores nothing', async () => {
    const file = sink.pageFile();
    writeFileSync(file, '[]');
    const both = { ...batch(EVENTS, [row(EVENTS, 'a', 1)], { prev: null, next: '1', replace: { kind: 'none' } }) };
    await expect(sink.write({ ...both, pages: [{ file, length: 2 }] })).rejects.toThrow(
      'a batch of fake.event holds both pages and mapped rows',
    );
    expect(await stored(EVENTS)).toEqual([]);
    expect(await checkpoint(EVENTS)).toBeNull();
  });

  it("'ids' upserts mutable rows by id, null keys included", async () => {
    await sink.write(
      batch(STATE, [row(STATE, 'x', 5), row(STATE, 'y', null)], { prev: null, next: '1', replace: { kind: 'ids' } }),
    );
    await sink.write(
      batch(STATE, [row(STATE, 'y', 7, 'set'), row(STATE, 'z', 8)], { prev: '1', next: '2', replace: { kind: 'ids' } }),
    );
    expect(await stored(STATE)).toEqual(['x@5=v-x', 'y@7=set', 'z@8=v-z']);
  });

  it("'gone' deletes exactly the ids named, whatever characters they hold, and marks the lake", async () => {
    const odd = ["it's", '"]), (SELECT 1', 'ü\u202e'];
    await sink.write(
      batch(STATE, [row(STATE, 'keep', 1), ...odd.map((id) => row(STATE, id, 2))], {
        prev: null,
        next: '1',
        replace: { kind: 'ids' },
      }),
    );
    await w.exec('DELETE FROM _pool_export.lake_pending');
    await sink.write(
      batch(STATE, [], { prev: '1', next: '2', replace: { kind: 'gone', ids: [...odd, 'never-stored'] } }),
    );
    expect(await stored(STATE)).toEqual(['keep@1=v-keep']);
    expect(await checkpoint(STATE)).toBe('2');
    expect((await pending()).map((p) => p.dataset)).toEqual([STATE.name]);
  });

  it('a repair batch (keep) replaces its range under the checkpoint and leaves the checkpoint row as it was', async () => {
    await sink.write(
      batch(EVENTS, [row(EVENTS, 'a', 10), row(EVENTS, 'c', 30)], { prev: null, next: '1', replace: { kind: 'none' } }),
    );
    const before = await w.all('SELECT * FROM _pool_export.checkpoints');
    const repair = (prev: string) => ({
      ...batch(EVENTS, [row(EVENTS, 'b', 20), row(EVENTS, 'c', 30, 'again')], {
        prev,
        next: prev,
        replace: { kind: 'range', column: 'timestamp', from: 20, to: 40 },
      }),
      runId: 'repair-1',
      block: 90,
      checkpoint: { prev, next: prev, keep: true },
    });
    await sink.write(repair('1'));
    expect(await stored(EVENTS)).toEqual(['a@10=v-a', 'b@20=v-b', 'c@30=again']);
    // The same checkpoint row: cursor, block, run and time of its last move.
    expect(await w.all('SELECT * FROM _pool_export.checkpoints')).toEqual(before);
    // One whose checkpoint moved since is refused whole.
    await expect(sink.write({ ...repair('0'), rows: [row(EVENTS, 'd', 25)], count: 1 })).rejects.toBeInstanceOf(
      ConcurrentWriterError,
    );
    expect(await stored(EVENTS)).toEqual(['a@10=v-a', 'b@20=v-b', 'c@30=again']);
    // The lake rewrites the days from the range's start.
    expect((await w.all('SELECT from_seq FROM _pool_export.lake_pending'))[0]).toEqual({ from_seq: '20' });
  });

  it('refuses a batch whose checkpoint moved under it, writing none of its rows', async () => {
    await sink.write(batch(EVENTS, [row(EVENTS, 'a', 10)], { prev: null, next: '1', replace: { kind: 'none' } }));
    await expect(
      sink.write(batch(EVENTS, [row(EVENTS, 'b', 20)], { prev: 'stale', next: '2', replace: { kind: 'none' } })),
    ).rejects.toBeInstanceOf(ConcurrentWriterError);
    await expect(
      sink.write(batch(EVENTS, [row(EVENTS, 'c', 30)], { prev: null, next: '3', replace: { kind: 'none' } })),
    ).rejects.toBeInstanceOf(ConcurrentWriterError);
    expect(await stored(EVENTS)).toEqual(['a@10=v-a']);
    expect(await checkpoint(EVENTS)).toBe('1');
  });

  it('commits batches that arrive together, each with its own checkpoint, and merges shards into the dataset', async () => {
    const shard = (k: number, rows: Record<string, unknown>[]) => ({
      ...batch(EVENTS, rows, { prev: null, next: `s${k}`, replace: { kind: 'none' } }),
      checkpoint: { prev: null, next: `s${k}`, shard: { shard: k, shards: 3 } },
    });
    await Promise.all([1, 2, 3].map((k) => sink.write(shard(k, [row(EVENTS, `e${k}`, k * 10)]))));
    expect(
      (await w.all('SELECT shard, cursor FROM _pool_export.shard_checkpoints ORDER BY shard')).map((r) => r.cursor),
    ).toEqual(['s1', 's2', 's3']);
    await sink.write({
      ...batch(EVENTS, [], { prev: null, next: 'merged', replace: { kind: 'none' } }),
      mergeShards: true,
    });
    expect(await w.all('SELECT * FROM _pool_export.shard_checkpoints')).toEqual([]);
    expect(await checkpoint(EVENTS)).toBe('merged');
    expect(await stored(EVENTS)).toEqual(['e1@10=v-e1', 'e2@20=v-e2', 'e3@30=v-e3']);
  });

  it('shard batches that arrive during a commit go in one transaction with one INSERT; a stale one is refused alone', async () => {
    // Every statement the sink runs inside its transactions, one list per transaction.
    const txs = spyStatements();
    const shard = (k: number, ids: string[], prev: string | null, next: string) => ({
      ...batch(
        EVENTS,
        ids.map((id, i) => row(EVENTS, id, k * 100 + i)),
        { prev, next, replace: { kind: 'none' } },
      ),
      checkpoint: { prev, next, shard: { shard: k, shards: 3 } },
    });
    // The first starts a commit at once; the next three wait for it and make one group.
    const first = sink.write(shard(1, ['a1', 'a2'], null, 'a'));
    const group = [
      sink.write(shard(2, ['b1', 'b2', 'b3'], null, 'b')),
      sink.write(shard(1, ['a3'], 'a', 'a+')),
      sink.write(shard(3, ['c1'], null, 'c')),
    ];
    await first;
    expect((await Promise.all(group)).map((x) => x.rows)).toEqual([3, 1, 1]);
    const inserts = (t: string[]) => t.filter((sql) => sql.startsWith(`INSERT INTO ${qt(EVENTS.table)}`)).length;
    expect(txs.map(inserts)).toEqual([1, 1]);
    expect(await stored(EVENTS)).toEqual(
      ['a1', 'a2', 'a3', 'b1', 'b2', 'b3', 'c1'].map((id) => expect.stringMatching(`^${id}@`)),
    );
    expect(
      (await w.all('SELECT shard, cursor FROM _pool_export.shard_checkpoints ORDER BY shard')).map((r) => r.cursor),
    ).toEqual(['a+', 'b', 'c']);
    // A group in which one batch's checkpoint moved under it: that batch alone is refused, the others are stored.
    txs.length = 0;
    const blocker = sink.write(shard(1, ['a4'], 'a+', 'a++'));
    const mixed = [
      sink.write(shard(2, ['b4'], 'b', 'b+')),
      sink.write(shard(3, ['c2'], 'stale', 'c+')),
      sink.write(shard(2, ['b5'], 'b+', 'b++')),
    ];
    await blocker;
    const outcomes = await Promise.allSettled(mixed);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrentWriterError);
    // It names the shard whose checkpoint moved, not only the dataset.
    expect(String((outcomes[1] as PromiseRejectedResult).reason.message)).toContain(
      'the checkpoint of fake.event (shard 3 of 3) on chain 56 was changed by another process',
    );
    expect(await stored(EVENTS)).not.toContainEqual(expect.stringMatching(/^c2@/));
    expect(
      (await w.all('SELECT shard, cursor FROM _pool_export.shard_checkpoints ORDER BY shard')).map((r) => r.cursor),
    ).toEqual(['a++', 'b++', 'c']);
    expect((await stored(EVENTS)).length).toBe(10);
    // Shards that each continue where they stood: their three checkpoints move in one UPDATE.
    txs.length = 0;
    const second = sink.write(shard(1, ['a5'], 'a++', 'a3'));
    const continuing = [
      sink.write(shard(2, ['b6'], 'b++', 'b3')),
      sink.write(shard(3, ['c3'], 'c', 'c3')),
      sink.write(shard(1, ['a6'], 'a3', 'a4')),
    ];
    await second;
    expect((await Promise.all(continuing)).map((x) => x.rows)).toEqual([1, 1, 1]);
    const moves = (t: string[]) => t.filter((sql) => /^(UPDATE|INSERT INTO) _pool_export\.shard_checkpoints/.test(sql));
    expect(txs.map((t) => moves(t).length)).toEqual([1, 1]);
    expect(
      (await w.all('SELECT shard, cursor FROM _pool_export.shard_checkpoints ORDER BY shard')).map((r) => r.cursor),
    ).toEqual(['a4', 'b3', 'c3']);
    expect((await stored(EVENTS)).length).toBe(14);
    // Two batches of one shard in a group, the second not from where the first leaves it: the second is refused.
    const third = sink.write(shard(3, ['c4'], 'c3', 'c4'));
    const broken = [sink.write(shard(2, ['b7'], 'b3', 'b4')), sink.write(shard(2, ['b8'], 'elsewhere', 'b5'))];
    await third;
    const settled = await Promise.allSettled(broken);
    expect(settled.map((o) => o.status)).toEqual(['fulfilled', 'rejected']);
    expect((settled[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrentWriterError);
    expect(
      (await w.all('SELECT shard, cursor FROM _pool_export.shard_checkpoints ORDER BY shard')).map((r) => r.cursor),
    ).toEqual(['a4', 'b4', 'c4']);
    expect(await stored(EVENTS)).not.toContainEqual(expect.stringMatching(/^b8@/));
  });

  /** Each stored row of a dataset as chain:id@key=value/run, in chain and id order. */
  const byChain = async (ds: Dataset) =>
    (
      await w.all(
        `SELECT chain_id, id, CAST("${ds.seq}" AS VARCHAR) AS s, value, _run_id FROM ${qt(ds.table)} ORDER BY chain_id, id`,
      )
    ).map((r) => `${r.chain_id}:${r.id}@${r.s ?? 'null'}=${r.value}/${r._run_id}`);
  /** Stores `rows` of a dataset on a chain, its checkpoint going from nothing to `c<chain>`, by run r1. */
  const seed = (ds: Dataset, chainId: number, rows: Record<string, unknown>[]) =>
    sink.write({ ...batch(ds, rows, { prev: null, next: `c${chainId}`, replace: { kind: 'none' } }), chainId });
  /** Commits `batches` as one group: a batch on chain 99 holds the transaction while they queue behind it. */
  const asGroup = async (batches: Batch[]) => {
    const blocker = sink.write({
      ...batch(LIST, [{ id: 'p', value: '1' }], { prev: null, next: 'b', replace: { kind: 'none' } }),
      chainId: 99,
    });
    const written = batches.map((b) => sink.write(b));
    await blocker;
    return Promise.all(written);
  };
  /** Where the lake must rewrite each chain from (chain 99 holds the group's blocker). */
  const pendingByChain = async () =>
    (await w.all('SELECT chain_id, from_seq FROM _pool_export.lake_pending WHERE chain_id < 99 ORDER BY chain_id')).map(
      (r) => `${r.chain_id}:${r.from_seq}`,
    );
  /** A re-read of `ds` from 20 on a chain by run r2, continuing the checkpoint `seed` made. */
  const windowOf =
    (ds: Dataset) =>
    (chainId: number, rows: Record<string, unknown>[]): Batch => ({
      ...again(
        batch(ds, rows, {
          prev: `c${chainId}`,
          next: `d${chainId}`,
          replace: { kind: 'from', column: ds.seq!, from: 20 },
        }),
        'r2',
      ),
      chainId,
    });
  /** An upsert by id of `rows` on a chain by run r2, its checkpoint going from `prev` to `d<chain>`. */
  const upsertOf = (chainId: number, prev: string | null, rows: Record<string, unknown>[]): Batch => ({
    ...again(batch(STATE, rows, { prev, next: `d${chainId}`, replace: { kind: 'ids' } }), 'r2'),
    chainId,
  });
  const staging = (t: string[]) => t.filter((sql) => /^CREATE OR REPLACE TEMP TABLE/.test(sql.trim()));

  it('re-read windows of one table on several chains in one group are compared together, each with its own chain', async () => {
    await seed(EVENTS, 1, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'c', 30)]);
    await seed(EVENTS, 2, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'e', 25)]);
    await seed(EVENTS, 3, [row(EVENTS, 'q', 5, 'old')]);
    await seed(EVENTS, 4, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20, null)]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const window = windowOf(EVENTS);
    const txs = spyStatements();
    const written = await asGroup([
      // b unchanged, c changed: the lake from c.
      window(1, [row(EVENTS, 'b', 20), row(EVENTS, 'c', 30, 'changed')]),
      // b unchanged, e gone, d new: the lake from e.
      window(2, [row(EVENTS, 'b', 20), row(EVENTS, 'd', 40)]),
      // b is new here, though chains 1 and 2 hold the same row; q moved out of its stored place: the lake from q's.
      window(3, [row(EVENTS, 'b', 20), row(EVENTS, 'q', 35, 'new')]),
      // Nothing changed (a null alike): no row written, no lake mark.
      window(4, [row(EVENTS, 'b', 20, null)]),
    ]);
    expect(written).toEqual([
      { rows: 1, replacedIds: [] },
      { rows: 1, replacedIds: [] },
      { rows: 2, replacedIds: ['q'] },
      { rows: 0, replacedIds: [] },
    ]);
    expect(await byChain(EVENTS)).toEqual([
      '1:a@10=v-a/r1',
      '1:b@20=v-b/r1',
      '1:c@30=changed/r2',
      '2:a@10=v-a/r1',
      '2:b@20=v-b/r1',
      '2:d@40=v-d/r2',
      '3:b@20=v-b/r2',
      '3:q@35=new/r2',
      '4:a@10=v-a/r1',
      '4:b@20=null/r1',
    ]);
    expect(await pendingByChain()).toEqual(['1:30', '2:25', '3:5']);
    expect(
      await w.all('SELECT chain_id, cursor FROM _pool_export.checkpoints WHERE chain_id < 99 ORDER BY chain_id'),
    ).toEqual([1, 2, 3, 4].map((c) => ({ chain_id: c, cursor: `d${c}` })));
    // One transaction for the four, which staged their rows once.
    expect(txs.map((t) => staging(t).length)).toEqual([0, 1]);
  });

  it('re-reads kept as several pages each, on several chains in one group, give each page\u2019s rows to its own chain', async () => {
    await seed(EVENTS, 1, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'c', 30)]);
    await seed(EVENTS, 2, [row(EVENTS, 'a', 10), row(EVENTS, 'x', 20)]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const window = windowOf(EVENTS);
    /** A batch's rows as kept pages, one file per list of rows: as the page checker keeps them. */
    const paged = (b: Batch, pages: Record<string, unknown>[][]): Batch => ({
      ...b,
      rows: [],
      count: pages.flat().length,
      pages: pages.map((rows) => {
        const file = sink.pageFile();
        const text = JSON.stringify(rows);
        writeFileSync(file, text);
        return { file, length: text.length };
      }),
    });
    const txs = spyStatements();
    const written = await asGroup([
      // Three pages on chain 1 (b unchanged, c changed, d new), two on chain 2 (x gone, y and z new).
      paged(window(1, []), [[row(EVENTS, 'b', 20)], [row(EVENTS, 'c', 30, 'changed')], [row(EVENTS, 'd', 40)]]),
      paged(window(2, []), [[row(EVENTS, 'y', 25)], [row(EVENTS, 'z', 45)]]),
    ]);
    expect(written).toEqual([
      { rows: 2, replacedIds: [] },
      { rows: 2, replacedIds: [] },
    ]);
    expect(await byChain(EVENTS)).toEqual([
      '1:a@10=v-a/r1',
      '1:b@20=v-b/r1',
      '1:c@30=changed/r2',
      '1:d@40=v-d/r2',
      '2:a@10=v-a/r1',
      '2:y@25=v-y/r2',
      '2:z@45=v-z/r2',
    ]);
    expect(await pendingByChain()).toEqual(['1:30', '2:20']);
    // One staging statement for the two batches and their five files.
    expect(txs.map((t) => staging(t).length)).toEqual([0, 1]);
  });

  it('bucket windows on several chains in one group mark the lake from the earliest row each inserted', async () => {
    for (const c of [1, 2]) await seed(BUCKETS, c, [row(BUCKETS, 'a', 10), row(BUCKETS, 'b', 20)]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const window = windowOf(BUCKETS);
    const txs = spyStatements();
    const written = await asGroup([
      window(1, [row(BUCKETS, 'b', 20), row(BUCKETS, 'n', 30)]),
      window(2, [row(BUCKETS, 'b', 20), row(BUCKETS, 'm', 40)]),
    ]);
    expect(written).toEqual([
      { rows: 1, replacedIds: [] },
      { rows: 1, replacedIds: [] },
    ]);
    expect(await byChain(BUCKETS)).toEqual([
      '1:a@10=v-a/r1',
      '1:b@20=v-b/r1',
      '1:n@30=v-n/r2',
      '2:a@10=v-a/r1',
      '2:b@20=v-b/r1',
      '2:m@40=v-m/r2',
    ]);
    expect(await pendingByChain()).toEqual(['1:30', '2:40']);
    expect(txs.map((t) => staging(t).length)).toEqual([0, 1]);
  });

  it('a group whose windows insert nothing writes no row, yet marks the lake of a chain that lost rows, from the earliest', async () => {
    await seed(EVENTS, 1, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20), row(EVENTS, 'c', 30), row(EVENTS, 'd', 40)]);
    await seed(EVENTS, 2, [row(EVENTS, 'a', 10), row(EVENTS, 'b', 20)]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const window = windowOf(EVENTS);
    const txs = spyStatements();
    const written = await asGroup([
      // A reorganisation took c and d out of chain 1's window: nothing comes in, the lake goes from c (30), not d.
      window(1, [row(EVENTS, 'b', 20)]),
      // Chain 2 read its window again unchanged.
      window(2, [row(EVENTS, 'b', 20)]),
    ]);
    expect(written).toEqual([
      { rows: 0, replacedIds: [] },
      { rows: 0, replacedIds: [] },
    ]);
    expect(await byChain(EVENTS)).toEqual(['1:a@10=v-a/r1', '1:b@20=v-b/r1', '2:a@10=v-a/r1', '2:b@20=v-b/r1']);
    expect(await pendingByChain()).toEqual(['1:30']);
    // Nothing left to insert: the group's transaction neither inserts into the table nor looks for replaced ids.
    const [, group] = txs;
    expect(group!.filter((sql) => /INSERT INTO "fake"\."event"/.test(sql))).toEqual([]);
    expect(
      group!.filter((sql) => /DELETE FROM "fake"\."event" AS s WHERE row\(s\.chain_id, s\.id\)/.test(sql)),
    ).toEqual([]);
  });

  it('upserts by id on several chains that change nothing write nothing, mark nothing, and leave each row with its run', async () => {
    for (const c of [1, 2]) await seed(STATE, c, [row(STATE, 'x', 5), row(STATE, 'y', 6, null)]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const same = (chainId: number) => upsertOf(chainId, `c${chainId}`, [row(STATE, 'y', 6, null), row(STATE, 'x', 5)]);
    const txs = spyStatements();
    expect(await asGroup([same(1), same(2)])).toEqual([
      { rows: 0, replacedIds: [] },
      { rows: 0, replacedIds: [] },
    ]);
    expect(await byChain(STATE)).toEqual(['1:x@5=v-x/r1', '1:y@6=null/r1', '2:x@5=v-x/r1', '2:y@6=null/r1']);
    expect(await pendingByChain()).toEqual([]);
    const [, group] = txs;
    expect(group!.filter((sql) => /^(INSERT INTO|DELETE FROM) "fake"\."mutable"/.test(sql.trim()))).toEqual([]);
  });

  it('batches that only add events are not compared: a row equal to a stored one still replaces it', async () => {
    for (const c of [1, 2]) await seed(EVENTS, c, [row(EVENTS, 'a', 10)]);
    const add = (chainId: number): Batch => ({
      ...again(
        batch(EVENTS, [row(EVENTS, 'a', 10)], { prev: `c${chainId}`, next: `d${chainId}`, replace: { kind: 'none' } }),
        'r2',
      ),
      chainId,
    });
    const written = await asGroup([add(1), add(2)]);
    expect(written).toEqual([
      { rows: 1, replacedIds: ['a'] },
      { rows: 1, replacedIds: ['a'] },
    ]);
    expect(await byChain(EVENTS)).toEqual(['1:a@10=v-a/r2', '2:a@10=v-a/r2']);
  });

  it('upserts by id of one table on several chains in one group are compared together, each with its own chain', async () => {
    await seed(STATE, 1, [row(STATE, 'x', 5), row(STATE, 'y', 6)]);
    await seed(STATE, 2, [row(STATE, 'x', 5)]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const txs = spyStatements();
    const written = await asGroup([
      upsertOf(1, 'c1', [row(STATE, 'x', 5), row(STATE, 'y', 6, 'set')]),
      upsertOf(2, 'c2', [row(STATE, 'x', 5), row(STATE, 'w', 7)]),
      // x is new on chain 3, though chains 1 and 2 hold the same row.
      upsertOf(3, null, [row(STATE, 'x', 5)]),
    ]);
    expect(written.map((x) => x.rows)).toEqual([1, 1, 1]);
    expect(await byChain(STATE)).toEqual([
      '1:x@5=v-x/r1',
      '1:y@6=set/r2',
      '2:w@7=v-w/r2',
      '2:x@5=v-x/r1',
      '3:x@5=v-x/r2',
    ]);
    expect(await pendingByChain()).toEqual(['1:null', '2:null', '3:null']);
    expect(txs.map((t) => staging(t).length)).toEqual([0, 1]);
  });

  /** A snapshot of `rows` (id, value) of `ds` on a chain by a run at a block, its checkpoint moving from `prev` there. */
  const snapshotOf = (
    ds: Dataset,
    chainId: number,
    rows: [string, string | null][],
    at: { runId: string; block: number; takenAt: string; prev: string | null },
  ): Batch => ({
    ...batch(
      ds,
      rows.map(([id, value]) => ({ id, value })),
      { prev: at.prev, next: String(at.block), replace: { kind: 'snapshot' } },
    ),
    chainId,
    runId: at.runId,
    block: at.block,
    takenAt: at.takenAt,
  });
  /** Each stored snapshot row as chain:id=value@block/run, in chain, block and id order. */
  const snapshotRows = async (ds: Dataset) =>
    (
      await w.all(
        `SELECT chain_id, id, value, _block, _run_id FROM ${qt(ds.table)} WHERE chain_id < 99 ORDER BY chain_id, _block, id`,
      )
    ).map((r) => `${r.chain_id}:${r.id}=${r.value ?? 'null'}@${r._block}/${r._run_id}`);
  /** The recorded digest of each chain's snapshot of `ds`, as chain:run/rows. */
  const digests = async (ds: Dataset) =>
    (
      await w.all(
        'SELECT chain_id, run_id, rows FROM _pool_export.snapshot_digests WHERE dataset = $1 AND chain_id < 99 ORDER BY chain_id',
        [ds.name],
      )
    ).map((r) => `${r.chain_id}:${r.run_id}/${r.rows}`);
  /** What the lake must write, as chain:from/dropped (chain 99 holds the group's blocker). */
  const marks = async () =>
    (
      await w.all(
        'SELECT chain_id, from_seq, dropped FROM _pool_export.lake_pending WHERE chain_id < 99 ORDER BY chain_id',
      )
    ).map((r) => `${r.chain_id}:${r.from_seq}/${r.dropped}`);
  const inserts = (t: string[], ds: Dataset) => t.filter((sql) => sql.trim().startsWith(`INSERT INTO ${qt(ds.table)}`));

  it('snapshots of one table on several chains in one group are written together, each as it would be alone', async () => {
    const at = (runId: string, block: number, takenAt: string, prev: string | null) => ({
      runId,
      block,
      takenAt,
      prev,
    });
    const morning = (block: number) => at('r1', block, '2026-01-01T10:00:00Z', null);
    const noon = (block: number, prev: string | null) => at('r2', block, '2026-01-01T12:00:00Z', prev);
    await sink.write(
      snapshotOf(
        LIST,
        1,
        [
          ['p1', 'a'],
          ['p2', null],
        ],
        morning(100),
      ),
    );
    await sink.write(snapshotOf(LIST, 2, [['p1', 'a']], morning(100)));
    await sink.write(snapshotOf(LIST, 3, [['p1', 'a']], morning(100)));
    await sink.write(snapshotOf(LIST, 5, [['p1', 'a']], morning(120)));
    // Chain 3's digest is gone (a warehouse of an earlier version): its snapshot is compared row by row.
    await w.exec('DELETE FROM _pool_export.snapshot_digests WHERE chain_id = 3');
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const txs = spyStatements();
    const written = await asGroup([
      // Equal to the day's stored one (its rows in another order): nothing stored, nothing marked.
      snapshotOf(
        LIST,
        1,
        [
          ['p2', null],
          ['p1', 'a'],
        ],
        noon(110, '100'),
      ),
      // A value changed: stored beside the morning's.
      snapshotOf(LIST, 2, [['p1', 'b']], noon(110, '100')),
      // Equal, found row by row: nothing stored.
      snapshotOf(LIST, 3, [['p1', 'a']], noon(110, '100')),
      // The chain's first: stored.
      snapshotOf(LIST, 4, [['p1', 'a']], noon(110, null)),
      // Another at the stored one's block: it takes its place, and the lake must drop the rows of r1.
      snapshotOf(LIST, 5, [['p1', 'c']], noon(120, '120')),
    ]);
    expect(written.map((x) => x.rows)).toEqual([0, 1, 0, 1, 1]);
    expect(await snapshotRows(LIST)).toEqual([
      '1:p1=a@100/r1',
      '1:p2=null@100/r1',
      '2:p1=a@100/r1',
      '2:p1=b@110/r2',
      '3:p1=a@100/r1',
      '4:p1=a@110/r2',
      '5:p1=c@120/r2',
    ]);
    expect(await digests(LIST)).toEqual(['1:r1/2', '2:r2/1', '4:r2/1', '5:r2/1']);
    expect(await marks()).toEqual(['2:null/false', '4:null/false', '5:null/true']);
    expect(
      await w.all('SELECT chain_id, cursor FROM _pool_export.checkpoints WHERE chain_id < 99 ORDER BY chain_id'),
    ).toEqual([1, 2, 3, 4, 5].map((c) => ({ chain_id: c, cursor: c === 5 ? '120' : '110' })));
    // One transaction: chains 2 and 5 in one INSERT; chain 4, with no digest to tell, written alone after its
    // stored rows were looked for.
    expect(txs.map((t) => inserts(t, LIST).length)).toEqual([1, 2]);
  });

  it('entity snapshots kept as pages (no digest) on several chains in one group: only a chain with rows of the block is compared alone', async () => {
    const at = (runId: string, block: number, prev: string | null) => ({
      runId,
      block,
      takenAt: '2026-01-01T10:00:00Z',
      prev,
    });
    /** A batch's rows as one kept page, as the page checker keeps it: no digest is made of it. */
    const paged = (b: Batch): Batch => {
      const file = sink.pageFile();
      const text = JSON.stringify(b.rows);
      writeFileSync(file, text);
      return { ...b, rows: [], pages: [{ file, length: text.length }] };
    };
    await sink.write(snapshotOf(SNAP, 1, [['global', '7']], at('r1', 100, null)));
    await sink.write(snapshotOf(SNAP, 3, [['global', '7']], at('r1', 100, null)));
    await sink.write(snapshotOf(SNAP, 4, [['global', '7']], at('r1', 90, null)));
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const txs = spyStatements();
    const written = await asGroup([
      // The stored block read again, unchanged: compared row by row, nothing stored.
      paged(snapshotOf(SNAP, 1, [['global', '7']], at('r2', 100, '100'))),
      // The chain's first.
      paged(snapshotOf(SNAP, 2, [['global', '7']], at('r2', 110, null))),
      // The stored block read again, changed: it takes the stored one's place.
      paged(snapshotOf(SNAP, 3, [['global', '8']], at('r2', 100, '100'))),
      // A later block: stored beside the earlier one, whose digest no longer stands for the chain's latest.
      paged(snapshotOf(SNAP, 4, [['global', '7']], at('r2', 110, '90'))),
    ]);
    expect(written.map((x) => x.rows)).toEqual([0, 1, 1, 1]);
    expect(await snapshotRows(SNAP)).toEqual([
      '1:global=7@100/r1',
      '2:global=7@110/r2',
      '3:global=8@100/r2',
      '4:global=7@90/r1',
      '4:global=7@110/r2',
    ]);
    expect(await digests(SNAP)).toEqual(['1:r1/1']);
    expect(await marks()).toEqual(['2:null/false', '3:null/true', '4:null/false']);
    // Chains 2 and 4 in one INSERT; chain 3, compared alone, in its own.
    expect(txs.map((t) => inserts(t, SNAP).length)).toEqual([0, 2]);
  });

  it('a group of re-reads moves its existing checkpoints in one UPDATE and marks the lake in one INSERT; a stale one is refused alone', async () => {
    // One re-read window of events on each of five chains, each continuing a checkpoint that exists.
    const on = (chainId: number, prev: string, next: string, id: string) => ({
      ...batch(EVENTS, [row(EVENTS, id, 50)], { prev, next, replace: { kind: 'from', column: 'timestamp', from: 40 } }),
      chainId,
    });
    for (const c of [1, 2, 3, 4, 5])
      await sink.write({
        ...batch(EVENTS, [row(EVENTS, `old${c}`, 10)], { prev: null, next: `c${c}`, replace: { kind: 'none' } }),
        chainId: c,
      });
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const txs = spyStatements();
    const blocker = sink.write(on(1, 'c1', 'd1', 'n1'));
    const group = [on(2, 'c2', 'd2', 'n2'), on(3, 'c3', 'd3', 'n3'), on(4, 'c4', 'd4', 'n4')].map((b) => sink.write(b));
    await blocker;
    expect((await Promise.all(group)).map((x) => x.rows)).toEqual([1, 1, 1]);
    const count = (t: string[], re: RegExp) => t.filter((sql) => re.test(sql.trim())).length;
    expect(txs.length).toBe(2);
    expect(txs.map((t) => count(t, /^UPDATE _pool_export\.checkpoints/))).toEqual([1, 1]);
    expect(txs.map((t) => count(t, /^INSERT INTO _pool_export\.lake_pending/))).toEqual([1, 1]);
    const cursors = async () =>
      (await w.all('SELECT chain_id, cursor FROM _pool_export.checkpoints ORDER BY chain_id')).map(
        (r) => `${r.chain_id}:${r.cursor}`,
      );
    expect(await cursors()).toEqual(['1:d1', '2:d2', '3:d3', '4:d4', '5:c5']);
    expect(
      (await w.all('SELECT chain_id, from_seq, runs FROM _pool_export.lake_pending ORDER BY chain_id')).map(
        (r) => `${r.chain_id}:${r.from_seq}:${JSON.stringify(r.runs)}`,
      ),
    ).toEqual(['1:50:["r1"]', '2:50:["r1"]', '3:50:["r1"]', '4:50:["r1"]']);
    // One of a group whose checkpoint moved under it: refused alone, with none of its rows; the others land.
    const next = sink.write(on(1, 'd1', 'e1', 'm1'));
    const mixed = [on(2, 'd2', 'e2', 'm2'), on(5, 'stale', 'e5', 'm5'), on(3, 'd3', 'e3', 'm3')].map((b) =>
      sink.write(b),
    );
    await next;
    const outcomes = await Promise.allSettled(mixed);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect((outcomes[1] as PromiseRejectedResult).reason).toBeInstanceOf(ConcurrentWriterError);
    expect(await cursors()).toEqual(['1:e1', '2:e2', '3:e3', '4:d4', '5:c5']);
    expect(await stored(EVENTS)).not.toContainEqual(expect.stringMatching(/^m5@/));
  });

  it('one group, one INSERT only per table, chain, block, run and time taken: each row keeps its own', async () => {
    const BUCKETS = fakeDataset('bucket');
    await w.exec(createTable(BUCKETS));
    const shard = (b: Partial<Batch> & { ds: Dataset }, k: number, id: string) => ({
      ...batch(b.ds, [{ id, [b.ds.seq!]: b.ds.seqType === 'Int' ? 7 : '7', value: id }], {
        prev: null,
        next: id,
        replace: { kind: 'none' },
      }),
      ...b,
      checkpoint: { prev: null, next: id, shard: { shard: k, shards: 12 } },
    });
    const blocker = sink.write(shard({ ds: EVENTS }, 9, 'blocker'));
    // Each batch differs from the one before it in one thing only.
    const group = [
      shard({ ds: EVENTS }, 1, 'base1'),
      shard({ ds: EVENTS, block: 101 }, 2, 'block101'),
      shard({ ds: EVENTS }, 3, 'base2'),
      shard({ ds: EVENTS, chainId: 1 }, 4, 'chain1'),
      shard({ ds: EVENTS }, 5, 'base3'),
      shard({ ds: EVENTS, runId: 'r2' }, 6, 'run2'),
      shard({ ds: EVENTS }, 7, 'base4'),
      shard({ ds: EVENTS, takenAt: '2026-01-02T00:00:00Z' }, 8, 'taken'),
      shard({ ds: EVENTS }, 10, 'base5'),
      shard({ ds: BUCKETS }, 11, 'bucket'),
      shard({ ds: EVENTS }, 12, 'base6'),
    ].map((b) => sink.write(b));
    await blocker;
    await Promise.all(group);
    const rows = async (ds: Dataset) =>
      (
        await w.all(
          `SELECT id, chain_id, _block, _run_id, CAST(_taken_at AS VARCHAR) AS taken FROM ${qt(ds.table)} ORDER BY id`,
        )
      ).map((r) => [r.id, Number(r.chain_id), Number(r._block), r._run_id, r.taken]);
    expect(await rows(EVENTS)).toEqual([
      ...[1, 2, 3, 4, 5, 6].map((n) => [`base${n}`, 56, 100, 'r1', null]),
      ['block101', 56, 101, 'r1', null],
      ['blocker', 56, 100, 'r1', null],
      ['chain1', 1, 100, 'r1', null],
      ['run2', 56, 100, 'r2', null],
      ['taken', 56, 100, 'r1', '2026-01-02 00:00:00+00'],
    ]);
    expect(await rows(BUCKETS)).toEqual([['bucket', 56, 100, 'r1', null]]);
  });

  it('only a snapshot is skipped as one stored already: events read again at the same block by another run replace theirs', async () => {
    await sink.write(batch(EVENTS, [row(EVENTS, 'a', 10)], { prev: null, next: '1', replace: { kind: 'none' } }));
    const again = { ...batch(EVENTS, [row(EVENTS, 'a', 10)], { prev: '1', next: '2', replace: { kind: 'none' } }) };
    expect(await sink.write({ ...again, runId: 'r2' })).toEqual({ rows: 1, replacedIds: ['a'] });
    expect(await w.all(`SELECT id, _run_id FROM ${qt(EVENTS.table)}`)).toEqual([{ id: 'a', _run_id: 'r2' }]);
    expect(await checkpoint(EVENTS)).toBe('2');
  });

  it('an event or bucket batch that is not a shard replaces stored rows of its ids, even when it replaces nothing else', async () => {
    const BUCKETS = fakeDataset('bucket');
    await w.exec(createTable(BUCKETS));
    for (const ds of [EVENTS, BUCKETS]) {
      const r = (id: string, value: string) => ({ id, [ds.seq!]: ds.seqType === 'Int' ? 10 : '10', value });
      await sink.write(batch(ds, [r('x', 'old'), r('y', 'old')], { prev: null, next: '1', replace: { kind: 'none' } }));
      await w.exec('DELETE FROM _pool_export.lake_pending');
      // Read again (a re-read window): x comes back with another value, and must not be stored twice.
      const again = await sink.write(batch(ds, [r('x', 'new')], { prev: '1', next: '2', replace: { kind: 'none' } }));
      expect(again.replacedIds).toEqual(['x']);
      // The lake rewrites from the replaced row's key (10), not the whole chain.
      expect((await pending()).filter((p) => p.dataset === ds.name)).toEqual([{ dataset: ds.name, from_seq: 10 }]);
      const got = await w.all(`SELECT id, value FROM ${qt(ds.table)} ORDER BY id`);
      expect(got.map((x) => `${x.id}=${x.value}`)).toEqual(['x=new', 'y=old']);
    }
  });

  it('a group marks the lake once per dataset from its earliest start, and a merge in it follows its shards’ rows', async () => {
    const shard = (k: number, id: string, seq: number) => ({
      ...batch(EVENTS, [row(EVENTS, id, seq)], { prev: null, next: id, replace: { kind: 'none' } }),
      checkpoint: { prev: null, next: id, shard: { shard: k, shards: 2 } },
    });
    await sink.write(batch(EVENTS, [row(EVENTS, 'old', 5)], { prev: null, next: 'c0', replace: { kind: 'none' } }));
    await w.exec('DELETE FROM _pool_export.lake_pending');
    // Behind a blocker, marks without a start (shard batches) and with one (re-reads from 30, then from 20, which
    // reads p again), in turns, from three runs.
    const blocker = sink.write(shard(2, 'blocker', 1));
    const group = [
      sink.write({ ...shard(1, 'sharded', 40), runId: 'r3' }),
      sink.write({
        ...batch(EVENTS, [row(EVENTS, 'p', 30)], {
          prev: 'c0',
          next: 'c1',
          replace: { kind: 'from', column: 'timestamp', from: 30 },
        }),
        runId: 'r2',
      }),
      sink.write({
        ...shard(1, 'sharded2', 41),
        runId: 'r3',
        checkpoint: { prev: 'sharded', next: 's2', shard: { shard: 1, shards: 2 } },
      }),
      sink.write(
        batch(EVENTS, [row(EVENTS, 'q', 20), row(EVENTS, 'p', 30)], {
          prev: 'c1',
          next: 'c2',
          replace: { kind: 'from', column: 'timestamp', from: 20 },
        }),
      ),
    ];
    await blocker;
    await Promise.all(group);
    expect(await pending()).toEqual([{ dataset: EVENTS.name, from_seq: 20 }]);
    // The lake rewrites the rows of every run that wrote some: r1 (the blocker, the re-read from 20), r2, r3 (shards).
    expect((await w.all('SELECT list_sort(runs) AS runs FROM _pool_export.lake_pending'))[0]!.runs).toEqual([
      'r1',
      'r2',
      'r3',
    ]);
    // A shard's batch and the merge in one group: the merge sees the shard's rows (the repeated id goes) and clears
    // every shard checkpoint, the one just moved included.
    const blocker2 = sink.write({
      ...shard(2, 'blocker2', 2),
      checkpoint: { prev: 'blocker', next: 'b2', shard: { shard: 2, shards: 2 } },
    });
    const last = [
      sink.write({
        ...shard(1, 'old', 50),
        checkpoint: { prev: 's2', next: 's3', shard: { shard: 1, shards: 2 } },
      }),
      sink.write({
        ...batch(EVENTS, [], { prev: 'c2', next: 'merged', replace: { kind: 'none' } }),
        mergeShards: true,
      }),
    ];
    await blocker2;
    await Promise.all(last);
    expect(await w.all('SELECT * FROM _pool_export.shard_checkpoints')).toEqual([]);
    expect(await checkpoint(EVENTS)).toBe('merged');
    expect(await stored(EVENTS)).toEqual([
      'blocker@1=v-blocker',
      'blocker2@2=v-blocker2',
      'old@50=v-old',
      'p@30=v-p',
      'q@20=v-q',
    ]);
    // (The shard rows at 40 and 41 went with the re-read from 20, which came after them: it replaces every row from 20.)
  });

  it('a batch that adds and removes nothing leaves the lake alone, and still moves its checkpoint', async () => {
    await sink.write(batch(STATE, [], { prev: null, next: 'empty', replace: { kind: 'ids' } }));
    expect(await checkpoint(STATE)).toBe('empty');
    expect(await pending()).toEqual([]);
  });

  it("a 'from' batch whose window held no row and brings none leaves the lake alone; one that clears rows marks it", async () => {
    await sink.write(
      batch(EVENTS, [row(EVENTS, 'a', 10)], {
        prev: null,
        next: '1',
        replace: { kind: 'from', column: 'timestamp', from: 0 },
      }),
    );
    await w.exec('DELETE FROM _pool_export.lake_pending');
    await sink.write(
      batch(EVENTS, [], { prev: '1', next: '2', replace: { kind: 'from', column: 'timestamp', from: 11 } }),
    );
    expect(await checkpoint(EVENTS)).toBe('2');
    expect(await pending()).toEqual([]);
    // The window now holds row a, which the upstream no longer sends: it is cleared, and the lake must follow.
    await sink.write(
      batch(EVENTS, [], { prev: '2', next: '3', replace: { kind: 'from', column: 'timestamp', from: 5 } }),
    );
    expect(await stored(EVENTS)).toEqual([]);
    expect(await pending()).toEqual([{ dataset: EVENTS.name, from_seq: 5 }]);
  });

  it('a shard does not look for its ids among other rows; the merge keeps the row inserted last of each id', async () => {
    const shard = (k: number, rows: Record<string, unknown>[], prev: string | null, next: string) => ({
      ...batch(EVENTS, rows, { prev, next, replace: { kind: 'none' } }),
      checkpoint: { prev, next, shard: { shard: k, shards: 2 } },
    });
    // Shard 1 stores x and y; shard 2 then sends x and y again (an upstream defect), and y once more in a later batch.
    await sink.write(
      shard(1, [row(EVENTS, 'x', 10, 'x1'), row(EVENTS, 'y', 12, 'y1'), row(EVENTS, 'z', 14)], null, 'a'),
    );
    const r2 = await sink.write(shard(2, [row(EVENTS, 'x', 50, 'x2'), row(EVENTS, 'y', 52, 'y2')], null, 'b'));
    await sink.write(shard(2, [row(EVENTS, 'y', 53, 'y3'), row(EVENTS, 'w', 54)], 'b', 'c'));
    expect(r2.replacedIds).toEqual([]);
    expect(await stored(EVENTS)).toEqual([
      'w@54=v-w',
      'x@10=x1',
      'x@50=x2',
      'y@12=y1',
      'y@52=y2',
      'y@53=y3',
      'z@14=v-z',
    ]);
    await w.exec('DELETE FROM _pool_export.lake_pending');
    const merged = await sink.write({
      ...batch(EVENTS, [], { prev: null, next: 'merged', replace: { kind: 'none' } }),
      mergeShards: true,
    });
    expect(await stored(EVENTS)).toEqual(['w@54=v-w', 'x@50=x2', 'y@53=y3', 'z@14=v-z']);
    expect([...merged.replacedIds].sort()).toEqual(['x', 'y', 'y']);
    // The lake rewrites the days from the oldest removed row on.
    expect(await pending()).toEqual([{ dataset: EVENTS.name, from_seq: 10 }]);
  });

  it('stores kept pages as the upstream sent them: references by id, numbers cast with their exact text beside them', async () => {
    const PROBES = probeDataset('fake');
    await w.exec(createTable(PROBES));
    // Two pages, as the page checker keeps them: each the JSON array of the upstream's entities, unchanged.
    const pages = [PROBE_ROWS.slice(0, 1), PROBE_ROWS.slice(1)].map((rows) => {
      const file = sink.pageFile();
      const text = JSON.stringify(rows);
      writeFileSync(file, text);
      return { file, length: text.length };
    });
    await sink.write({
      ...batch(PROBES, [], { prev: null, next: '1', replace: { kind: 'from', column: 'timestamp', from: 0 } }),
      pages,
      count: 3,
    });
    const got = await w.all(
      `SELECT id, "timestamp", timestamp_text, amount, amount_text, raw, raw_text, n, pair_id, tokens, tags FROM ${qt(PROBES.table)} ORDER BY "timestamp"`,
    );
    expect(got).toEqual([
      {
        id: 'a',
        timestamp: '100',
        timestamp_text: '100',
        amount: 1479583.1069,
        amount_text: '1479583.1069',
        raw: 1e24,
        raw_text: '1000000000000000000000000',
        n: 7,
        pair_id: '0xp',
        tokens: ['t1', null],
        tags: ['x', null],
      },
      {
        id: 'b',
        timestamp: '101',
        timestamp_text: '101',
        amount: null,
        amount_text: null,
        raw: null,
        raw_text: null,
        n: null,
        pair_id: null,
        tokens: null,
        tags: null,
      },
      {
        id: PROBE_ROWS[2]!.id,
        timestamp: '102',
        timestamp_text: '102',
        amount: -0.5,
        amount_text: '-0.5',
        raw: 0,
        raw_text: '0',
        n: -1,
        pair_id: 'q',
        tokens: [],
        tags: [],
      },
    ]);
    // The pages' files are gone once they are stored.
    expect(pages.map((p) => existsSync(p.file))).toEqual([false, false]);
  });

  it('a shard\u2019s first batch clears its key range and joins the INSERT of the batches committed with it', async () => {
    const txs = spyStatements();
    // Rows an earlier, killed run left in both shards' ranges.
    await w.exec(
      `INSERT INTO ${qt(EVENTS.table)} (id, "timestamp", timestamp_text, value, chain_id) VALUES ('old1', 150, '150', 'o', 56), ('old2', 250, '250', 'o', 56), ('keep', 350, '350', 'k', 56)`,
    );
    const shard = (k: number, ids: string[], at: { prev: string | null; next: string }, replace: Replace) => ({
      ...batch(
        EVENTS,
        ids.map((id, i) => row(EVENTS, id, k * 100 + 50 + i)),
        { ...at, replace },
      ),
      checkpoint: { ...at, shard: { shard: k, shards: 2 } },
    });
    const range = (k: number): Replace => ({ kind: 'range', column: 'timestamp', from: k * 100, to: k * 100 + 100 });
    // The first write starts a transaction at once; the three after it wait for it, and make one group.
    const blocker = sink.write({
      ...batch(STATE, [row(STATE, 's', 1)], { prev: null, next: 's', replace: { kind: 'ids' } }),
    });
    const group = [
      sink.write(shard(1, ['a1', 'a2'], { prev: null, next: 'a' }, range(1))),
      sink.write(shard(2, ['b1'], { prev: null, next: 'b' }, range(2))),
      sink.write(shard(1, ['a3'], { prev: 'a', next: 'a+' }, { kind: 'none' })),
    ];
    await blocker;
    expect((await Promise.all(group)).map((x) => x.rows)).toEqual([2, 1, 1]);
    const statements = txs.at(-1)!;
    const inserts = statements.filter((sql) => sql.startsWith(`INSERT INTO ${qt(EVENTS.table)}`));
    expect(inserts).toHaveLength(1);
    expect(statements.filter((sql) => sql.startsWith(`DELETE FROM ${qt(EVENTS.table)}`))).toHaveLength(2);
    // Each range lost the rows the killed run left in it, and no row outside the ranges went.
    expect(await stored(EVENTS)).toEqual(['a1@150=v-a1', 'a2@151=v-a2', 'a3@150=v-a3', 'b1@250=v-b1', 'keep@350=k']);
    // The lake rewrites from the first range's start.
    expect(await pending()).toEqual([
      { dataset: EVENTS.name, from_seq: 100 },
      { dataset: STATE.name, from_seq: null },
    ]);
  });

  it('removes the page and batch files a run left when it ended before committing them, and nothing else', async () => {
    const tmp = join(dir, '.tmp');
    const left = ['page-0b0c6a43-3f5e-4c1a-9d59-1f2e3d4c5b6a.json', '7d1a0f2e-1b3c-4d5e-8f9a-0b1c2d3e4f5a.ndjson'];
    const others = ['notes.txt', 'page-x.json'];
    for (const f of [...left, ...others]) writeFileSync(join(tmp, f), 'x');
    new DuckDBSink(w, dir);
    expect(readdirSync(tmp).sort()).toEqual(others.sort());
  });

  it('after a stop request refuses the batches waiting for a transaction: none of their rows, no checkpoint move', async () => {
    const stop = new AbortController();
    const stopping = new DuckDBSink(w, dir, { signal: stop.signal });
    const first = { prev: null, next: '1', replace: { kind: 'none' } as const };
    await stopping.write(batch(EVENTS, [row(EVENTS, 'a', 10)], first));
    const waiting = [
      stopping.write(batch(EVENTS, [row(EVENTS, 'b', 20)], { prev: '1', next: '2', replace: { kind: 'none' } })),
      stopping.write(batch(EVENTS, [row(EVENTS, 'c', 30)], { prev: '2', next: '3', replace: { kind: 'none' } })),
    ];
    stop.abort();
    const outcomes = await Promise.allSettled(waiting);
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : 'committed'))).toEqual([
      'StopRequested',
      'StopRequested',
    ]);
    expect(await stored(EVENTS)).toEqual(['a@10=v-a']);
    expect(await checkpoint(EVENTS)).toBe('1');
    // Their files are gone with them.
    expect(readdirSync(join(dir, '.tmp'))).toEqual([]);
  });
});

describe('two commit lanes', () => {
  /** The connection ('main' or 'side') each statement of the sink ran on, with its text. */
  function spyConnections(): { conn: string; sql: string }[] {
    const seen: { conn: string; sql: string }[] = [];
    const recording = (conn: string, sql: Sql): Sql => ({
      exec: (text, params) => {
        seen.push({ conn, sql: text });
        return sql.exec(text, params);
      },
      all: (text, params) => {
        seen.push({ conn, sql: text });
        return sql.all(text, params);
      },
    });
    const transaction = w.transaction.bind(w);
    w.transaction = ((fn: Parameters<Warehouse['transaction']>[0]) =>
      transaction((tx) => fn(recording('main', tx)))) as Warehouse['transaction'];
    const lane = w.lane.bind(w);
    w.lane = async () => {
      const l = await lane();
      return { ...l, ...recording('side', l) };
    };
    return seen;
  }
  /** The connections that inserted into `ds`'s table. */
  const insertedOn = (seen: readonly { conn: string; sql: string }[], ds: Dataset) => [
    ...new Set(seen.filter((s) => s.sql.startsWith(`INSERT INTO ${qt(ds.table)}`)).map((s) => s.conn)),
  ];

  it('commit each table on one connection, in the order its batches came, two tables on two connections at once', async () => {
    const seen = spyConnections();
    const lanes = new DuckDBSink(w, dir, { lanes: 2 });
    // Three batches of each table given at once, each moving its checkpoint from where the one before left it: a
    // batch committed before the one before it would find its checkpoint elsewhere and be refused.
    const moves = [
      [null, '1'],
      ['1', '2'],
      ['2', '3'],
    ] as const;
    const events = (i: number) =>
      lanes.write(
        batch(EVENTS, [row(EVENTS, `e${i}`, 10 * (i + 1))], {
          prev: moves[i]![0],
          next: moves[i]![1],
          replace: { kind: 'from', column: 'timestamp', from: 10 * (i + 1) },
        }),
      );
    const state = (i: number) =>
      lanes.write(
        batch(STATE, [row(STATE, `s${i}`, i)], { prev: moves[i]![0], next: moves[i]![1], replace: { kind: 'ids' } }),
      );
    // Interleaved unevenly, so that no pattern of turns but the table's own keeps a table on one connection.
    const writes = [events(0), events(1), state(0), events(2), state(1), state(2)];
    expect((await Promise.all(writes)).map((x) => x.rows)).toEqual([1, 1, 1, 1, 1, 1]);
    await lanes.close();
    expect(await stored(EVENTS)).toEqual(['e0@10=v-e0', 'e1@20=v-e1', 'e2@30=v-e2']);
    expect(await stored(STATE)).toEqual(['s0@0=v-s0', 's1@1=v-s1', 's2@2=v-s2']);
    expect([await checkpoint(EVENTS), await checkpoint(STATE)]).toEqual(['3', '3']);
    // The first table met took the warehouse's connection, the second a connection of the sink's own.
    expect([insertedOn(seen, EVENTS), insertedOn(seen, STATE)]).toEqual([['main'], ['side']]);
    expect((await pending()).map((p) => p.dataset).sort()).toEqual([EVENTS.name, STATE.name].sort());
  });

  it("one lane commits every table on the warehouse's connection, and opens none of its own", async () => {
    const seen = spyConnections();
    const one = new DuckDBSink(w, dir, { lanes: 1 });
    await Promise.all([
      one.write(batch(EVENTS, [row(EVENTS, 'e', 10)], { prev: null, next: '1', replace: { kind: 'none' } })),
      one.write(batch(STATE, [row(STATE, 's', 1)], { prev: null, next: '1', replace: { kind: 'ids' } })),
    ]);
    await one.close();
    expect([insertedOn(seen, EVENTS), insertedOn(seen, STATE)]).toEqual([['main'], ['main']]);
  });

  it('a stop request refuses the waiting batches of both lanes alike', async () => {
    const stop = new AbortController();
    const lanes = new DuckDBSink(w, dir, { signal: stop.signal, lanes: 2 });
    await lanes.write(batch(EVENTS, [row(EVENTS, 'a', 10)], { prev: null, next: '1', replace: { kind: 'none' } }));
    await lanes.write(batch(STATE, [row(STATE, 'x', 1)], { prev: null, next: '1', replace: { kind: 'ids' } }));
    const waiting = [
      lanes.write(batch(EVENTS, [row(EVENTS, 'b', 20)], { prev: '1', next: '2', replace: { kind: 'none' } })),
      lanes.write(batch(EVENTS, [row(EVENTS, 'c', 30)], { prev: '2', next: '3', replace: { kind: 'none' } })),
      lanes.write(batch(STATE, [row(STATE, 'y', 2)], { prev: '1', next: '2', replace: { kind: 'ids' } })),
      lanes.write(batch(STATE, [row(STATE, 'z', 3)], { prev: '2', next: '3', replace: { kind: 'ids' } })),
    ];
    stop.abort();
    const outcomes = await Promise.allSettled(waiting);
    await lanes.close();
    expect(outcomes.map((o) => (o.status === 'rejected' ? (o.reason as Error).name : 'committed'))).toEqual([
      'StopRequested',
      'StopRequested',
      'StopRequested',
      'StopRequested',
    ]);
    expect([await stored(EVENTS), await stored(STATE)]).toEqual([['a@10=v-a'], ['x@1=v-x']]);
    expect([await checkpoint(EVENTS), await checkpoint(STATE)]).toEqual(['1', '1']);
  });

  it('two lanes where DuckDB may take 1 GiB or more, or has no limit; one under it', () => {
    expect(['', '512MB', '1GB', '1000MiB', '1GiB', '1.5GB', '2GB', '16GiB'].map(commitLanes)).toEqual([
      2, 1, 1, 1, 2, 2, 2, 2,
    ]);
  });
});
