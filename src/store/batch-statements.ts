/**
 * The statements that commit batches inside an open transaction: reading a batch's files with the dataset's column
 * types, the rows each kind of `Replace` clears, and what the lake must write again (a lake mark, `batch.ts`); the
 * checkpoint moves by compare-and-set are `checkpoint-moves.ts`.
 */
import type { Dataset } from '../catalog/catalog.ts';
import { maxOf } from '../util/extremes.ts';
import { lit, q, qt } from '../util/sql.ts';
import type { Batch, Replace, Wrote } from './batch.ts';
import { concurrentWriter } from './checkpoint-moves.ts';
import { dropShardsStatement } from './checkpoint-store.ts';
import { type BatchFormat, idSqlType, insertParts, jsonColumns, pageColumns } from './ddl.ts';
import { recordSnapshotDigests, sameAsStoredSnapshot } from './snapshot-digest.ts';
import type { Tx } from './sql-port.ts';

/** A file of a batch and the length of its longest row or page (in UTF-16 code units, as JavaScript counts). */
export interface BatchFile {
  readonly file: string;
  readonly longest: number;
}

/** A batch's files: NDJSON of mapped rows (`rows`), or JSON arrays of upstream entities (`pages`). */
export interface BatchSource {
  readonly format: BatchFormat;
  readonly files: readonly BatchFile[];
  /** A snapshot's mapped rows as one digest (see `snapshotDigest`), when they are mapped rows. */
  readonly digest?: string;
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

/**
 * The rows of batch files, read by DuckDB's JSON reader with the dataset's column types (mapped rows, or entities);
 * `fileColumn` adds a column of that name holding each row's file, as given.
 */
export function readFiles(ds: Dataset, src: BatchSource, fileColumn?: string): string {
  const { files } = src;
  const paths = files.length === 1 ? lit(files[0]!.file) : `[${files.map((f) => lit(f.file)).join(', ')}]`;
  const longest = maxOf(files.map((f) => f.longest));
  const shape =
    src.format === 'pages'
      ? `format = 'array', columns = ${pageColumns(ds)}`
      : `format = 'newline_delimited', columns = ${jsonColumns(ds)}`;
  const named = fileColumn === undefined ? '' : `, filename = ${lit(fileColumn)}`;
  return `read_json(${paths}, ${shape}, maximum_object_size = ${objectBytes(longest)}${named})`;
}

/** Inserts the rows of `src`, written for batches like `b` (see `sameInsert`); returns how many went in. */
export async function insertRows(tx: Tx, b: Batch, src: BatchSource): Promise<number> {
  const { select } = insertParts(b.ds, src.format);
  return insertSelected(tx, b, { select, from: readFiles(b.ds, src) });
}

/** Inserts the dataset's columns `select`ed `from` a source, with the batch's chain, block, run and time taken. */
function insertSelected(tx: Tx, b: Batch, rows: { readonly select: string; readonly from: string }): Promise<number> {
  const { select, from } = rows;
  const { target } = insertParts(b.ds);
  return tx.exec(
    `INSERT INTO ${qt(b.ds.table)} (${target}, chain_id, _block, _run_id, _taken_at) SELECT ${select}, $1, $2, $3, $4::TIMESTAMPTZ FROM ${from}`,
    [b.chainId, b.block, b.runId, b.takenAt ?? null],
  );
}

/** The quoted column of a dataset's keyset field. */
export function seqColumn(ds: Dataset): string {
  return q(ds.columns.find((c) => c.field === ds.seq)!.column);
}

/** The temporary table that holds a batch's rows while they are compared with the stored ones. */
const INCOMING = '_pe_incoming';

/**
 * Puts a batch's rows, typed as the table's columns, into the temporary table `INCOMING`; returns the condition that a
 * stored row `s` equals an incoming row `i`, column for column (the exporter's own columns aside), and the row value of
 * those columns for a table's alias (`row(s.a, s.b, …)`).
 */
async function stageIncoming(
  tx: Tx,
  b: Batch,
  src: BatchSource,
): Promise<{ readonly same: string; readonly row: (alias: string) => string }> {
  const { columns, values } = insertParts(b.ds, src.format);
  await tx.exec(
    `CREATE OR REPLACE TEMP TABLE ${INCOMING} AS SELECT ${values.map((v, i) => `${v} AS ${columns[i]}`).join(', ')} FROM ${readFiles(b.ds, src)}`,
  );
  return {
    same: columns.map((c) => `s.${c} IS NOT DISTINCT FROM i.${c}`).join(' AND '),
    // A row value of one field is that field, not a struct, and compares with no struct: an entity that stores its id
    // alone (Uniswap v2's User: Uniswap/v2-subgraph 468ce7be, src/v2/schema.graphql) compares as (id, 0).
    row: (alias) =>
      `row(${[...columns.map((c) => `${alias}.${c}`), ...(columns.length === 1 ? ['0'] : [])].join(', ')})`,
  };
}

/**
 * The rows of a re-read that equal stored rows of the chain, column for column (the exporter's own columns aside), are
 * left as they are, with the block and run that wrote them: an unchanged re-read window writes nothing, so it marks
 * nothing for the lake to rewrite. The batch's rows go into a temporary table; those equal to a stored row are dropped
 * from it, and for a re-read window (`from`), the stored rows of the window that equal none of the batch's are deleted
 * (a reorg removed them, or the upstream changed them). Returns the table's name (the rows to insert), how many were
 * left out, and the key of the earliest stored row deleted (null: none).
 */
async function keepUnchanged(
  tx: Tx,
  b: Batch,
  src: BatchSource,
): Promise<{ source: string; unchanged: number; stale: number; staleFrom: number | null }> {
  const table = qt(b.ds.table);
  // Rows are compared as row values, in one hash join on the whole row: a row value compares its fields as
  // `IS NOT DISTINCT FROM` does (two nulls are equal; so are -0.0 and 0.0, and NaN and NaN), and costs about half of a
  // join on the id with every column compared apart (11-15 ms against 21-30 ms a statement at 60 columns).
  const { row } = await stageIncoming(tx, b, src);
  // The stored rows a re-read window covers, or (an upsert by id) every row of the chain.
  const window = b.replace.kind === 'from' ? ` AND s.${q(b.replace.column)} >= $2` : '';
  const params = b.replace.kind === 'from' ? [b.chainId, b.replace.from] : [b.chainId];
  let stale = 0;
  let staleFrom: number | null = null;
  if (b.replace.kind === 'from') {
    const seq = seqColumn(b.ds);
    const gone = await tx.all(
      `DELETE FROM ${table} AS s WHERE s.chain_id = $1${window}
       AND ${row('s')} NOT IN (SELECT ${row('i')} FROM ${INCOMING} AS i) RETURNING CAST(${seq} AS BIGINT) AS seq`,
      params as (string | number)[],
    );
    stale = gone.length;
    for (const r of gone) staleFrom = Math.min(staleFrom ?? Number(r.seq), Number(r.seq));
  }
  const unchanged = await tx.exec(
    `DELETE FROM ${INCOMING} AS i WHERE ${row('i')} IN (SELECT ${row('s')} FROM ${table} AS s WHERE s.chain_id = $1${window})`,
    params as (string | number)[],
  );
  return { source: INCOMING, unchanged, stale, staleFrom };
}

/** Deletes the stored rows of a batch's `range` (the re-read part of one shard); returns where the lake must rewrite from. */
export async function deleteRange(tx: Tx, b: Batch): Promise<number> {
  const r = b.replace as Extract<Replace, { kind: 'range' }>;
  await tx.exec(`DELETE FROM ${qt(b.ds.table)} WHERE chain_id = $1 AND ${q(r.column)} >= $2 AND ${q(r.column)} < $3`, [
    b.chainId,
    r.from,
    r.to,
  ]);
  return Number(r.from);
}

/**
 * The statements of one batch that does not only add rows, inside an open transaction; its checkpoint move (unless it
 * keeps its checkpoint) and the lake are left to the caller.
 */
export async function writeOne(
  tx: Tx,
  { batch: b, source: src }: { readonly batch: Batch; readonly source: BatchSource },
): Promise<Wrote> {
  const table = qt(b.ds.table);
  // A snapshot equal to one stored already is left as it is.
  const stage = async () => ({ ...(await stageIncoming(tx, b, src)), table: INCOMING });
  if (
    b.replace.kind === 'snapshot' &&
    b.count > 0 &&
    !b.checkpoint.keep &&
    (await sameAsStoredSnapshot(tx, b, { src, stage }))
  )
    return { written: { rows: 0, replacedIds: [] } };
  // A re-read (a window of events, an upsert by id) leaves the rows that did not change as they are.
  const compared =
    b.count > 0 && (b.replace.kind === 'from' || b.replace.kind === 'ids') && !b.checkpoint.keep
      ? await keepUnchanged(tx, b, src)
      : undefined;
  const source = compared?.source ?? readFiles(b.ds, src);
  const rows = b.count - (compared?.unchanged ?? 0);
  // Rows the re-read window cleared: none, with none inserted, leaves the lake as it is.
  let cleared = compared?.stale ?? 0;
  if (b.replace.kind === 'from' && !compared)
    cleared = await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND ${q(b.replace.column)} >= $2`, [
      b.chainId,
      b.replace.from,
    ]);
  if (b.replace.kind === 'range') await deleteRange(tx, b);
  if (b.replace.kind === 'ids' && rows)
    await tx.exec(
      `DELETE FROM ${table} WHERE chain_id = $1 AND id IN (SELECT CAST(id AS ${idSqlType(b.ds)}) FROM ${source})`,
      [b.chainId],
    );
  // The ids travel as one JSON parameter, never as SQL text.
  const removed =
    b.replace.kind === 'gone' && b.replace.ids.length
      ? await tx.exec(
          `DELETE FROM ${table} WHERE chain_id = $1 AND id IN (SELECT CAST(unnest(from_json($2, '["VARCHAR"]')) AS ${idSqlType(b.ds)}))`,
          [b.chainId, JSON.stringify(b.replace.ids)],
        )
      : 0;
  // An entity table never holds two rows with one id: a stored row of an event or bucket dataset with an id of this
  // batch, left after the re-read range was cleared, is an upstream defect (or a transaction a reorg moved to a later
  // block); the newest row wins, and the ids are counted. A shard of a first backfill skips this check, which would scan
  // the chain's rows once per batch (quadratic in a backfill of millions); the merge of the shards makes it once, over
  // every row, keeping the row inserted last of each id.
  let replacedIds: string[] = [];
  const events = b.ds.kind === 'event' || b.ds.kind === 'bucket';
  const seq = events ? seqColumn(b.ds) : '';
  let lakeFrom =
    b.replace.kind === 'range' || (b.replace.kind === 'from' && !compared && (cleared > 0 || b.count > 0))
      ? Number(b.replace.from)
      : (compared?.staleFrom ?? null);
  // A compared window's lake is rewritten from its earliest row that changed: a deleted one, or one inserted.
  if (compared && events && rows) {
    const [first] = await tx.all(`SELECT min(CAST(${seq} AS BIGINT)) AS seq FROM ${source}`);
    lakeFrom = Math.min(lakeFrom ?? Number(first!.seq), Number(first!.seq));
  }
  const older =
    events && rows && !b.checkpoint.shard
      ? `chain_id = $1 AND id IN (SELECT CAST(id AS ${idSqlType(b.ds)}) FROM ${source})`
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
  // A snapshot replaces one taken at the same block (or, for the block-less list, by the same run: rows no earlier
  // lake write of another run holds). Only the first takes rows of other runs out, and only when one was stored there.
  const retaken =
    b.replace.kind === 'snapshot' && b.block !== null
      ? await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND _block = $2`, [b.chainId, b.block])
      : 0;
  if (b.replace.kind === 'snapshot' && b.block === null)
    await tx.exec(`DELETE FROM ${table} WHERE chain_id = $1 AND _run_id = $2`, [b.chainId, b.runId]);
  if (b.replace.kind === 'snapshot') await recordSnapshotDigests(tx, [{ batch: b, source: src }]);
  const inserted = !rows
    ? 0
    : compared
      ? await insertSelected(tx, b, { select: '*', from: INCOMING })
      : await insertRows(tx, b, src);
  if (compared) await tx.exec(`DROP TABLE ${INCOMING}`);
  if (inserted !== rows) throw new Error(`inserted ${inserted} of ${rows} rows into ${b.ds.table}`);
  if (b.checkpoint.keep) {
    // A repair: the checkpoint stays as it is, and must still stand where the repair found it.
    const stands = await tx.all(
      'SELECT count(*) AS n FROM _pool_export.checkpoints WHERE chain_id = $1 AND dataset = $2 AND cursor = $3',
      [b.chainId, b.ds.name, b.checkpoint.prev],
    );
    if (Number(stands[0]?.n) !== 1) throw concurrentWriter(b);
  }
  // Its checkpoint move is the caller's, with those of the other batches of its transaction (`moveCheckpoints`).
  if (b.mergeShards) {
    const drop = dropShardsStatement(b.chainId, b.ds.name);
    await tx.exec(drop.sql, drop.params);
  }
  const written = { rows: inserted, replacedIds };
  if (inserted === 0 && removed === 0 && lakeFrom === null) return { written };
  // Rows of other runs left the table: any replace but a snapshot's and none, or a snapshot taken again at its block.
  const dropped = (b.replace.kind !== 'snapshot' && b.replace.kind !== 'none') || retaken > 0 || replacedIds.length > 0;
  return {
    written,
    mark: { chainId: b.chainId, dataset: b.ds.name, from: lakeFrom, runs: new Set([b.runId]), dropped },
  };
}
