/** Writes batches of mapped rows into their table and moves the checkpoint in the same transaction. */

import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Dataset } from '../catalog/catalog.ts';
import { ConcurrentWriterError, StopRequested } from '../errors.ts';
import { lit, q, qt } from '../util/sql.ts';
import {
  type CheckpointKey,
  type CheckpointMove,
  checkpointMovesStatement,
  checkpointStatement,
  dropShardsStatement,
} from './checkpoint-store.ts';
import { type BatchFormat, insertParts, jsonColumns, pageColumns } from './ddl.ts';
import type { Warehouse } from './warehouse.ts';

/** What a batch replaces before it is inserted, so that re-reads never duplicate a row. */
export type Replace =
  /** Rows of the chain from `from` on in the keyset column (re-read window of events and buckets). */
  | { readonly kind: 'from'; readonly column: string; readonly from: string | number }
  /** Rows of the chain with the keyset column in [from, to): the re-read part of one shard of a backfill. */
  | { readonly kind: 'range'; readonly column: string; readonly from: string | number; readonly to: string | number }
  /** Rows of the chain with the same ids (upsert of mutable entities). */
  | { readonly kind: 'ids' }
  /** Rows of the chain with these ids, which the upstream no longer holds (entities of blocks a reorg reverted). */
  | { readonly kind: 'gone'; readonly ids: readonly string[] }
  /** Rows of the chain written at the same block or run (snapshots re-taken). */
  | { readonly kind: 'snapshot' }
  | { readonly kind: 'none' };

/** A page kept for a batch (see `DuckDBSink.keep`): its rows as the upstream sent them, in a file of their own. */
export interface KeptPage {
  readonly file: string;
  /** Length of the page's text (UTF-16 code units, as JavaScript counts). */
  readonly length: number;
}

/** One batch: rows of one dataset and chain, and the checkpoint move that commits with them. */
export interface Batch {
  readonly ds: Dataset;
  readonly chainId: number;
  readonly runId: string;
  readonly block: number | null;
  /** Timestamp of `block` (ISO), or of the snapshot for the block-less list. */
  readonly blockTime: string | null;
  readonly takenAt?: string;
  /**
   * The rows, in one of two forms (never both): mapped by the exporter (flat, named as the table's columns), or pages
   * kept as the upstream sent them (arrays of entities, checked by the exporter), which DuckDB maps as it reads them.
   */
  readonly rows: readonly Record<string, unknown>[];
  readonly pages: readonly KeptPage[];
  /** How many rows the batch holds (its mapped rows, or the rows of its pages). */
  readonly count: number;
  readonly replace: Replace;
  /** The checkpoint move that commits with the rows: the dataset's own, or (with `shard`) one shard's of its backfill. */
  readonly checkpoint: Pick<CheckpointMove, 'prev' | 'next'> & Pick<CheckpointKey, 'shard'>;
  /** Deletes the dataset's shard checkpoints in the same transaction (the shards are merged into its own). */
  readonly mergeShards?: boolean;
}

/** What committing a batch did. */
export interface Written {
  /** Rows inserted. */
  readonly rows: number;
  /**
   * Ids of stored rows of an event or bucket dataset that the batch replaced although they lay outside its re-read
   * range: the upstream sent an id it had sent before with another key, which a subgraph cannot hold. The newest wins.
   */
  readonly replacedIds: readonly string[];
}

/** A batch waiting for its commit, with its rows already in files. */
interface Pending {
  readonly batch: Batch;
  readonly source: BatchSource;
  readonly resolve: (w: Written) => void;
  readonly reject: (e: unknown) => void;
}

/** Names of the sink's files in its temporary folder: batch files of mapped rows, and kept pages. */
const SINK_FILE = /^(?:[0-9a-f-]{36}\.ndjson|page-[0-9a-f-]{36}\.json)$/;

/** Most batches merged into one transaction by group commit. */
const GROUP_LIMIT = 64;

/**
 * The DuckDB sink: a batch's rows are in files (its pages as the page checker kept them, or its mapped rows written to
 * an NDJSON file when it arrives), read by one `INSERT … SELECT … FROM read_json` in a transaction with its checkpoint.
 * Batches that arrive while a transaction runs are committed together in the next one (group commit), since the commit
 * itself costs far more than a small batch; a failing group is retried batch by batch.
 */
export class DuckDBSink {
  private readonly tmpDir: string;
  private readonly queue: Pending[] = [];
  private draining = false;

  /**
   * A sink writing its files under `<dataDir>/.tmp` (see `signal` for a stop). Files left there by a run that ended before committing them (the
   * caller holds the data folder's lock, so no other run is writing there) are removed first.
   */
  constructor(
    private readonly w: Warehouse,
    dataDir: string,
    /**
     * A stop request: once aborted, batches waiting for their transaction are refused (`StopRequested`) and their rows
     * left to the next run, which reads them again from the unmoved checkpoints. The transaction under way commits or
     * rolls back as it would have.
     */
    private readonly signal?: AbortSignal,
  ) {
    this.tmpDir = join(dataDir, '.tmp');
    mkdirSync(this.tmpDir, { recursive: true });
    for (const name of readdirSync(this.tmpDir))
      if (SINK_FILE.test(name)) rmSync(join(this.tmpDir, name), { force: true });
  }

  /** A new file in the sink's temporary folder, for a checked page's rows (see `BatchSink.pageFile`). */
  pageFile(): string {
    return join(this.tmpDir, `page-${randomUUID()}.json`);
  }

  /** The rows of a kept page, as they were written. */
  reread(page: KeptPage): string {
    return readFileSync(page.file, 'utf8');
  }

  /** Forgets kept pages that no batch will take (their task failed or stopped before committing them). */
  drop(pages: readonly KeptPage[]): void {
    for (const p of pages) rmSync(p.file, { force: true });
  }

  /** Commits a batch (possibly with others); resolves with what it wrote. */
  write(b: Batch): Promise<Written> {
    return new Promise((resolve, reject) => {
      let source: BatchSource;
      try {
        source = this.prepare(b);
      } catch (e) {
        reject(e);
        return;
      }
      this.queue.push({ batch: b, source, resolve, reject });
      if (!this.draining) void this.drain();
    });
  }

  /** A batch's files: its kept pages, or its mapped rows written to an NDJSON file, one row per line. */
  private prepare(b: Batch): BatchSource {
    if (b.pages.length && b.rows.length) throw new Error(`a batch of ${b.ds.name} holds both pages and mapped rows`);
    if (b.pages.length) return { format: 'pages', files: b.pages.map((p) => ({ file: p.file, longest: p.length })) };
    const file = join(this.tmpDir, `${randomUUID()}.ndjson`);
    let longest = 0;
    let text = '';
    for (const r of b.rows) {
      const line = JSON.stringify(r);
      longest = Math.max(longest, line.length);
      text += `${line}\n`;
    }
    writeFileSync(file, text);
    return { format: 'rows', files: [{ file, longest }] };
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length) {
        const group = this.queue.splice(0, GROUP_LIMIT);
        const stopped = () => this.signal?.aborted === true;
        try {
          if (stopped()) throw new StopRequested();
          const counts = await this.commit(group);
          for (const [i, p] of group.entries()) p.resolve(counts[i]!);
        } catch (e) {
          if (group.length === 1 || stopped()) for (const p of group) p.reject(stopped() ? new StopRequested() : e);
          else for (const p of group) await this.commit([p]).then((c) => p.resolve(c[0]!), p.reject);
        } finally {
          for (const p of group) for (const f of p.source.files) rmSync(f.file, { force: true });
        }
      }
    } finally {
      this.draining = false;
    }
  }

  private async commit(group: readonly Pending[]): Promise<Written[]> {
    try {
      return await this.w.transaction(async (tx) => {
        if (this.signal?.aborted) throw new StopRequested();
        // A stop request interrupts the statements of this transaction (not its COMMIT), which then rolls back.
        const interrupt = () => this.w.interrupt();
        this.signal?.addEventListener('abort', interrupt);
        try {
          return await this.groupStatements(tx, group);
        } finally {
          this.signal?.removeEventListener('abort', interrupt);
        }
      });
    } catch (e) {
      if (this.signal?.aborted) throw new StopRequested();
      throw outOfMemory(
        e,
        group.map((p) => p.batch),
      );
    }
  }

  /** The statements of one group's transaction: rows, replaced ranges, checkpoint moves and lake marks. */
  private async groupStatements(tx: Tx, group: readonly Pending[]): Promise<Written[]> {
    const counts: Written[] = [];
    const lake = new Map<string, LakeMark>();
    // Consecutive batches that only add rows to one table share one INSERT over their files: DuckDB's cost per
    // statement is far above its cost per row at these sizes.
    let run: Pending[] = [];
    const insertRun = async () => {
      if (!run.length) return;
      const first = run[0]!;
      const rows = run.reduce((n, p) => n + p.batch.count, 0);
      const inserted = await insertRows(tx, first.batch, {
        format: first.source.format,
        files: run.flatMap((p) => p.source.files),
      });
      if (inserted !== rows) throw new Error(`inserted ${inserted} of ${rows} rows into ${first.batch.ds.table}`);
      await moveCheckpoints(
        tx,
        run.map((p) => p.batch),
      );
      run = [];
    };
    for (const p of group) {
      const joins = joinsInsert(p.batch);
      if (!joins || (run.length && !sameInsert(run[0]!, p))) await insertRun();
      let written: Written;
      let mark: LakeMark | undefined;
      if (joins) {
        // A shard's first batch clears its key range now: the rows of the batches waiting beside it lie in other
        // shards' ranges (shards split the key range), and its own shard has no batch before it.
        const from = p.batch.replace.kind === 'range' ? await deleteRange(tx, p.batch) : null;
        // Its rows and its checkpoint move wait for those of the batches next to it.
        run.push(p);
        written = { rows: p.batch.count, replacedIds: [] };
        mark = { chainId: p.batch.chainId, dataset: p.batch.ds.name, from, runs: new Set([p.batch.runId]) };
      } else ({ written, mark } = await writeOne(tx, p));
      counts.push(written);
      if (mark)
        lake.set(`${mark.chainId}/${mark.dataset}`, joinMarks(lake.get(`${mark.chainId}/${mark.dataset}`), mark));
    }
    await insertRun();
    // What the lake must rewrite, once per dataset and chain of the group.
    for (const m of lake.values())
      await tx.exec(
        `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs) VALUES ($1, $2, $3, from_json($4, '["VARCHAR"]'))
         ON CONFLICT (chain_id, dataset) DO UPDATE SET from_seq = least(lake_pending.from_seq, excluded.from_seq), runs = list_distinct(list_concat(lake_pending.runs, excluded.runs))`,
        [m.chainId, m.dataset, m.from, JSON.stringify([...m.runs])],
      );
    return counts;
  }
}

/** Where the lake must rewrite a dataset of a chain from (null: only the runs' own rows), and the runs that wrote it. */
interface LakeMark {
  readonly chainId: number;
  readonly dataset: string;
  readonly from: number | null;
  readonly runs: ReadonlySet<string>;
}

/** Two marks of one dataset and chain as one: the earlier start (a null start gives way to a number), both runs. */
function joinMarks(a: LakeMark | undefined, b: LakeMark): LakeMark {
  if (!a) return b;
  const from = a.from === null ? b.from : b.from === null ? a.from : Math.min(a.from, b.from);
  return { ...a, from, runs: new Set([...a.runs, ...b.runs]) };
}

/** DuckDB's error when a statement needs more than its memory limit, with what to do about it. */
function outOfMemory(e: unknown, batches: readonly Batch[]): unknown {
  const msg = (e as Error).message ?? '';
  if (!/Out of Memory Error/i.test(msg)) return e;
  const what = [...new Set(batches.map((b) => `${b.ds.name} on chain ${b.chainId}`))].join(', ');
  return new Error(
    `DuckDB needed more memory than duckdbMemoryLimit allows while storing ${what} (${msg.split('\n')[0]}); raise duckdbMemoryLimit in the config (e.g. "1GB"), and run again: batches committed before are kept`,
    { cause: e },
  );
}

/** An open transaction, as a batch uses it. */
interface Tx {
  exec(sql: string, params?: (string | number | null)[]): Promise<number>;
  all(sql: string, params?: (string | number | null)[]): Promise<Record<string, unknown>[]>;
}

/** A file of a batch and the length of its longest row or page (in UTF-16 code units, as JavaScript counts). */
interface BatchFile {
  readonly file: string;
  readonly longest: number;
}

/** A batch's files: NDJSON of mapped rows (`rows`), or JSON arrays of upstream entities (`pages`). */
interface BatchSource {
  readonly format: BatchFormat;
  readonly files: readonly BatchFile[];
}

/** DuckDB's default `maximum_object_size` (16 MiB). */
const DEFAULT_OBJECT_BYTES = 16 * 1024 ** 2;

/**
 * `maximum_object_size` for a batch file: room for its longest line (`longest` counts UTF-16 code units, and one is at
 * most 3 bytes of UTF-8), never below DuckDB's default. Left at the default, a file holding rows of more than 16 MiB
 * (a hostile token name) can be refused by DuckDB's JSON reader.
 */
export function objectBytes(longest: number): number {
  return Math.max(DEFAULT_OBJECT_BYTES, 3 * longest + 1024);
}

/**
 * The rowids of a chain's rows (`$1`) that share their id with a row inserted after them. Ids are grouped by hash first,
 * so that only the few candidates are compared whole.
 */
function repeatedRows(table: string): string {
  return `SELECT r FROM (
      SELECT rowid AS r, row_number() OVER (PARTITION BY id ORDER BY rowid DESC) AS n FROM ${table}
      WHERE chain_id = $1 AND hash(id) IN (SELECT hash(id) FROM ${table} WHERE chain_id = $1 GROUP BY 1 HAVING count(*) > 1)
    ) WHERE n > 1`;
}

/** The rows of batch files, read by DuckDB's JSON reader with the dataset's column types (mapped rows, or entities). */
function readFiles(ds: Dataset, src: BatchSource): string {
  const { files } = src;
  const paths = files.length === 1 ? lit(files[0]!.file) : `[${files.map((f) => lit(f.file)).join(', ')}]`;
  const longest = Math.max(...files.map((f) => f.longest));
  const shape =
    src.format === 'pages'
      ? `format = 'array', columns = ${pageColumns(ds)}`
      : `format = 'newline_delimited', columns = ${jsonColumns(ds)}`;
  return `read_json(${paths}, ${shape}, maximum_object_size = ${objectBytes(longest)})`;
}

/**
 * Whether a batch's rows can share one INSERT with the batches next to it: it adds rows, clearing at most its own key
 * range first, and no stored row can share an id with it. That holds for a batch that replaces nothing of a dataset
 * other than events and buckets, and for every batch of a shard of a first backfill (whose ids the merge of the shards
 * checks once) but the merge itself.
 */
function joinsInsert(b: Batch): boolean {
  if (b.count === 0 || b.mergeShards) return false;
  if (b.checkpoint.shard) return b.replace.kind === 'none' || b.replace.kind === 'range';
  return b.replace.kind === 'none' && b.ds.kind !== 'event' && b.ds.kind !== 'bucket';
}

/**
 * Whether two batches' rows go to one table with the same exporter columns, from files of one format, so one INSERT
 * can take both.
 */
function sameInsert(x: Pending, y: Pending): boolean {
  const [a, b] = [x.batch, y.batch];
  return (
    a.ds === b.ds &&
    a.chainId === b.chainId &&
    a.block === b.block &&
    a.runId === b.runId &&
    a.takenAt === b.takenAt &&
    x.source.format === y.source.format
  );
}

/** Inserts the rows of `src`, written for batches like `b` (see `sameInsert`); returns how many went in. */
async function insertRows(tx: Tx, b: Batch, src: BatchSource): Promise<number> {
  const { target, select } = insertParts(b.ds, src.format);
  return tx.exec(
    `INSERT INTO ${qt(b.ds.table)} (${target}, chain_id, _block, _run_id, _taken_at) SELECT ${select}, $1, $2, $3, $4::TIMESTAMPTZ FROM ${readFiles(b.ds, src)}`,
    [b.chainId, b.block, b.runId, b.takenAt ?? null],
  );
}

/** Deletes the stored rows of a batch's `range` (the re-read part of one shard); returns where the lake must rewrite from. */
async function deleteRange(tx: Tx, b: Batch): Promise<number> {
  const r = b.replace as Extract<Replace, { kind: 'range' }>;
  await tx.exec(`DELETE FROM ${qt(b.ds.table)} WHERE chain_id = $1 AND ${q(r.column)} >= $2 AND ${q(r.column)} < $3`, [
    b.chainId,
    r.from,
    r.to,
  ]);
  return Number(r.from);
}

/** The key of a batch's checkpoint. */
function checkpointKey(b: Batch): CheckpointKey {
  return { chainId: b.chainId, dataset: b.ds.name, ...(b.checkpoint.shard ? { shard: b.checkpoint.shard } : {}) };
}

/** The error of a batch whose checkpoint another writer moved (or created) first. */
function concurrentWriter(b: Batch): ConcurrentWriterError {
  const shard = b.checkpoint.shard;
  return new ConcurrentWriterError(
    shard ? `${b.ds.name} (shard ${shard.shard} of ${shard.shards})` : b.ds.name,
    b.chainId,
  );
}

/**
 * The checkpoint moves of batches, in order, by compare-and-set, in as few statements as they allow: the moves of one
 * checkpoint that follow each other become one (from the first batch's `prev` to the last's `next`), and the moves of
 * existing checkpoints of one table go in one UPDATE. Any move that fails fails them all; the sink then commits the
 * batches one by one, which finds the one refused.
 */
async function moveCheckpoints(tx: Tx, batches: readonly Batch[]): Promise<void> {
  const chains = new Map<string, { first: Batch; last: Batch }>();
  for (const b of batches) {
    const id = JSON.stringify([b.chainId, b.ds.name, b.checkpoint.shard?.shard ?? null, b.checkpoint.shard?.shards]);
    const c = chains.get(id);
    if (!c) chains.set(id, { first: b, last: b });
    else if (c.last.checkpoint.next === b.checkpoint.prev) c.last = b;
    else throw concurrentWriter(b);
  }
  const move = (c: { first: Batch; last: Batch }) => ({
    key: checkpointKey(c.first),
    move: {
      prev: c.first.checkpoint.prev,
      next: c.last.checkpoint.next,
      block: { number: c.last.block, time: c.last.blockTime },
      runId: c.last.runId,
    },
  });
  const tables = new Map<boolean, ReturnType<typeof move>[]>();
  for (const c of chains.values()) {
    const m = move(c);
    // A checkpoint not there yet is created by its own statement (an INSERT that adds no row if another writer did).
    if (m.move.prev === null) {
      const cp = checkpointStatement(m.key, m.move);
      if ((await tx.exec(cp.sql, cp.params)) !== 1) throw concurrentWriter(c.first);
    } else tables.set(!!m.key.shard, [...(tables.get(!!m.key.shard) ?? []), m]);
  }
  for (const moves of tables.values()) {
    const cp = checkpointMovesStatement(moves);
    if ((await tx.exec(cp.sql, cp.params)) !== moves.length) throw concurrentWriter(batches[0]!);
  }
}

/** The statements of one batch that does not only add rows, inside an open transaction; the lake is left to the caller. */
async function writeOne(
  tx: Tx,
  { batch: b, source: src }: Pick<Pending, 'batch' | 'source'>,
): Promise<{ written: Written; mark?: LakeMark }> {
  const source = readFiles(b.ds, src);
  const table = qt(b.ds.table);
  // Rows the re-read window cleared: none, with none inserted, leaves the lake as it is.
  let cleared = 0;
  if (b.replace.kind === 'from')
    cleared = await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND ${q(b.replace.column)} >= $2`, [
      b.chainId,
      b.replace.from,
    ]);
  if (b.replace.kind === 'range') await deleteRange(tx, b);
  if (b.replace.kind === 'ids' && b.count)
    await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND id IN (SELECT id FROM ${source})`, [b.chainId]);
  // The ids travel as one JSON parameter, never as SQL text.
  const removed =
    b.replace.kind === 'gone' && b.replace.ids.length
      ? await tx.exec(
          `DELETE FROM ${table} WHERE chain_id = $1 AND id IN (SELECT unnest(from_json($2, '["VARCHAR"]')))`,
          [b.chainId, JSON.stringify(b.replace.ids)],
        )
      : 0;
  // An entity table never holds two rows with one id: a stored row of an event or bucket dataset with an id of this
  // batch, left after the re-read range was cleared, is an upstream defect (or a transaction a reorg moved to a later
  // block); the newest row wins, and the ids are counted. A shard of a first backfill skips this check, which would scan
  // the chain's rows once per batch (quadratic in a backfill of millions); the merge of the shards makes it once, over
  // every row, keeping the row inserted last of each id.
  let replacedIds: string[] = [];
  let lakeFrom =
    b.replace.kind === 'range' || (b.replace.kind === 'from' && (cleared > 0 || b.count > 0))
      ? Number(b.replace.from)
      : null;
  const events = b.ds.kind === 'event' || b.ds.kind === 'bucket';
  const seq = events ? q(b.ds.columns.find((c) => c.field === b.ds.seq)!.column) : '';
  const older =
    events && b.count && !b.checkpoint.shard
      ? `chain_id = $1 AND id IN (SELECT id FROM ${source})`
      : events && b.mergeShards
        ? `rowid IN (${repeatedRows(table)})`
        : undefined;
  if (older) {
    const gone = await tx.all(`DELETE FROM ${table} WHERE ${older} RETURNING id, CAST(${seq} AS BIGINT) AS seq`, [
      b.chainId,
    ]);
    replacedIds = gone.map((r) => String(r.id));
    // The lake rewrites the days of the removed rows too.
    for (const r of gone) lakeFrom = Math.min(lakeFrom ?? Number(r.seq), Number(r.seq));
  }
  // A snapshot replaces one taken at the same block (or, for the block-less list, by the same run).
  if (b.replace.kind === 'snapshot' && b.block !== null)
    await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND _block = $2`, [b.chainId, b.block]);
  if (b.replace.kind === 'snapshot' && b.block === null)
    await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND _run_id = $2`, [b.chainId, b.runId]);
  const inserted = b.count ? await insertRows(tx, b, src) : 0;
  if (inserted !== b.count) throw new Error(`inserted ${inserted} of ${b.count} rows into ${b.ds.table}`);
  const cp = checkpointStatement(checkpointKey(b), {
    ...b.checkpoint,
    block: { number: b.block, time: b.blockTime },
    runId: b.runId,
  });
  // Compare-and-set: no row moved means another writer moved (or created) this checkpoint first.
  if ((await tx.exec(cp.sql, cp.params)) !== 1) throw concurrentWriter(b);
  if (b.mergeShards) {
    const drop = dropShardsStatement(b.chainId, b.ds.name);
    await tx.exec(drop.sql, drop.params);
  }
  const written = { rows: inserted, replacedIds };
  if (inserted === 0 && removed === 0 && lakeFrom === null) return { written };
  return { written, mark: { chainId: b.chainId, dataset: b.ds.name, from: lakeFrom, runs: new Set([b.runId]) } };
}
