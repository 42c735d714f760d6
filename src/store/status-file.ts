/**
 * The status file, `<dataDir>/status.json`: where each dataset and chain stands, for `status`. A run holds the
 * warehouse open for writing, and DuckDB then lets no other process read it; so the run keeps this file current (at
 * its start, after each task, at its end), written to a temporary name and renamed, and `status` reads the file,
 * never the warehouse, and needs no lock. The warehouse stays the truth: the file is rebuilt from it at every run's
 * start and end.
 */
import { existsSync, readFileSync } from 'node:fs';
import { DATASETS } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import { qt } from '../util/sql.ts';
import type { Warehouse } from './warehouse.ts';

/** The file's name in the data folder. */

/** Where one dataset stands on one chain. */
export interface StatusEntry {
  readonly dataset: string;
  readonly chainId: number;
  /** When a task of it last ended well (ISO), or null. */
  readonly lastSuccess: string | null;
  /** How its last task ended: ok, failed, unavailable (the upstream deployment has no such entity), or null. */
  readonly lastStatus: string | null;
  readonly lastError: string | null;
  readonly rows: number;
  /** The block its committed rows were read at, and that block's time (ISO). */
  readonly block: number | null;
  readonly blockTime: string | null;
  /** The route its last task read from (a label, never a key), when the ledger recorded one. */
  readonly route?: string | null;
  /**
   * Its last verification against the upstream's counters (`_pool_export.verifications`): when, how many groups
   * differed (gaps), and why it could not check, if it could not. Absent when it was never verified.
   */
  readonly verification?: { readonly at: string; readonly gaps: number; readonly error: string | null } | null;
}

/** The file's content. */
export interface StatusFile {
  /** When the file was written (ISO). */
  readonly writtenAt: string;
  /** The run that wrote it: still running, or ended. */
  readonly run: {
    readonly id: string;
    readonly pid: number;
    readonly startedAt: string;
    readonly state: 'running' | 'ended';
  };
  readonly entries: readonly StatusEntry[];
}

const iso = (v: unknown) =>
  v === null || v === undefined ? null : new Date(String(v).replace(' ', 'T').replace(/\+00$/, 'Z')).toISOString();

/** What `ledgerShape` found of each warehouse opened: it does not change while one is open. */
const shapes = new WeakMap<Warehouse, { hasRoute: number; verified: number }>();

/**
 * Whether the run ledger has its route column and the verifications table exists: a warehouse last written by an
 * earlier version, opened read-only, has neither yet. Read once per warehouse opened (the catalog queries cost a run
 * 30 ms at each of its status reads).
 */
async function ledgerShape(w: Warehouse): Promise<{ hasRoute: number; verified: number }> {
  const known = shapes.get(w);
  if (known) return known;
  const [shape] = await w.all(
    `SELECT (SELECT count(*) FROM duckdb_columns() WHERE schema_name = '_pool_export' AND table_name = 'run_tasks' AND column_name = 'route')::INTEGER AS "hasRoute",
            (SELECT count(*) FROM duckdb_tables() WHERE schema_name = '_pool_export' AND table_name = 'verifications')::INTEGER AS verified`,
  );
  const found = { hasRoute: Number(shape!.hasRoute), verified: Number(shape!.verified) };
  shapes.set(w, found);
  return found;
}

/**
 * Every dataset and chain with a checkpoint or a task in the ledger (one that only ever failed, too), from the
 * warehouse (optionally only one dataset and chain).
 */
export async function readEntries(w: Warehouse, only?: { dataset: string; chainId: number }): Promise<StatusEntry[]> {
  const filter = only ? 'AND dataset = $1 AND chain_id = $2' : '';
  const params = only ? [only.dataset, only.chainId] : [];
  const { hasRoute, verified } = await ledgerShape(w);
  const v = lastVerifications(verified);
  const rows = await w.all(
    `
    WITH v AS (${v}), t AS (
      SELECT chain_id, dataset, max(ended_at) FILTER (WHERE status = 'ok')::VARCHAR AS last_success,
             -- The last task's error, null where it ended without one (arg_max alone passes over nulls).
             arg_max({'e': error}, ended_at).e AS last_error, arg_max(status, ended_at) AS last_status,
             ${hasRoute ? 'arg_max(route, ended_at)' : 'NULL'} AS route
      FROM _pool_export.run_tasks GROUP BY ALL
    )
    SELECT chain_id, dataset, c.block, c.block_time::VARCHAR AS block_time, t.last_success, t.last_error, t.last_status,
           t.route, v.verified_at, v.gaps, v.verify_error
    FROM _pool_export.checkpoints c FULL JOIN t USING (chain_id, dataset) LEFT JOIN v USING (chain_id, dataset)
    WHERE (c.cursor IS NOT NULL OR t.last_status IS NOT NULL) ${filter}
    ORDER BY dataset, chain_id`,
    params,
  );
  const tables = new Set(
    (await w.all("SELECT schema_name || '.' || table_name AS t FROM duckdb_tables()")).map((r) => String(r.t)),
  );
  const counts = new Map<string, number>();
  // The rows of every table per chain in one statement: one query per table cost the run 5 ms each, twice a run.
  const counted = DATASETS.filter((d) => tables.has(d.table) && (!only || d.name === only.dataset));
  if (counted.length)
    for (const x of await w.all(
      counted
        .map(
          (ds, i) =>
            `SELECT ${i} AS ds, chain_id, count(*) AS n FROM ${qt(ds.table)} ${only ? 'WHERE chain_id = $1' : ''} GROUP BY chain_id`,
        )
        .join(' UNION ALL '),
      only ? [only.chainId] : [],
    ))
      counts.set(`${counted[Number(x.ds)]!.name}/${x.chain_id}`, Number(x.n));
  return rows.map((r) => ({
    dataset: String(r.dataset),
    chainId: Number(r.chain_id),
    lastSuccess: iso(r.last_success),
    lastStatus: r.last_status === null ? null : String(r.last_status),
    lastError: r.last_error === null ? null : String(r.last_error),
    rows: counts.get(`${String(r.dataset)}/${Number(r.chain_id)}`) ?? 0,
    block: r.block === null ? null : Number(r.block),
    blockTime: iso(r.block_time),
    route: r.route === null || r.route === undefined ? null : String(r.route),
    verification: verificationOf(r),
  }));
}

/** The last verification of each dataset and chain that checked something: its run's rows, gaps summed. */
function lastVerifications(verified: number): string {
  return verified
    ? `SELECT chain_id, dataset, max(checked_at)::VARCHAR AS verified_at, sum(gaps)::INTEGER AS gaps,
              string_agg(error, '; ') AS verify_error
       FROM _pool_export.verifications WHERE skipped IS NULL GROUP BY chain_id, dataset, run_id
       QUALIFY row_number() OVER (PARTITION BY chain_id, dataset ORDER BY max(checked_at) DESC) = 1`
    : 'SELECT NULL::INTEGER AS chain_id, NULL AS dataset, NULL AS verified_at, NULL AS gaps, NULL AS verify_error WHERE false';
}

/** An entry's verification from a row of `lastVerifications`. */
function verificationOf(r: Record<string, unknown>): StatusEntry['verification'] {
  return r.verified_at === null || r.verified_at === undefined
    ? null
    : {
        at: iso(r.verified_at)!,
        gaps: Number(r.gaps),
        error: r.verify_error === null ? null : String(r.verify_error),
      };
}

/** An entry with its rows and block as the warehouse holds them now. */
async function readProgress(w: Warehouse, e: StatusEntry): Promise<StatusEntry | undefined> {
  const ds = DATASETS.find((d) => d.name === e.dataset);
  if (!ds) return e;
  // A table the warehouse lacks (a dataset whose tasks all failed before it was made) leaves the entry as it was.
  const [r] = await w
    .all(
      `SELECT (SELECT count(*) FROM ${qt(ds.table)} WHERE chain_id = $1) AS n,
            c.block, c.block_time::VARCHAR AS block_time
     FROM (SELECT 1) LEFT JOIN _pool_export.checkpoints c ON c.chain_id = $1 AND c.dataset = $2`,
      [e.chainId, e.dataset],
    )
    .catch(() => [undefined]);
  if (!r) return e;
  return {
    ...e,
    rows: Number(r.n),
    block: r.block === null ? null : Number(r.block),
    blockTime: iso(r.block_time),
  };
}

/**
 * After a run's verification: the file's entries take their last verification from the warehouse, the rest of each
 * kept as the run's end wrote it (nothing else changed since), which spares the file a reading of every table's rows.
 */
export async function refreshVerifications(w: Warehouse, dataDir: string): Promise<void> {
  const file = readStatusFile(dataDir);
  if (!file) return;
  const { verified } = await ledgerShape(w);
  const found = new Map(
    (await w.all(lastVerifications(verified))).map((r) => [`${r.dataset}/${r.chain_id}`, verificationOf(r)]),
  );
  writeStatusFile(dataDir, {
    ...file,
    writtenAt: new Date().toISOString(),
    entries: file.entries.map((e) => ({ ...e, verification: found.get(`${e.dataset}/${e.chainId}`) ?? null })),
  });
}

/** Rebuilds the file's entries from the warehouse (after a run's verification), keeping what it says of the run. */
export async function refreshStatusFile(w: Warehouse, dataDir: string): Promise<void> {
  const file = readStatusFile(dataDir);
  if (file) writeStatusFile(dataDir, { ...file, writtenAt: new Date().toISOString(), entries: await readEntries(w) });
}

/** Writes the file (temporary name, then rename): readers see the old file or the new one, never half of one. */
export function writeStatusFile(dataDir: string, file: StatusFile): void {
  const target = dataFolder(dataDir).status;
  writeFileAtomic(target, `${JSON.stringify(file, null, 1)}\n`);
}

/** Reads the file, or undefined when no run of this version has written one yet. */
export function readStatusFile(dataDir: string): StatusFile | undefined {
  const path = dataFolder(dataDir).status;
  if (!existsSync(path)) return undefined;
  return JSON.parse(readFileSync(path, 'utf8')) as StatusFile;
}

/** The status a run keeps: entries by dataset and chain, written whole after each change. */
export class StatusKeeper {
  private readonly entries = new Map<string, StatusEntry>();
  private state: 'running' | 'ended' = 'running';
  /** When the file was last written (epoch ms). */
  private writtenAt = 0;
  /** When an entry was last read again from the warehouse (epoch ms). */
  private readAt = 0;
  /** The write that follows changes made within a second of the last one. */
  private pending: NodeJS.Timeout | undefined;

  /** The clock, in epoch ms (a test sets its own). */
  now: () => number = Date.now;

  private constructor(
    private readonly w: Warehouse,
    private readonly dataDir: string,
    private readonly run: { id: string; startedAt: string },
  ) {}

  /** Starts keeping the status of a run, from the warehouse as it stands. */
  static async start(w: Warehouse, dataDir: string, runId: string): Promise<StatusKeeper> {
    const k = new StatusKeeper(w, dataDir, { id: runId, startedAt: new Date().toISOString() });
    for (const e of await readEntries(w)) k.entries.set(`${e.dataset}/${e.chainId}`, e);
    k.write();
    return k;
  }

  /**
   * A task ended: its outcome goes into its dataset's entry, and the file is written. The entry's rows and block are
   * read again from the warehouse at most once a second (five queries on the connection every commit waits for; a run
   * of hundreds of short tasks spent half its time there), and always for an entry not seen yet; the end of the run
   * reads every entry again.
   */
  async taskEnded(t: {
    dataset: string;
    chainId: number;
    status: string;
    error: string | null;
    endedAt: Date;
    /** The task read nothing (its block had not moved): its entry changes only by the outcome. */
    unchanged?: boolean;
  }): Promise<void> {
    const key = `${t.dataset}/${t.chainId}`;
    const before = this.entries.get(key);
    const reread = !before || (!t.unchanged && this.now() - this.readAt >= 1000);
    // Taken before the read: the tasks that end while it runs do not read again.
    if (reread) this.readAt = this.now();
    const only = { dataset: t.dataset, chainId: t.chainId };
    // An entry seen before changes by its rows and block alone while the run lasts (its outcome is the task's, its
    // verification comes after the tasks): those are read, not the ledger's history.
    const [fresh] = !reread
      ? [before]
      : before
        ? [await readProgress(this.w, before)]
        : await readEntries(this.w, only);
    const base = fresh ??
      before ?? {
        dataset: t.dataset,
        chainId: t.chainId,
        lastSuccess: null,
        rows: 0,
        block: null,
        blockTime: null,
        lastError: null,
        lastStatus: null,
      };
    this.entries.set(key, {
      ...base,
      lastStatus: t.status,
      lastError: t.status === 'ok' ? null : t.error,
      lastSuccess: t.status === 'ok' ? t.endedAt.toISOString() : (before?.lastSuccess ?? base.lastSuccess),
    });
    // Hundreds of tasks end within a second: the file (written whole, and synced) is written at most once a second,
    // and a change within that second is written when it ends.
    const since = this.now() - this.writtenAt;
    if (since >= 1000 || since < 0) this.write();
    else this.pending ??= setTimeout(() => this.write(), 1000 - since).unref();
  }

  /** The run ended: the file is rebuilt from the warehouse, where the ledger now holds every task. */
  async end(): Promise<void> {
    clearTimeout(this.pending);
    this.pending = undefined;
    this.entries.clear();
    for (const e of await readEntries(this.w)) this.entries.set(`${e.dataset}/${e.chainId}`, e);
    this.state = 'ended';
    this.write();
  }

  /**
   * Writes the file. It is derived from the warehouse, so a failure to write it (a full disk) must not fail the run:
   * `status` then reads the last file written, or rebuilds one from the warehouse once the run has ended.
   */
  private write(): void {
    clearTimeout(this.pending);
    this.pending = undefined;
    this.writtenAt = this.now();
    try {
      this.writeNow();
    } catch {
      // Derived data: the next write, or the next run, makes it again.
    }
  }

  private writeNow(): void {
    writeStatusFile(this.dataDir, {
      writtenAt: new Date().toISOString(),
      run: { id: this.run.id, pid: process.pid, startedAt: this.run.startedAt, state: this.state },
      entries: [...this.entries.values()].sort((a, b) => a.dataset.localeCompare(b.dataset) || a.chainId - b.chainId),
    });
  }
}
