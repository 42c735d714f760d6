/**
 * The DuckDB sink on a real warehouse file, how a group commits: one UPDATE and one INSERT where it can, the lake
 * marked once per dataset, shards and merges, kept pages stored as sent, files a stopped run left, and a stop request.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import { ConcurrentWriterError } from '../../src/errors.ts';
import type { Batch, Replace } from '../../src/store/batch.ts';
import { createTable } from '../../src/store/ddl.ts';
import { qt } from '../../src/util/sql.ts';
import { PROBE_ROWS, probeDataset } from '../support/probes.ts';
import {
  batch,
  checkpoint,
  EVENTS,
  pending,
  row,
  STATE,
  sink,
  spyStatements,
  stored,
  useSinkFixture,
  w,
} from '../support/sink-fixture.ts';
import { fakeDataset } from '../support/task-fakes.ts';

useSinkFixture();

describe('the DuckDB sink', () => {
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
});
