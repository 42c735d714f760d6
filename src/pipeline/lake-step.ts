/**
 * The lake step of a run, for a local lake and for a bucket lake alike: bring the data folder's `lake/` up to the
 * warehouse, then, for a bucket lake, publish it. And what a bucket lake needs before a run: the bucket checked, and
 * a data folder without a warehouse restored from the bucket.
 */
import { existsSync } from 'node:fs';
import type { Bucket } from '../bucket/bucket.ts';
import type { PublishStats } from '../bucket/publish.ts';
import type { Config } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { sizeBytes } from '../config/memory-limit.ts';
import { BucketError, LakeWriteError } from '../errors.ts';
import { LANES } from '../lake/lake-writer.ts';
import { applyRetention } from '../lake/retention.ts';
import { updateLake } from '../lake/update-lake.ts';
import { WAREHOUSE_THREADS, type Warehouse } from '../store/warehouse.ts';
import type { EventLog } from '../util/logger.ts';
import { lit } from '../util/sql.ts';

/**
 * The bucket of a bucket lake, or null for a local lake. The S3 client is loaded only here: a run on a local lake
 * never reads its code. `signal`: a stop request, which aborts the bucket's requests under way.
 */
export async function openBucket(config: Config, signal?: AbortSignal): Promise<Bucket | null> {
  const url = config.lake.bucket;
  if (!url) return null;
  const { Bucket } = await import('../bucket/bucket.ts');
  return new Bucket(url, {
    maxAttempts: config.maxAttempts,
    timeoutMs: Math.max(config.timeoutMs, 60_000),
    partBytes: config.lake.partBytes,
    signal,
  });
}

/**
 * Runs `fn` on the config's bucket, checked first (in seconds, with one line naming the fix) and closed after; null,
 * without calling `fn`, for a local lake.
 */
export async function withBucket<T>(config: Config, fn: (bucket: Bucket) => Promise<T>): Promise<T | null> {
  const bucket = await openBucket(config);
  if (!bucket) return null;
  try {
    await bucket.check();
    return await fn(bucket);
  } finally {
    bucket.close();
  }
}

/**
 * Before a run on a bucket lake: checks the bucket (in seconds), and restores a data folder that has no warehouse from
 * the bucket's last publish, so that the run resumes from the bucket's checkpoints rather than starting a backfill.
 */
export async function prepareBucket(bucket: Bucket, dataDir: string, log: EventLog): Promise<void> {
  await bucket.check();
  const { STATE_HEAD } = await import('../bucket/publish.ts');
  const { readSyncState } = await import('../bucket/sync-state.ts');
  const text = await bucket.text(STATE_HEAD);
  if (text === null) return;
  const published = (JSON.parse(text) as { runId?: string }).runId;
  if (existsSync(dataFolder(dataDir).warehouse)) {
    // One writer per bucket lake: a head this data folder did not leave is another's, whose objects a run here would
    // overwrite with older ones.
    const mine = readSyncState(dataDir, bucket).head;
    if (mine !== published)
      throw new BucketError(
        `${bucket.show()} was last published by run ${published}, which is not this data folder's (${mine ?? 'it never published there'}): another data folder writes that lake. Run from one data folder only; to move, restore into an empty data folder (pool-export restore --data-dir NEW)`,
        'other-writer',
      );
    return;
  }
  const { restore } = await import('../bucket/fetch.ts');
  const started = performance.now();
  const r = await restore(bucket, dataDir);
  log('restored', {
    from: bucket.show(),
    objects: r.objects,
    bytes: r.bytes,
    rows: r.rows,
    publishedBy: r.runId,
    ms: Math.round(performance.now() - started),
  });
}

/**
 * DuckDB's threads for the lake write under a memory limit below 512 MiB: one. The write sorts every new row of a
 * table, and each thread holds a Parquet row group of its own while it writes; a first lake write of 5,000,000 swaps
 * did not fit in 204 MiB or 256 MB on two threads, and did on one (with row groups of at most 16 MB). Undefined (the
 * warehouse's own count, `warehouseThreads`) otherwise.
 */
export function lakeThreads(memoryLimit: string): number | undefined {
  const bytes = sizeBytes(memoryLimit);
  return bytes !== undefined && bytes < 512 * 1024 ** 2 ? 1 : undefined;
}

/**
 * Entries the lake write writes at once under a memory limit: one, and one more per whole GiB, up to `LANES`. Each
 * entry's sort takes what memory DuckDB lets it, and sorts side by side under 256MB ran out of it (a lake write of
 * 100,000 swaps of one chain failed so, and wrote its entries one by one in 204 MiB).
 */
export function lakeLanes(memoryLimit: string): number {
  const bytes = sizeBytes(memoryLimit);
  return bytes === undefined ? LANES : Math.min(LANES, 1 + Math.floor(bytes / 1024 ** 3));
}

/**
 * Writes what the lake lacks and, for a bucket lake, publishes it. A bucket lake's files are a local lake's, each an
 * object.
 */
export async function writeLakeStep(
  w: Warehouse,
  config: Config,
  opts: {
    readonly bucket: Bucket | null;
    readonly runId: string;
    readonly signal?: AbortSignal | undefined;
    readonly log: EventLog;
    /** A bucket lake is published at most once per this many seconds (0 or absent: every time; `bucket/cadence.ts`). */
    readonly publishEverySecs?: number;
    /** When the run began (milliseconds): the cadence counts from there (`publishLake`, `readSince`). */
    readonly runStartedMs?: number;
    /** `runId` is a run that committed rows and writes the lake now, for the first time (`writeLake`'s `freshRun`). */
    readonly freshRun?: boolean;
    /** Awaited before a bucket lake is published: what the publish must carry (the run's verification). */
    readonly beforePublish?: () => Promise<void>;
  },
): Promise<{ files: number; published?: PublishStats; publishDeferred?: boolean }> {
  const threads = lakeThreads(config.duckdbMemoryLimit);
  if (threads === undefined) return writeAndPublish(w, config, opts);
  await w.exec(`SET threads = ${threads}`);
  try {
    return await writeAndPublish(w, config, opts);
  } finally {
    // Back to the warehouse's own count (RESET would give DuckDB's, one per core).
    await w.exec(`SET threads = ${WAREHOUSE_THREADS}`);
  }
}

/**
 * A fault for the tests: DuckDB's memory limit while the lake's files are written, so that a lake write runs out of
 * memory as one too large for its limit would, while the run's tasks and a bucket's publish keep the configured limit.
 */
export const LAKE_MEMORY_FAULT_ENV = 'POOL_EXPORT_FAULT_LAKE_MEMORY';

/**
 * The checkpoint of a run's commits, made beside its lake write rather than after it (`Warehouse.checkpointBeside`):
 * the lake write reads what the tasks committed, and leaves a core partly idle while its lanes wait on one another. After
 * 100 new blocks on the demo's 8 chains the closing checkpoint took 0.45 s after the lake write; beside it, it ends
 * within it, and the close's own checkpoint takes 0.1 s. Made where the lake write may take lanes (`lakeLanes` above
 * one: the checkpoint's memory comes on top of theirs), and not under the lake's memory fault (which checkpoints before
 * it lowers the limit). Undefined where it is not made: the close checkpoints as before.
 */
export function checkpointBesideLake(w: Warehouse, config: Config, signal: AbortSignal): Promise<void> | undefined {
  if (lakeLanes(config.duckdbMemoryLimit) < 2 || process.env[LAKE_MEMORY_FAULT_ENV] || signal.aborted) return undefined;
  return w.checkpointBeside(signal);
}

/** `updateLake`, under the memory limit of `POOL_EXPORT_FAULT_LAKE_MEMORY` when that is set. */
async function updateLakeFiles(w: Warehouse, config: Config, opts: Parameters<typeof updateLake>[2]): Promise<number> {
  const squeeze = process.env[LAKE_MEMORY_FAULT_ENV];
  if (!squeeze) return updateLake(w, config.dataDir, opts);
  // Checkpointed first: rows committed since the last checkpoint are held in memory, which a lower limit cannot free.
  await w.exec(`CHECKPOINT; SET memory_limit = ${lit(squeeze)}`);
  try {
    return await updateLake(w, config.dataDir, opts);
  } finally {
    const limit = config.duckdbMemoryLimit;
    await w.exec(limit ? `SET memory_limit = ${lit(limit)}` : 'RESET memory_limit');
  }
}

/** The lake's update (`update-lake.ts`) and, for a bucket lake, its publish. */
async function writeAndPublish(
  w: Warehouse,
  config: Config,
  opts: Parameters<typeof writeLakeStep>[2],
): Promise<{ files: number; published?: PublishStats; publishDeferred?: boolean }> {
  const { bucket, signal } = opts;
  const lanes = lakeLanes(config.duckdbMemoryLimit);
  const freshRun = opts.freshRun ? opts.runId : undefined;
  if (!bucket) {
    const files = await updateLakeFiles(w, config, { signal, lanes, freshRun });
    if (!signal?.aborted) await retain(w, config, opts);
    return { files };
  }
  const { publishLake } = await import('../bucket/publish.ts');
  // An entry that failed (its rows stay listed for the next write) does not hold back what the others wrote: that is
  // published, and the exporter's state is not (`publishLake` sends it only when nothing is listed), so that a run
  // resumed from the bucket never moves past rows the bucket lacks. The failure is the step's once published.
  let failure: LakeWriteError | undefined;
  const files = await updateLakeFiles(w, config, { signal, lanes, freshRun }).catch((e) => {
    if (!(e instanceof LakeWriteError)) throw e;
    failure = e;
    return e.files;
  });
  if (signal?.aborted) return { files };
  if (!failure) await retain(w, config, opts);
  // Within the cadence: the bucket is owed what this run wrote, which the first publish after it sends.
  const { readSyncState, saveSyncState } = await import('../bucket/sync-state.ts');
  const { publishDue } = await import('../bucket/cadence.ts');
  const state = readSyncState(config.dataDir, bucket);
  const when = publishDue(state, opts.publishEverySecs ?? 0, Date.now());
  if (!when.due) {
    if (files > 0 && !state.owed) saveSyncState(config.dataDir, { ...state, owed: true });
    opts.log('lake-publish-deferred', {
      runId: opts.runId,
      to: bucket.show(),
      dueInSecs: Math.ceil(when.inSecs),
      publishEverySecs: opts.publishEverySecs,
    });
    if (failure) throw failure;
    return { files, publishDeferred: true };
  }
  await opts.beforePublish?.();
  const started = performance.now();
  const before = { ...bucket.requests };
  const published = await publishLake(bucket, config.dataDir, {
    sql: w,
    runId: opts.runId,
    reorgWindowSecs: config.reorgWindowSecs,
    ...(opts.runStartedMs ? { readSince: opts.runStartedMs } : {}),
  });
  const requests = Object.fromEntries(
    Object.entries(bucket.requests).map(([k, v]) => [k, v - before[k as keyof typeof before]]),
  );
  opts.log('lake-published', {
    runId: opts.runId,
    to: bucket.show(),
    ...published,
    requests,
    ms: Math.round(performance.now() - started),
  });
  if (failure) throw failure;
  return { files, published };
}

/** `lake.keepSnapshotMonths`: the snapshots and history months older than it go, and the log says what went. */
async function retain(w: Warehouse, config: Config, opts: { readonly runId: string; readonly log: EventLog }) {
  const keep = config.lake.keepSnapshotMonths;
  if (keep === null) return;
  const r = await applyRetention(w, dataFolder(config.dataDir).lake, { keep });
  if (r.rows > 0 || r.months > 0) opts.log('retention', { runId: opts.runId, ...r });
}

/**
 * The lake step outside a run (`migrate`, `verify --repair`, `compact`): writes what the lake lacks and, for a bucket
 * lake, publishes it, opening and closing the bucket itself. Returns the files written.
 */
export async function updateLakeFor(
  w: Warehouse,
  config: Config,
  opts: { readonly runId: string; readonly log?: EventLog },
): Promise<number> {
  const bucket = await openBucket(config);
  try {
    const log: EventLog = opts.log ?? (() => undefined);
    if (bucket) await prepareBucket(bucket, config.dataDir, log);
    return (await writeLakeStep(w, config, { bucket, runId: opts.runId, log })).files;
  } finally {
    bucket?.close();
  }
}

/**
 * Before a reader (`query`, `report`, `shell`, `dashboard`) reads a bucket lake from a data folder that holds no
 * warehouse (a reader's copy): brings the copy up to the bucket, downloading only the objects whose ETag changed, and
 * says on stderr what it downloaded. Where a warehouse is, the runs write the lake there: it is read as it is.
 */
export async function fetchForReading(config: Config, say: (line: string) => void): Promise<void> {
  if (!config.lake.bucket || existsSync(dataFolder(config.dataDir).warehouse)) return;
  await withBucket(config, async (bucket) => {
    const { fetchLake } = await import('../bucket/fetch.ts');
    const r = await fetchLake(bucket, config.dataDir);
    const mb = (r.bytes / 1e6).toFixed(1);
    if (r.objects > 0 || r.removed > 0)
      say(
        `fetched ${r.objects} objects (${mb} MB) of ${bucket.show()} into ${dataFolder(config.dataDir).lake}; ${r.kept} unchanged objects read from there${r.removed ? `, ${r.removed} removed` : ''}`,
      );
  });
}
