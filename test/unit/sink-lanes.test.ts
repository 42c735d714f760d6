/**
 * The DuckDB sink's two commit lanes on a real warehouse file: each table on one connection in the order its batches
 * came, two tables at once, and how many lanes a memory limit gives; what a stop request and a run that ended before
 * committing leave.
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import { DuckDBSink } from '../../src/store/sink.ts';
import { commitLanes } from '../../src/store/sink-lanes.ts';
import type { Sql } from '../../src/store/sql-port.ts';
import type { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import {
  batch,
  checkpoint,
  dir,
  EVENTS,
  pending,
  row,
  STATE,
  stored,
  useSinkFixture,
  w,
} from '../support/sink-fixture.ts';

useSinkFixture();

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

describe('the DuckDB sink', () => {
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
