/**
 * The DuckDB sink on a real warehouse file: what each kind of batch replaces, the checkpoint it moves by
 * compare-and-set, the ids it reports replaced, and what it leaves for the lake. Expected tables are written out by
 * hand from the rules in `store/sink.ts`'s `Replace`, not computed by its statements. This file: 'from' windows, and
 * the liquidity list's snapshots; the other kinds, groups, commits and lanes are in the sink-*.test.ts beside it, and
 * the fixture in test/support/sink-fixture.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import { ConcurrentWriterError } from '../../src/errors.ts';
import type { Batch } from '../../src/store/batch.ts';
import { qt } from '../../src/util/sql.ts';
import {
  again,
  batch,
  checkpoint,
  EVENTS,
  LIST,
  pending,
  row,
  runs,
  SNAP,
  sink,
  spyStatements,
  stored,
  useSinkFixture,
  w,
} from '../support/sink-fixture.ts';

useSinkFixture();

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
});
