/**
 * The status file, `<dataDir>/status.json`: where each dataset and chain stands, for `status`. A run holds the
 * warehouse open for writing, and DuckDB then lets no other process read it; so the run keeps this file current (at
 * its start, after each task, at its end), written to a temporary name and renamed, and `status` reads the file,
 * never the warehouse, and needs no lock. The warehouse stays the truth: the file is rebuilt from it at every run's
 * start and end.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dataFolder } from '../config/data-folder.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import {
  lastVerifications,
  ledgerShape,
  readEntries,
  readProgress,
  type StatusEntry,
  verificationOf,
} from './status-entries.ts';
import type { Warehouse } from './warehouse.ts';

/** The file's name in the data folder. */

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
