/**
 * The DuckDB sink on a real warehouse file, batches of several chains committed as one group: re-read windows,
 * upserts by id, bucket windows and snapshots compared together, each chain with its own checkpoint and lake mark.
 * Expected tables are written out by hand from the rules in `store/sink.ts`'s `Replace`.
 */
import { writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import type { Batch } from '../../src/store/batch.ts';
import { qt } from '../../src/util/sql.ts';
import {
  again,
  asGroup,
  BUCKETS,
  batch,
  EVENTS,
  row,
  STATE,
  sink,
  spyStatements,
  useSinkFixture,
  w,
} from '../support/sink-fixture.ts';

useSinkFixture();

describe('the DuckDB sink', () => {
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
});
