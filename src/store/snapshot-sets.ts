/**
 * Snapshots of one table on several chains, written in one set of statements: a run after new blocks takes each
 * chain's snapshot of a single-row entity (and the liquidity list) as a batch of its own, and at 10 to 150 columns
 * DuckDB's cost per statement is far above its cost per row, so the five statements of each chain's snapshot cost the
 * run more than its rows. The rules are those of one batch (`writeOne` in `batch-statements.ts`, with
 * `sameAsStoredSnapshot`): a snapshot whose digest is that of the chain's stored one is not stored again; one whose
 * digest differs replaces the rows taken at the same block (or, for the block-less list, by the same run), records its
 * digest, and is inserted; one the digest cannot answer for is compared row for row on its own.
 */
import { qt } from '../util/sql.ts';
import type { Wrote } from './batch.ts';
import { type Compared, insertStaged, int, setsOf, stagedRows } from './compared-batches.ts';
import { digestSays, recordSnapshotDigests, storedDigests } from './snapshot-digest.ts';
import type { Tx } from './sql-port.ts';

/**
 * Whether a batch is a snapshot that can be written in a set, outside a repair: mapped rows with their digest, or a
 * snapshot taken at a block (an entity's), whose chain has no rows of that block stored unless it was taken again.
 */
function settable({ batch: b, source }: Compared): boolean {
  return (
    b.replace.kind === 'snapshot' &&
    b.count > 0 &&
    (source.digest !== undefined || (b.block !== null && b.ds.kind !== 'list')) &&
    !b.checkpoint.keep &&
    !b.checkpoint.shard &&
    !b.mergeShards
  );
}

/** The sets of a group's snapshots that can be written together (`setsOf`): of one dataset and file format. */
export function snapshotSets(group: readonly Compared[]): number[][] {
  return setsOf(group, (p) => (settable(p) ? JSON.stringify([p.batch.ds.name, p.source.format]) : undefined));
}

/**
 * Writes the snapshots of one set (see `snapshotSets`) inside an open transaction, their checkpoint moves left to the
 * caller, as `writeOne` writes each; `alone` writes a snapshot the digests cannot answer for. Returns what each wrote
 * and what the lake must write.
 */
export async function writeSnapshots(
  tx: Tx,
  set: readonly Compared[],
  alone: (p: Compared) => Promise<Wrote>,
): Promise<Wrote[]> {
  const { ds } = set[0]!.batch;
  const table = qt(ds.table);
  // The digests of the chains' stored snapshots, in one statement: no row of either snapshot is read. Pages carry none.
  const digested = set.filter(({ source }) => source.digest !== undefined);
  const stored = new Map(
    digested.length
      ? (await tx.all(storedDigests(table, digested.map(({ batch: b }) => int(b.chainId)).join(', ')), [ds.name])).map(
          (d) => [Number(d.chain_id), d],
        )
      : [],
  );
  // A snapshot with no digest, taken at a block of which its chain has no rows, is another snapshot than any stored.
  const blockParams: number[] = [];
  const atBlock = set
    .filter(({ source }) => source.digest === undefined)
    .map(({ batch: b }) => {
      blockParams.push(b.block!);
      return `(chain_id = ${int(b.chainId)} AND _block = $${blockParams.length})`;
    });
  const retakenAt = new Set(
    atBlock.length
      ? (await tx.all(`SELECT DISTINCT chain_id FROM ${table} WHERE ${atBlock.join(' OR ')}`, blockParams)).map((r) =>
          Number(r.chain_id),
        )
      : [],
  );
  // What each snapshot is: the stored one (true), another (false), or one whose rows must be compared (undefined).
  const said = set.map((p) =>
    p.source.digest !== undefined
      ? digestSays(p.batch, p.source, stored.get(p.batch.chainId))
      : retakenAt.has(p.batch.chainId)
        ? undefined
        : false,
  );
  const write = set.filter((_, k) => said[k] === false);
  const results: Wrote[] = [];
  for (const [k, p] of set.entries())
    results[k] =
      said[k] === true
        ? { written: { rows: 0, replacedIds: [] } }
        : // Compared row for row, alone: its chain's stored snapshot is not whole, or rows of its block are stored.
          said[k] === undefined
          ? await alone(p)
          : { written: { rows: p.batch.count, replacedIds: [] } };
  if (write.length === 0) return results;
  // Each replaces the rows taken at its block, or (the block-less list) by its run; only rows of another run taken at
  // the same block count as rows that left the table (`lake_pending.dropped`).
  const params: (string | number)[] = [];
  const taken = write.map(({ batch: b }) => {
    params.push(b.block ?? b.runId);
    return `(chain_id = ${int(b.chainId)} AND ${b.block !== null ? '_block' : '_run_id'} = $${params.length})`;
  });
  const retaken = new Set(
    (await tx.all(`DELETE FROM ${table} WHERE ${taken.join(' OR ')} RETURNING chain_id`, params)).map((r) =>
      Number(r.chain_id),
    ),
  );
  await recordSnapshotDigests(tx, write);
  // The rows of every snapshot, in one statement: each row carries its batch's chain, block, run and time taken.
  const staged = stagedRows(write);
  const inserted = await insertStaged(tx, write, { sql: `(${staged.sql})`, params: staged.params });
  const rows = write.reduce((n, { batch: b }) => n + b.count, 0);
  if (inserted !== rows) throw new Error(`inserted ${inserted} of ${rows} rows into ${ds.table}`);
  for (const [k, { batch: b }] of set.entries())
    if (said[k] === false)
      results[k] = {
        ...results[k]!,
        mark: {
          chainId: b.chainId,
          dataset: ds.name,
          from: null,
          runs: new Set([b.runId]),
          dropped: b.block !== null && retaken.has(b.chainId),
        },
      };
  return results;
}
