/**
 * Publishing the data folder's lake to its bucket, after each run's lake write, so that a reader listing the prefix at
 * any moment sees every row once:
 * - each of the lake's files is one object, replaced by one PUT (or one completed multipart upload): a listing shows the
 *   old object or the new one, never both, never neither. No row moves between objects: a full file keeps its key
 *   range when rewritten (`lake/key-ranges.ts`). A file the re-read window can no longer reach is never written again;
 *   the state of a mutable entity is one object per chain, replaced the same way;
 * - new and changed objects go up first; then each touched table's `_manifest.json` names its objects (key, size,
 *   ETag, rows, and whether the re-read window can still change it: `final`); then the objects no manifest names any
 *   more are deleted (a month emptied by a reorganisation); then the exporter's own tables go to `_state/`, and
 *   `_state/head.json` last, which is what `restore` and a run from an empty data folder start from.
 *
 * Open months are published, marked `final: false` in the manifest, rather than held back until final: readers want
 * the rows of the last hour, and replacing one object is as atomic for them as adding one.
 *
 * The state goes up only when the lake holds every row the checkpoints cover (nothing is pending for the lake): else a
 * run resumed from the bucket would move on from checkpoints past rows the bucket lacks.
 */
import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { dataFolder } from '../config/data-folder.ts';
import { LAYOUT_VERSION } from '../lake/layout.ts';
import type { Sql } from '../store/sql-port.ts';
import { listLit, lit } from '../util/sql.ts';
import type { Bucket } from './bucket.ts';
import {
  type LocalFile,
  localFiles,
  manifestKey,
  readSyncState,
  STATE_DIR,
  saveSyncState,
  tableOf,
} from './sync-state.ts';

/** The exporter's own tables that a bucket keeps (`lake_pending` is empty whenever the state goes up). */
export const STATE_TABLES = ['checkpoints', 'shard_checkpoints', 'runs', 'run_tasks', 'verifications', 'meta'] as const;

/** Uploads at once. */
const UPLOADS = 4;

/** What one publish did. */
export interface PublishStats {
  readonly uploaded: number;
  readonly bytes: number;
  readonly deleted: number;
  readonly manifests: number;
  /** Whether the state went up (false when the lake still lacks rows the checkpoints cover). */
  readonly state: boolean;
}

/** A manifest's entry for one object. */
export interface ManifestObject {
  readonly key: string;
  readonly size: number;
  readonly etag: string;
  readonly rows: number;
  /** False while the re-read window can still change the object (an open month, a state now). */
  readonly final: boolean;
}

export interface Manifest {
  readonly format: 'pool-export-manifest';
  readonly version: 1;
  readonly table: string;
  readonly publishedAt: string;
  readonly runId: string;
  readonly objects: readonly ManifestObject[];
}

/** The head of a bucket's state: which run published it, and its tables' objects. */
export interface StateHead {
  readonly format: 'pool-export-state';
  readonly version: 1;
  readonly layout: number;
  readonly runId: string;
  readonly publishedAt: string;
  readonly tables: Readonly<Record<string, { readonly key: string; readonly rows: number }>>;
}

export const STATE_HEAD = `${STATE_DIR}/head.json`;

/** Whether an object of a month partition can no longer change: its month ended before the re-read window. */
function isFinal(rel: string, now: number, windowSecs: number): boolean {
  const m = /\/month=(\d{4})-(\d{2})\//.exec(rel);
  if (!m) return false;
  const end = Date.UTC(Number(m[1]), Number(m[2]), 1) / 1000;
  return end + windowSecs < now;
}

/** Publishes the data folder's lake to the bucket (see the header). The caller holds the data folder's lock. */
export async function publishLake(
  bucket: Bucket,
  dataDir: string,
  opts: {
    readonly sql: Sql;
    readonly runId: string;
    readonly reorgWindowSecs: number;
    readonly now?: number;
    /**
     * When the rows it publishes began to be read (milliseconds; the run's start): the cadence counts from there, so
     * that the bucket's lag, measured from the blocks those rows were read at, stays within the cadence and one run.
     */
    readonly readSince?: number;
  },
): Promise<PublishStats> {
  const lake = dataFolder(dataDir).lake;
  const now = opts.now ?? Date.now() / 1000;
  const state = readSyncState(dataDir, bucket);
  const local = localFiles(lake);
  const changed = [...local.values()].filter((f) => {
    const s = state.objects[f.rel];
    return !s || s.size !== f.size || s.mtimeMs !== f.mtimeMs;
  });
  const removed = Object.keys(state.objects).filter((rel) => !local.has(rel));
  const dirty = new Set(state.dirty);
  for (const rel of [...changed.map((f) => f.rel), ...removed]) {
    const t = tableOf(rel);
    if (t) dirty.add(t);
  }
  state.dirty = [...dirty].sort();
  // Begun: a publish that does not end is taken up by the next run, whatever the cadence (`cadence.ts`).
  state.publishing = true;
  saveSyncState(dataDir, state);

  // 1. The new and changed objects, each whole.
  let bytes = 0;
  const limit = pLimit(UPLOADS);
  await Promise.all(
    changed.map((f) =>
      limit(async () => {
        const etag = await bucket.upload(f.rel, f.path, f.size);
        state.objects[f.rel] = { size: f.size, mtimeMs: f.mtimeMs, etag };
        bytes += f.size;
      }),
    ),
  );
  saveSyncState(dataDir, state);

  // 2. The manifests of the tables touched.
  const byTable = new Map<string, LocalFile[]>();
  for (const f of local.values()) {
    const t = tableOf(f.rel);
    if (t && dirty.has(t)) byTable.set(t, [...(byTable.get(t) ?? []), f]);
  }
  const rows = await rowCounts(
    opts.sql,
    [...byTable.values()].flat().map((f) => f.path),
  );
  for (const table of dirty) {
    const files = (byTable.get(table) ?? []).sort((a, b) => a.rel.localeCompare(b.rel));
    const manifest: Manifest = {
      format: 'pool-export-manifest',
      version: 1,
      table,
      publishedAt: new Date(now * 1000).toISOString(),
      runId: opts.runId,
      objects: files.map((f) => ({
        key: f.rel,
        size: f.size,
        etag: state.objects[f.rel]!.etag,
        rows: rows.get(f.path) ?? 0,
        final: isFinal(f.rel, now, opts.reorgWindowSecs),
      })),
    };
    await bucket.put(manifestKey(table), `${JSON.stringify(manifest, null, 1)}\n`);
  }

  // 3. The objects no manifest names any more.
  await bucket.remove(removed);
  for (const rel of removed) delete state.objects[rel];
  state.dirty = [];
  saveSyncState(dataDir, state);

  // 4. The exporter's own tables, when the lake holds every row their checkpoints cover.
  const pending = Number((await opts.sql.all('SELECT count(*) AS n FROM _pool_export.lake_pending'))[0]!.n);
  if (pending === 0) {
    await publishState(bucket, dataDir, opts);
    state.head = opts.runId;
    state.covered = await coveredTimes(opts.sql);
  }
  // Ended: the bucket holds the lake as it is (its rows; the state too unless some are still to be written).
  state.publishing = false;
  state.owed = pending !== 0;
  state.publishedAt = opts.readSince ?? now * 1000;
  saveSyncState(dataDir, state);
  return { uploaded: changed.length, bytes, deleted: removed.length, manifests: dirty.size, state: pending === 0 };
}

/** Per chain, the newest block time (seconds) of its checkpoints: what a published state lets a reader see up to. */
async function coveredTimes(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql.all(
    'SELECT chain_id, max(epoch(block_time))::BIGINT AS t FROM _pool_export.checkpoints WHERE block_time IS NOT NULL GROUP BY chain_id',
  );
  return Object.fromEntries(rows.map((r) => [String(r.chain_id), Number(r.t)]));
}

/** Rows per Parquet file, from their footers. */
async function rowCounts(sql: Sql, paths: readonly string[]): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  const parquet = paths.filter((p) => p.endsWith('.parquet'));
  if (parquet.length === 0) return out;
  const r = await sql.all(`SELECT file_name AS f, num_rows AS n FROM parquet_file_metadata(${listLit(parquet)})`);
  for (const x of r) out.set(String(x.f), Number(x.n));
  return out;
}

/** Uploads the exporter's own tables as Parquet, then the head that names them. */
async function publishState(
  bucket: Bucket,
  dataDir: string,
  opts: { readonly sql: Sql; readonly runId: string; readonly now?: number },
): Promise<void> {
  const tmp = dataFolder(dataDir).bucketTmp;
  mkdirSync(tmp, { recursive: true });
  try {
    const tables: Record<string, { key: string; rows: number }> = {};
    for (const t of STATE_TABLES) {
      const file = join(tmp, `${t}.parquet`);
      const rows = await opts.sql.exec(
        `COPY (SELECT * FROM _pool_export.${t}) TO ${lit(file)} (FORMAT parquet, COMPRESSION zstd)`,
      );
      const key = `${STATE_DIR}/${t}.parquet`;
      await bucket.upload(key, file, statSync(file).size);
      tables[t] = { key, rows };
    }
    const head: StateHead = {
      format: 'pool-export-state',
      version: 1,
      layout: LAYOUT_VERSION,
      runId: opts.runId,
      publishedAt: new Date((opts.now ?? Date.now() / 1000) * 1000).toISOString(),
      tables,
    };
    await bucket.put(STATE_HEAD, `${JSON.stringify(head, null, 1)}\n`);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
}
