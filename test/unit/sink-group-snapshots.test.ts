/**
 * The DuckDB sink on a real warehouse file, snapshots of several chains committed as one group: each written as it
 * would be alone, lists by their digest and entity snapshots kept as pages compared chain by chain.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import type { Batch } from '../../src/store/batch.ts';
import { qt } from '../../src/util/sql.ts';
import { asGroup, batch, LIST, SNAP, sink, spyStatements, useSinkFixture, w } from '../support/sink-fixture.ts';

useSinkFixture();

describe('the DuckDB sink', () => {
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
});
