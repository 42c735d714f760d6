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
import type { Written } from './batch.ts';
import type { LakeMark, Tx } from './batch-statements.ts';
import { type Compared, int, setsOf, stagedRows } from './compared-batches.ts';
import { insertParts } from './ddl.ts';
import { digestSays, storedDigests } from './snapshot-digest.ts';

/** What a batch wrote, and what the lake must write again. */
type Result = { written: Written; mark?: LakeMark };

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
  alone: (p: Compared) => Promise<Result>,
): Promise<Result[]> {
  const { ds } = set[0]!.batch;
  const table = qt(ds.table);
  const chains = set.map(({ batch: b }) => int(b.chainId)).join(', ');
  // The digests of the chains' stored snapshots, in one statement: no row of either snapshot is read.
  const stored = new Map((await tx.all(storedDigests(table, chains), [ds.name])).map((d) => [Number(d.chain_id), d]));
  // A snapshot with no digest, taken at a block of which its chain has no rows, is another snapshot than any stored.
  const blockParams: number[] = [];
  const atBlock = set
    .filter(({ batch: b, source }) => !source.digest && b.block !== null)
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
  const results: (Result | undefined)[] = set.map(() => undefined);
  const write: Compared[] = [];
  for (const [k, p] of set.entries()) {
    const said = p.source.digest
      ? digestSays(p.batch, p.source, stored.get(p.batch.chainId))
      : retakenAt.has(p.batch.chainId)
        ? undefined
        : false;
    if (said === true) results[k] = { written: { rows: 0, replacedIds: [] } };
    else if (said === false) write.push(p);
  }
  // A snapshot the digests cannot answer for (its chain's stored one is not whole, or it has none and rows of its block
  // are stored) is compared row for row, alone.
  for (const [k, p] of set.entries()) if (!results[k] && !write.includes(p)) results[k] = await alone(p);
  if (write.length === 0) return results as Result[];
  // Each replaces the rows taken at its block, or (the block-less list) by its run; only rows of another run taken at
  // the same block count as rows that left the table (`lake_pending.dropped`).
  const params: (string | number)[] = [];
  const taken = write.map(({ batch: b }) => {
    params.push(b.block ?? b.runId);
    return `(chain_id = ${int(b.chainId)} AND ${b.block !== null ? '_block' : '_run_id'} = $${params.length})`;
  });
  const retaken = new Map<number, number>();
  for (const r of await tx.all(`DELETE FROM ${table} WHERE ${taken.join(' OR ')} RETURNING chain_id`, params))
    retaken.set(Number(r.chain_id), (retaken.get(Number(r.chain_id)) ?? 0) + 1);
  // The digests of the snapshots stored now, each replacing its chain's (the digests travel as one JSON parameter); a
  // snapshot without one leaves its chain none.
  await tx.exec(
    `DELETE FROM _pool_export.snapshot_digests WHERE dataset = $1 AND chain_id IN (${write.map(({ batch: b }) => int(b.chainId)).join(', ')})`,
    [ds.name],
  );
  const digests = write.filter(({ source }) => source.digest !== undefined);
  if (digests.length)
    await tx.exec(
      `INSERT INTO _pool_export.snapshot_digests (chain_id, dataset, run_id, block, taken_at, rows, digest)
     SELECT d.chain_id, $1, d.run_id, d.block, CAST(d.taken_at AS TIMESTAMPTZ), d.rows, d.digest
     FROM (SELECT unnest(from_json($2, '[{"chain_id":"INTEGER","run_id":"VARCHAR","block":"BIGINT","taken_at":"VARCHAR","rows":"BIGINT","digest":"VARCHAR"}]')) AS d)`,
      [
        ds.name,
        JSON.stringify(
          digests.map(({ batch: b, source }) => ({
            chain_id: b.chainId,
            run_id: b.runId,
            block: b.block,
            taken_at: b.takenAt ?? null,
            rows: b.count,
            digest: source.digest,
          })),
        ),
      ],
    );
  // The rows of every snapshot, in one statement: each row carries its batch's chain, block, run and time taken.
  const { target, columns } = insertParts(ds, write[0]!.source.format);
  const staged = stagedRows(write);
  const inserted = await tx.exec(
    `INSERT INTO ${table} (${target}, chain_id, _block, _run_id, _taken_at)
     SELECT ${columns.join(', ')}, _chain, _block, _run, _taken FROM (${staged.sql})`,
    staged.params,
  );
  const rows = write.reduce((n, { batch: b }) => n + b.count, 0);
  if (inserted !== rows) throw new Error(`inserted ${inserted} of ${rows} rows into ${ds.table}`);
  for (const [k, p] of set.entries()) {
    if (!write.includes(p)) continue;
    const b = p.batch;
    results[k] = {
      written: { rows: b.count, replacedIds: [] },
      mark: {
        chainId: b.chainId,
        dataset: ds.name,
        from: null,
        runs: new Set([b.runId]),
        dropped: b.block !== null && (retaken.get(b.chainId) ?? 0) > 0,
      },
    };
  }
  return results as Result[];
}
