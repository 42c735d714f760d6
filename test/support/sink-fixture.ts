/**
 * A real warehouse file for each test of the DuckDB sink (test/unit/sink*.test.ts): the warehouse, the sink and five
 * fake datasets of every kind, made afresh before each test and removed after it, and the helpers that write batches
 * and read what the sink stored. `w`, `sink` and `dir` are live bindings: each test sees its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach } from 'vitest';
import type { Dataset } from '../../src/catalog/catalog.ts';
import type { Batch, Replace } from '../../src/store/batch.ts';
import { createTable } from '../../src/store/ddl.ts';
import { DuckDBSink } from '../../src/store/sink.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { fakeDataset } from './task-fakes.ts';

export let dir: string;
export let w: Warehouse;
export let sink: DuckDBSink;
export const EVENTS = fakeDataset('event');
export const STATE = fakeDataset('mutable');
export const BUCKETS = fakeDataset('bucket');
export const LIST = fakeDataset('list');
export const SNAP = fakeDataset('snapshot');

/** A warehouse with the five datasets' tables and a sink on it, before each test of the calling file; removed after. */
export function useSinkFixture(): void {
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
}

export const row = (ds: Dataset, id: string, seq: number | null, value: string | null = `v-${id}`) => ({
  id,
  [ds.seq!]: seq === null ? null : String(seq),
  value,
});

/** A batch of `rows` on chain 56 moving the checkpoint from `prev` to `next`. */
export function batch(
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

export async function stored(ds: Dataset): Promise<string[]> {
  const seq = ds.seq!;
  const rows = await w.all(`SELECT id, CAST("${seq}" AS VARCHAR) AS s, value FROM ${qt(ds.table)} ORDER BY id`);
  return rows.map((r) => `${r.id}@${r.s ?? 'null'}=${r.value}`);
}

/** Records every statement the sink runs inside its transactions, one list per transaction. */
export function spyStatements(): string[][] {
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

export const checkpoint = async (ds: Dataset) =>
  (await w.all('SELECT cursor FROM _pool_export.checkpoints WHERE dataset = $1', [ds.name]))[0]?.cursor ?? null;
export const pending = async () =>
  (await w.all('SELECT dataset, from_seq FROM _pool_export.lake_pending ORDER BY dataset')).map((r) => ({
    dataset: r.dataset,
    from_seq: r.from_seq === null ? null : Number(r.from_seq),
  }));

/** Each stored row with the run that wrote it. */
export const runs = async (ds: Dataset) =>
  (await w.all(`SELECT id, _run_id FROM ${qt(ds.table)} ORDER BY id`)).map((r) => `${r.id}:${r._run_id}`);
/** A batch read again by another run, at a later block. */
export const again = (b: Batch, runId: string): Batch => ({ ...b, runId, block: 200 });

/** Commits `batches` as one group: a batch on chain 99 holds the transaction while they queue behind it. */
export const asGroup = async (batches: Batch[]) => {
  const blocker = sink.write({
    ...batch(LIST, [{ id: 'p', value: '1' }], { prev: null, next: 'b', replace: { kind: 'none' } }),
    chainId: 99,
  });
  const written = batches.map((b) => sink.write(b));
  await blocker;
  return Promise.all(written);
};
