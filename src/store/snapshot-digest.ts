/**
 * Snapshots stored once: a snapshot (the liquidity list, a single-row entity) equal to one stored already is not stored
 * again, found by the digest of its mapped rows where it can be, else row for row. Part of a batch's commit
 * (`batch-statements.ts`).
 */
import { createHash } from 'node:crypto';
import { qt } from '../util/sql.ts';
import type { Batch } from './batch.ts';

/** The statements of the open transaction a snapshot's batch commits in. */
interface Tx {
  exec(sql: string, params?: (string | number | null)[]): Promise<number>;
  all(sql: string, params?: (string | number | null)[]): Promise<Record<string, unknown>[]>;
}

/** What is known of a batch's files here: the digest of a snapshot's mapped rows, when they are mapped rows. */
interface BatchSource {
  readonly digest?: string;
}

/**
 * The digest of a snapshot's mapped rows, whatever their order: SHA-256 of their JSON lines sorted. The rows a batch
 * stores are a function of its mapped rows, so two snapshots with one digest store the same rows.
 */
export function snapshotDigest(lines: readonly string[]): string {
  const h = createHash('sha256');
  for (const l of [...lines].sort()) h.update(l).update('\n');
  return h.digest('hex');
}

/** Milliseconds in a day. */
const DAY_MS = 86_400_000;

/** Whether a snapshot of the liquidity list was taken the same UTC day as one stored at `ms`. */
function sameDay(b: Batch, ms: unknown): boolean {
  return (
    b.ds.kind === 'list' &&
    ms !== null &&
    b.takenAt !== undefined &&
    Math.floor(Number(ms) / DAY_MS) === Math.floor(Date.parse(b.takenAt) / DAY_MS)
  );
}

/**
 * The digest of each chain's stored snapshot of dataset `$1` in `table` (`chains`: a list of chain ids, or of parameters
 * holding them), with its rows as recorded and as still stored (`stored`), in one statement.
 */
export function storedDigests(table: string, chains: string): string {
  return `SELECT d.chain_id, d.digest, d.block, epoch_ms(d.taken_at) AS ms, d.rows, count(s.chain_id) AS stored
    FROM _pool_export.snapshot_digests AS d LEFT JOIN ${table} AS s
      ON s.chain_id = d.chain_id AND s._run_id = d.run_id AND s._block IS NOT DISTINCT FROM d.block
    WHERE d.dataset = $1 AND d.chain_id IN (${chains}) GROUP BY ALL`;
}

/**
 * What the digest of the chain's stored snapshot (`d`, a row of `storedDigests`) says of a batch: the same snapshot
 * (true), another (false), or nothing (undefined: no digest, or its snapshot is no longer stored whole), when the
 * rows must be compared.
 */
export function digestSays(b: Batch, src: BatchSource, d: Record<string, unknown> | undefined): boolean | undefined {
  // A digest whose snapshot is still stored whole answers: another digest is another snapshot.
  if (!src.digest || !d || Number(d.stored) !== Number(d.rows)) return undefined;
  if (d.digest !== src.digest || Number(d.rows) !== b.count) return false;
  const sameBlock = b.block !== null && d.block !== null && Number(d.block) === b.block;
  return sameBlock || sameDay(b, d.ms);
}

/**
 * Whether a snapshot equals, row for row and column for column, one stored already: the chain's snapshot of the same
 * block (a run that read the same head again), or, for the liquidity list, its latest snapshot if taken the same UTC
 * day. Such a snapshot is not stored again, and the stored one keeps the block, run and time that wrote it: the list has
 * no block of its own to say nothing changed, so every run reads it, and an unchanged list then writes nothing and marks
 * nothing for the lake. `stage` puts the snapshot's rows in a temporary table, and gives its name and the condition
 * that a stored row `s` equals one of them, `i`. The reports read each day's last snapshot of a pool (`tvl_daily`, `tvl_by_chain_type`) or the
 * latest one (`top_pools`): the values they give are the same, and every day a run read the list keeps a snapshot.
 */
export async function sameAsStoredSnapshot(
  tx: Tx,
  b: Batch,
  { src, stage }: { src: BatchSource; stage: () => Promise<{ readonly same: string; readonly table: string }> },
): Promise<boolean> {
  const table = qt(b.ds.table);
  // The digest of the snapshot stored last, while that snapshot is stored whole: no row of either is read.
  const [d] = src.digest ? await tx.all(storedDigests(table, '$2'), [b.ds.name, b.chainId]) : [];
  const said = digestSays(b, src, d);
  if (said !== undefined) return said;
  const [last] = await tx.all(
    `SELECT _block AS block, _run_id AS run, epoch_ms(_taken_at) AS ms FROM ${table} WHERE chain_id = $1
     ORDER BY _block IS NOT DISTINCT FROM $2 DESC, _taken_at DESC NULLS LAST, _block DESC NULLS LAST, rowid DESC LIMIT 1`,
    [b.chainId, b.block],
  );
  if (!last) return false;
  const sameBlock = b.block !== null && last.block !== null && Number(last.block) === b.block;
  if (!sameBlock && !sameDay(b, last.ms)) return false;
  const { same, table: incoming } = await stage();
  // Ids are unique in a snapshot: equal when each incoming row meets its stored row of the same id, column for column.
  const [n] = await tx.all(
    `SELECT (SELECT count(*) FROM ${table} WHERE chain_id = $1 AND _block IS NOT DISTINCT FROM $2 AND _run_id IS NOT DISTINCT FROM $3) AS stored,
            (SELECT count(*) FROM ${incoming}) AS incoming,
            (SELECT count(*) FROM ${incoming} AS i JOIN ${table} AS s ON s.id = i.id
              WHERE s.chain_id = $1 AND s._block IS NOT DISTINCT FROM $2 AND s._run_id IS NOT DISTINCT FROM $3 AND ${same}) AS equal`,
    [b.chainId, last.block === null ? null : Number(last.block), last.run === null ? null : String(last.run)],
  );
  await tx.exec(`DROP TABLE ${incoming}`);
  return Number(n!.stored) === Number(n!.incoming) && Number(n!.equal) === Number(n!.incoming);
}

/**
 * Records the digests of the snapshots of one dataset that batches stored, each in place of its chain's (a snapshot
 * whose rows came as pages leaves its chain none): the next snapshot equal to one is then found without reading a row.
 * The digests travel as one JSON parameter.
 */
export async function recordSnapshotDigests(
  tx: Tx,
  stored: readonly { readonly batch: Batch; readonly source: BatchSource }[],
): Promise<void> {
  const { ds } = stored[0]!.batch;
  await tx.exec(
    `DELETE FROM _pool_export.snapshot_digests WHERE dataset = $1 AND chain_id IN (SELECT unnest(from_json($2, '["INTEGER"]')))`,
    [ds.name, JSON.stringify(stored.map(({ batch: b }) => b.chainId))],
  );
  const digests = stored.filter(({ source }) => source.digest !== undefined);
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
}
