/**
 * Re-reads of one table on several chains, compared with the stored rows in one set of statements: a run after new
 * blocks commits one re-read window (or one upsert by id) per dataset and chain, and DuckDB's cost per statement at
 * 60 columns (5-10 ms) is far above its cost per row at these sizes, so comparing each chain's batch apart cost the
 * run most of its time. The rules are those of one batch (`writeOne` in `batch-statements.ts`): rows equal to stored
 * ones are left as they are, with the block and run that wrote them; the stored rows of a window that equal none of the
 * batch's are deleted; the rest is inserted, and the lake is marked from the earliest row that changed. Every row
 * compared carries its chain, so a row of one chain never stands for a row of another.
 */

import { q, qt } from '../util/sql.ts';
import type { Batch, Wrote } from './batch.ts';
import { type BatchSource, readFiles, seqColumn } from './batch-statements.ts';
import { insertParts } from './ddl.ts';
import type { Tx } from './sql-port.ts';

/** A batch and its files, as the sink holds them. */
export interface Compared {
  readonly batch: Batch;
  readonly source: BatchSource;
}

/** The temporary table of the batches' rows, each with its batch's number, chain, block, run and time taken. */
const SET = '_pe_incoming_set';

/**
 * Whether a batch is compared with the stored rows before it is written: a re-read window of events or buckets, or an
 * upsert by id, that holds rows, outside a backfill's shards and a repair.
 */
export function comparable(b: Batch): boolean {
  return (
    b.count > 0 &&
    (b.replace.kind === 'from' || b.replace.kind === 'ids') &&
    !b.checkpoint.keep &&
    !b.checkpoint.shard &&
    !b.mergeShards
  );
}

/**
 * The sets of a group's batches that one set of statements can write, each a list of indexes into `group`: batches of
 * one key (`keyOf`; undefined: written alone), on different chains, where no other batch of the group writes the same
 * table on the same chain (so the order of the group's statements does not matter to them). Sets of one are left out.
 */
export function setsOf(group: readonly Compared[], keyOf: (p: Compared) => string | undefined): number[][] {
  const perTableChain = new Map<string, number>();
  for (const { batch: b } of group) {
    const k = `${b.ds.table}\u0000${b.chainId}`;
    perTableChain.set(k, (perTableChain.get(k) ?? 0) + 1);
  }
  const sets = new Map<string, number[]>();
  for (const [i, p] of group.entries()) {
    const k = keyOf(p);
    if (k === undefined || perTableChain.get(`${p.batch.ds.table}\u0000${p.batch.chainId}`) !== 1) continue;
    sets.set(k, [...(sets.get(k) ?? []), i]);
  }
  return [...sets.values()].filter((s) => s.length > 1);
}

/** The sets of a group's comparable batches (`setsOf`) of one dataset, file format and kind of replace. */
export function comparedSets(group: readonly Compared[]): number[][] {
  return setsOf(group, ({ batch: b, source }) =>
    comparable(b)
      ? JSON.stringify([b.ds.name, source.format, b.replace.kind, b.replace.kind === 'from' ? b.replace.column : ''])
      : undefined,
  );
}

/** The columns of the staging read that name a row's file and its batch: with a space, as no upstream field's name is. */
const FILE_COLUMN = 'pool-export file';
const BATCH_COLUMN = 'pool-export batch';

/** A chain id or batch number written into a statement: an integer, never text. */
export function int(n: number): string {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
}

/**
 * The rows of a set's batches, each with its batch's number (`_b`), chain, block, run and time taken, and the
 * dataset's columns typed as the table's, read in one statement; its parameters travel beside it.
 */
export function stagedRows(set: readonly Compared[]): {
  readonly sql: string;
  readonly params: (string | number | null)[];
} {
  const { ds } = set[0]!.batch;
  const format = set[0]!.source.format;
  const { columns, values } = insertParts(ds, format);
  const params: (string | number | null)[] = [];
  const param = (v: string | number | null) => {
    params.push(v);
    return `$${params.length}`;
  };
  // One read of every batch's files, each row told its batch by the file it came from: one statement binds the
  // dataset's columns once, where a UNION ALL of a read per batch bound them once per chain (twice the time at 60
  // columns). The file's column is named with a space, which no upstream field name can hold.
  const files = set.flatMap(({ source }) => source.files);
  const batchOf = set.flatMap(({ source }, k) => source.files.map(() => int(k)));
  const at = `${param(JSON.stringify(files.map((f) => f.file)))}`;
  const batch = `[${batchOf.join(', ')}][list_position(from_json(${at}, '["VARCHAR"]'), ${q(FILE_COLUMN)})]`;
  const per = (values: readonly (string | number | null)[], type: string) =>
    `from_json(${param(JSON.stringify(values))}, '["${type}"]')[${q(BATCH_COLUMN)} + 1]`;
  const staged = `SELECT ${q(BATCH_COLUMN)} AS _b, CAST(${per(
    set.map(({ batch: b }) => b.chainId),
    'INTEGER',
  )} AS INTEGER) AS _chain, CAST(${per(
    set.map(({ batch: b }) => b.block),
    'BIGINT',
  )} AS BIGINT) AS _block, CAST(${per(
    set.map(({ batch: b }) => b.runId),
    'VARCHAR',
  )} AS VARCHAR) AS _run, CAST(${per(
    set.map(({ batch: b }) => b.takenAt ?? null),
    'VARCHAR',
  )} AS TIMESTAMPTZ) AS _taken, ${values.map((v, i) => `${v} AS ${columns[i]}`).join(', ')}
    FROM (SELECT ${batch} AS ${q(BATCH_COLUMN)}, * FROM ${readFiles(ds, { format, files }, FILE_COLUMN)})`;
  return { sql: staged, params };
}

/**
 * Inserts a set's staged rows (`stagedRows`, or a table of them: `from`) into the dataset's table, each with its batch's
 * chain, block, run and time taken; returns how many went in.
 */
export function insertStaged(
  tx: Tx,
  set: readonly Compared[],
  from: { readonly sql: string; readonly params?: (string | number | null)[] },
): Promise<number> {
  const { ds } = set[0]!.batch;
  const { target, columns } = insertParts(ds, set[0]!.source.format);
  return tx.exec(
    `INSERT INTO ${qt(ds.table)} (${target}, chain_id, _block, _run_id, _taken_at)
     SELECT ${columns.join(', ')}, _chain, _block, _run, _taken FROM ${from.sql}`,
    from.params,
  );
}

/**
 * Writes the batches of one set (see `comparedSets`) inside an open transaction, their checkpoint moves left to the
 * caller, as `writeOne` writes each: returns what each wrote and where the lake must rewrite its chain from.
 */
export async function writeCompared(tx: Tx, set: readonly Compared[]): Promise<Wrote[]> {
  const { ds } = set[0]!.batch;
  const table = qt(ds.table);
  const kind = set[0]!.batch.replace.kind;
  const { columns } = insertParts(ds, set[0]!.source.format);
  const { sql: staged, params } = stagedRows(set);
  // Rows lost here would show as fewer inserted than the batches hold, which fails the write below.
  await tx.exec(`CREATE OR REPLACE TEMP TABLE ${SET} AS ${staged}`, params);
  const byChain = new Map(set.map(({ batch: b }, k) => [b.chainId, k]));
  // The stored rows the batches cover: each chain's re-read window, or (upserts by id) every row of the chain. Each
  // window's start is a parameter compared with its column, as in a batch's own statement.
  const windowParams: (string | number)[] = [];
  const chains = `s.chain_id IN (${set.map(({ batch: b }) => int(b.chainId)).join(', ')})`;
  const window =
    kind === 'from'
      ? `${chains} AND (${set
          .map(({ batch: b }) => {
            const r = b.replace as Extract<Batch['replace'], { kind: 'from' }>;
            windowParams.push(r.from);
            return `(s.chain_id = ${int(b.chainId)} AND s.${q(r.column)} >= $${windowParams.length})`;
          })
          .join(' OR ')})`
      : chains;
  const row = (alias: string, chain: string) => `row(${chain}, ${columns.map((c) => `${alias}.${c}`).join(', ')})`;
  const events = ds.kind === 'event' || ds.kind === 'bucket';
  const seq = kind === 'from' || events ? seqColumn(ds) : '';
  const staleFrom = new Map<number, number>();
  if (kind === 'from') {
    // Stored rows of the windows that equal no incoming row of their chain: a reorg removed them, or they changed.
    const gone = await tx.all(
      `DELETE FROM ${table} AS s WHERE ${window}
       AND ${row('s', 's.chain_id')} NOT IN (SELECT ${row('i', 'i._chain')} FROM ${SET} AS i)
       RETURNING s.chain_id AS chain, CAST(s.${seq} AS BIGINT) AS seq`,
      windowParams,
    );
    for (const r of gone) {
      const k = byChain.get(Number(r.chain))!;
      staleFrom.set(k, Math.min(staleFrom.get(k) ?? Number(r.seq), Number(r.seq)));
    }
  }
  // Incoming rows equal to a stored row of their chain's window are left out. Only the stored rows of the incoming ids
  // can equal one: the others are left out before their rows are built and hashed (an upsert's window is every row of
  // the chain: on 800,000 stored rows of 30 columns, 400 incoming, the statement took 65-69 ms where it took 119-123).
  const unchanged = new Map<number, number>();
  for (const r of await tx.all(
    `DELETE FROM ${SET} AS i WHERE ${row('i', 'i._chain')} IN (SELECT ${row('s', 's.chain_id')} FROM ${table} AS s WHERE ${window}
       AND row(s.chain_id, s.id) IN (SELECT row(k._chain, k.id) FROM ${SET} AS k))
     RETURNING i._b AS b`,
    windowParams,
  ))
    unchanged.set(Number(r.b), (unchanged.get(Number(r.b)) ?? 0) + 1);
  const rows = set.map(({ batch: b }, k) => b.count - (unchanged.get(k) ?? 0));
  const lakeFrom = set.map((_, k) => staleFrom.get(k) ?? null);
  const replacedIds: string[][] = set.map(() => []);
  const left = rows.reduce((n, r) => n + r, 0);
  if (left > 0 && kind === 'ids') {
    // An upsert by id: the stored rows of the ids that changed go, and the new ones take their place.
    await tx.exec(
      `DELETE FROM ${table} AS s WHERE row(s.chain_id, s.id) IN (SELECT row(i._chain, i.id) FROM ${SET} AS i)`,
    );
  }
  if (left > 0 && events) {
    // The lake of a window is rewritten from its earliest row that changed: a deleted one, or one inserted.
    for (const r of await tx.all(`SELECT _b AS b, min(CAST(${seq} AS BIGINT)) AS seq FROM ${SET} GROUP BY _b`)) {
      const k = Number(r.b);
      lakeFrom[k] = Math.min(lakeFrom[k] ?? Number(r.seq), Number(r.seq));
    }
    // A stored row of an id the batch holds, left after the window was compared, is an upstream defect (or a
    // transaction a reorg moved to a later block): the newest row wins, and the ids are counted.
    for (const r of await tx.all(
      `DELETE FROM ${table} AS s WHERE row(s.chain_id, s.id) IN (SELECT row(i._chain, i.id) FROM ${SET} AS i)
       RETURNING s.chain_id AS chain, s.id AS id, CAST(s.${seq} AS BIGINT) AS seq`,
    )) {
      const k = byChain.get(Number(r.chain))!;
      replacedIds[k]!.push(String(r.id));
      lakeFrom[k] = Math.min(lakeFrom[k] ?? Number(r.seq), Number(r.seq));
    }
  }
  const inserted = left > 0 ? await insertStaged(tx, set, { sql: SET }) : 0;
  await tx.exec(`DROP TABLE ${SET}`);
  if (inserted !== left) throw new Error(`inserted ${inserted} of ${left} rows into ${ds.table}`);
  return set.map(({ batch: b }, k) => {
    const written = { rows: rows[k]!, replacedIds: replacedIds[k]! };
    if (rows[k] === 0 && lakeFrom[k] === null) return { written };
    return {
      written,
      // A re-read window or an upsert by id replaces stored rows of other runs.
      mark: {
        chainId: b.chainId,
        dataset: ds.name,
        from: lakeFrom[k] ?? null,
        runs: new Set([b.runId]),
        dropped: true,
      },
    };
  });
}
