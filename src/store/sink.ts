/**
 * The DuckDB sink: commits batches (see `batch.ts`) in group transactions, with their checkpoint moves and lake marks
 * (the statements are in `batch-statements.ts`).
 */

import { randomUUID } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dataFolder } from '../config/data-folder.ts';
import { StopRequested } from '../errors.ts';
import type { Batch, KeptPage, Written } from './batch.ts';
import { joinMarks, type LakeMark, type Wrote } from './batch.ts';
import { type BatchSource, deleteRange, insertRows, writeOne } from './batch-statements.ts';
import { moveCheckpoints } from './checkpoint-moves.ts';
import { comparedSets, writeCompared } from './compared-batches.ts';
import { joinsInsert, mainLane, outOfMemory, type Pending, type SinkLane, sameInsert, sideLane } from './sink-lanes.ts';
import { snapshotDigest } from './snapshot-digest.ts';
import { snapshotSets, writeSnapshots } from './snapshot-sets.ts';
import type { Tx } from './sql-port.ts';
import type { Warehouse } from './warehouse.ts';

/** Names of the sink's files in its temporary folder: batch files of mapped rows, and kept pages. */
const SINK_FILE = /^(?:[0-9a-f-]{36}\.ndjson|page-[0-9a-f-]{36}\.json)$/;

/** Most batches merged into one transaction by group commit. */
export const GROUP_LIMIT = 64;

/**
 * The DuckDB sink: a batch's rows are in files (its pages as the page checker kept them, or its mapped rows written to
 * an NDJSON file when it arrives), read by one `INSERT … SELECT … FROM read_json` in a transaction with its checkpoint.
 * Batches that arrive while a transaction runs are committed together in the next one (group commit), since the commit
 * itself costs far more than a small batch; a failing group is retried batch by batch. With two lanes (`commitLanes`),
 * each table's batches queue on one of two connections, and the two commit their groups side by side.
 */
export class DuckDBSink {
  private readonly tmpDir: string;
  private readonly lanes: SinkLane[];
  private readonly laneOf = new Map<string, SinkLane>();

  private readonly signal: AbortSignal | undefined;

  /**
   * A sink writing its files under `<dataDir>/.tmp` (see `opts.signal` for a stop). Files left there by a run that
   * ended before committing them (the caller holds the data folder's lock, so no other run is writing there) are
   * removed first.
   */
  constructor(
    w: Warehouse,
    dataDir: string,
    opts: {
      /**
       * A stop request: once aborted, batches waiting for their transaction are refused (`StopRequested`) and their
       * rows left to the next run, which reads them again from the unmoved checkpoints. The transaction under way
       * commits or rolls back as it would have.
       */
      readonly signal?: AbortSignal | undefined;
      /** Connections the groups commit on: 1 (the default), or 2 (`commitLanes`), each table always on the same one. */
      readonly lanes?: 1 | 2;
    } = {},
  ) {
    this.signal = opts.signal;
    this.lanes = opts.lanes === 2 ? [mainLane(w), sideLane(w)] : [mainLane(w)];
    this.tmpDir = dataFolder(dataDir).pageFiles;
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
      // A table's batches go to one lane, in the order they came: a task's batches commit in turn, and the two lanes'
      // transactions never write a row of the same table (their checkpoints' and lake marks' rows differ too).
      let lane = this.laneOf.get(b.ds.table);
      if (!lane) this.laneOf.set(b.ds.table, (lane = this.lanes[this.laneOf.size % this.lanes.length]!));
      lane.queue.push({ batch: b, source, resolve, reject });
      if (!lane.draining) void this.drain(lane);
    });
  }

  /** A batch's files: its kept pages, or its mapped rows written to an NDJSON file, one row per line. */
  private prepare(b: Batch): BatchSource {
    if (b.pages.length && b.rows.length) throw new Error(`a batch of ${b.ds.name} holds both pages and mapped rows`);
    if (b.pages.length) return { format: 'pages', files: b.pages.map((p) => ({ file: p.file, longest: p.length })) };
    const file = join(this.tmpDir, `${randomUUID()}.ndjson`);
    let longest = 0;
    let text = '';
    const lines: string[] = [];
    for (const r of b.rows) {
      const line = JSON.stringify(r);
      longest = Math.max(longest, line.length);
      text += `${line}\n`;
      if (b.replace.kind === 'snapshot') lines.push(line);
    }
    writeFileSync(file, text);
    return {
      format: 'rows',
      files: [{ file, longest }],
      ...(b.replace.kind === 'snapshot' ? { digest: snapshotDigest(lines) } : {}),
    };
  }

  /** Closes the sink's second connection, if it opened one (once every batch written has settled). */
  async close(): Promise<void> {
    for (const l of this.lanes) await l.close();
  }

  private async drain(lane: SinkLane): Promise<void> {
    lane.draining = true;
    try {
      while (lane.queue.length) {
        const group = lane.queue.splice(0, GROUP_LIMIT);
        const stopped = () => this.signal?.aborted === true;
        try {
          if (stopped()) throw new StopRequested();
          const counts = await this.commit(lane, group);
          for (const [i, p] of group.entries()) p.resolve(counts[i]!);
        } catch (e) {
          if (group.length === 1 || stopped()) for (const p of group) p.reject(stopped() ? new StopRequested() : e);
          else for (const p of group) await this.commit(lane, [p]).then((c) => p.resolve(c[0]!), p.reject);
        } finally {
          for (const p of group) for (const f of p.source.files) rmSync(f.file, { force: true });
        }
      }
    } finally {
      lane.draining = false;
    }
  }

  private async commit(lane: SinkLane, group: readonly Pending[]): Promise<Written[]> {
    try {
      return await lane.transaction(async (tx) => {
        if (this.signal?.aborted) throw new StopRequested();
        // A stop request interrupts the statements of this transaction (not its COMMIT), which then rolls back.
        const interrupt = () => lane.interrupt();
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
      run = [];
    };
    // Every checkpoint move of the group, in its order, by compare-and-set in as few statements as they allow: one
    // UPDATE for the group's existing checkpoints (a group of 64 short tasks moved 64 of them one by one).
    const moves: Batch[] = [];
    // Re-reads of one table on several chains are compared and written together, when the first of them comes; so are
    // snapshots of one table on several chains.
    type SetWriter = (set: readonly Pending[]) => Promise<Wrote[]>;
    const together = new Map<number, { readonly set: readonly number[]; readonly write: SetWriter }>();
    const compared: SetWriter = (set) => writeCompared(tx, set);
    const snapshots: SetWriter = (set) => writeSnapshots(tx, set, (p) => writeOne(tx, p));
    for (const set of comparedSets(group)) for (const i of set) together.set(i, { set, write: compared });
    for (const set of snapshotSets(group)) for (const i of set) together.set(i, { set, write: snapshots });
    const done = new Map<number, Wrote>();
    for (const [i, p] of group.entries()) {
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
        mark = {
          chainId: p.batch.chainId,
          dataset: p.batch.ds.name,
          from,
          runs: new Set([p.batch.runId]),
          // Only a shard's key range, cleared, takes stored rows out.
          dropped: p.batch.replace.kind !== 'none',
        };
      } else if (together.has(i)) {
        const { set, write } = together.get(i)!;
        if (!done.has(i)) {
          const results = await write(set.map((k) => group[k]!));
          for (const [n, k] of set.entries()) done.set(k, results[n]!);
        }
        ({ written, mark } = done.get(i)!);
      } else ({ written, mark } = await writeOne(tx, p));
      if (!p.batch.checkpoint.keep) moves.push(p.batch);
      counts.push(written);
      if (mark)
        lake.set(`${mark.chainId}/${mark.dataset}`, joinMarks(lake.get(`${mark.chainId}/${mark.dataset}`), mark));
    }
    await insertRun();
    await moveCheckpoints(tx, moves);
    // What the lake must rewrite, once per dataset and chain of the group, in one statement (the marks travel as one
    // JSON parameter).
    if (lake.size)
      await tx.exec(
        `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, dropped)
         SELECT m.chain_id, m.dataset, m.from_seq, m.runs, m.dropped
         FROM (SELECT unnest(from_json($1, '[{"chain_id":"INTEGER","dataset":"VARCHAR","from_seq":"BIGINT","runs":["VARCHAR"],"dropped":"BOOLEAN"}]')) AS m)
         ON CONFLICT (chain_id, dataset) DO UPDATE SET from_seq = least(lake_pending.from_seq, excluded.from_seq), runs = list_distinct(list_concat(lake_pending.runs, excluded.runs)), dropped = coalesce(lake_pending.dropped, true) OR excluded.dropped`,
        [
          JSON.stringify(
            [...lake.values()].map((m) => ({
              chain_id: m.chainId,
              dataset: m.dataset,
              from_seq: m.from,
              runs: [...m.runs],
              dropped: m.dropped,
            })),
          ),
        ],
      );
    return counts;
  }
}
