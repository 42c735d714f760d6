/**
 * The DuckDB sink on a real warehouse file, each kind of batch alone: 'from' windows that change some rows, 'ids',
 * 'range', 'gone', kept pages, repairs, refused checkpoints, and shards that share one INSERT. Expected tables are
 * written out by hand from the rules in `store/sink.ts`'s `Replace`.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConcurrentWriterError } from '../../src/errors.ts';
import { createTable } from '../../src/store/ddl.ts';
import { DuckDBSink } from '../../src/store/sink.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import {
  again,
  batch,
  checkpoint,
  dir,
  EVENTS,
  pending,
  row,
  runs,
  STATE,
  sink,
  spyStatements,
  stored,
  useSinkFixture,
  w,
} from '../support/sink-fixture.ts';

useSinkFixture();

describe('the DuckDB sink', () => {
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
});
