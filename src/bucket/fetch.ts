/**
 * Bringing a bucket lake to this machine: `fetchLake` makes the data folder's `lake/` a copy of the bucket's objects
 * (downloading only those whose ETag differs from the copy's, and removing local files the bucket no longer has);
 * `restore` then rebuilds the warehouse from that copy and the bucket's `_state/`, so that losing the machine loses
 * nothing: the warehouse is a cache of the bucket.
 *
 * The readers (`query`, `report`, `shell`, `dashboard`) fetch before they read when the data folder holds no warehouse
 * (a reader's copy); where a warehouse is, the runs wrote the lake here and the bucket is a copy of it.
 */
import { existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { DATASETS, type Dataset } from '../catalog/catalog.ts';
import { textColumn } from '../catalog/column.ts';
import { dataFolder } from '../config/data-folder.ts';
import { LAYOUT_VERSION, tableDir, tableGlob } from '../lake/layout.ts';
import { hasText } from '../store/ddl.ts';
import { Warehouse } from '../store/warehouse.ts';
import { movePath } from '../util/atomic-file.ts';
import { lit, q, qt } from '../util/sql.ts';
import type { Bucket } from './bucket.ts';
import { STATE_HEAD, STATE_TABLES, type StateHead } from './publish.ts';
import { localFiles, readSyncState, STATE_DIR, saveSyncState } from './sync-state.ts';

/** Downloads at once. */
const DOWNLOADS = 4;

export interface FetchStats {
  readonly objects: number;
  readonly bytes: number;
  readonly removed: number;
  /** Objects the copy already had. */
  readonly kept: number;
}

/** Makes the data folder's `lake/` a copy of the bucket's lake objects (see the header). */
export async function fetchLake(bucket: Bucket, dataDir: string): Promise<FetchStats> {
  const lake = dataFolder(dataDir).lake;
  const state = readSyncState(dataDir, bucket);
  const objects = (await bucket.list()).filter((o) => !o.rel.startsWith(`${STATE_DIR}/`) && !isManifest(o.rel));
  const local = localFiles(lake);
  const wanted = new Set(objects.map((o) => o.rel));
  const stale = objects.filter((o) => {
    const s = state.objects[o.rel];
    const f = local.get(o.rel);
    return !s || !f || s.etag !== o.etag || s.size !== f.size || s.mtimeMs !== f.mtimeMs;
  });
  const before = bucket.bytesDown.n;
  const limit = pLimit(DOWNLOADS);
  await Promise.all(
    stale.map((o) =>
      limit(async () => {
        const path = join(lake, ...o.rel.split('/'));
        const etag = await bucket.download(o.rel, path);
        const st = statSync(path);
        state.objects[o.rel] = { size: st.size, mtimeMs: st.mtimeMs, etag };
      }),
    ),
  );
  let removed = 0;
  for (const f of local.values())
    if (!wanted.has(f.rel)) {
      rmSync(f.path, { force: true });
      delete state.objects[f.rel];
      removed++;
    }
  for (const rel of Object.keys(state.objects)) if (!wanted.has(rel)) delete state.objects[rel];
  state.dirty = [];
  mkdirSync(dataDir, { recursive: true });
  saveSyncState(dataDir, state);
  return { objects: stale.length, bytes: bucket.bytesDown.n - before, removed, kept: objects.length - stale.length };
}

const isManifest = (rel: string) => rel.endsWith('/_manifest.json');

/** The SELECT list that turns a lake file's columns back into the warehouse's (the inverse of `lakeSelect`). */
export function warehouseSelect(ds: Dataset): string {
  const cols: string[] = [];
  for (const c of ds.columns) {
    cols.push(q(c.column));
    if (hasText(c)) cols.push(`"_exact".${q(c.column)} AS ${q(textColumn(c))}`);
  }
  cols.push('"chain_id"', '"_block"', '"_run_id"', '"_taken_at"');
  return cols.join(', ');
}

/** What a restore did. */
export interface RestoreStats extends FetchStats {
  readonly rows: number;
  readonly runId: string;
}

/**
 * Rebuilds the warehouse of a data folder that has none from its bucket: fetches the lake, downloads the state the
 * last publish left, and loads both into a new warehouse, written beside and moved into place when whole.
 */
export async function restore(bucket: Bucket, dataDir: string): Promise<RestoreStats> {
  const target = dataFolder(dataDir).warehouse;
  if (existsSync(target))
    throw new Error(
      `${target} exists: restore rebuilds a warehouse only where there is none (move it away to rebuild it from ${bucket.show()})`,
    );
  const headText = await bucket.text(STATE_HEAD);
  if (headText === null)
    throw new Error(
      `${bucket.show()} holds no exporter state (${STATE_HEAD}): no run has published to it yet; run \`pool-export run\` with this lake.url first`,
    );
  const head = JSON.parse(headText) as StateHead;
  if (head.layout !== LAYOUT_VERSION)
    throw new Error(
      `${bucket.show()} was written with lake layout ${head.layout}; this pool-export reads layout ${LAYOUT_VERSION}`,
    );
  const fetched = await fetchLake(bucket, dataDir);
  const work = dataFolder(dataDir).restore;
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  let rows = 0;
  try {
    for (const t of STATE_TABLES) {
      const entry = head.tables[t];
      if (entry) await bucket.download(entry.key, join(work, 'state', `${t}.parquet`));
    }
    const w = await Warehouse.open(work);
    try {
      const lake = dataFolder(dataDir).lake;
      const present = DATASETS.filter((ds) => localFiles(tableDir(lake, ds)).size > 0);
      // Every dataset's table, as a run makes those of its plan: an empty one is a dataset with no rows yet.
      await w.ensureTables(DATASETS);
      await w.transaction(async (tx) => {
        for (const t of STATE_TABLES) {
          const file = join(work, 'state', `${t}.parquet`);
          if (!existsSync(file)) continue;
          if (t === 'meta') continue; // the new warehouse's schema version is this version's, as the lake's layout is
          await tx.exec(`INSERT INTO _pool_export.${t} BY NAME SELECT * FROM read_parquet(${lit(file)})`);
        }
        for (const ds of present) {
          const glob = tableGlob(lake, ds, 'data');
          rows += await tx.exec(
            `INSERT INTO ${qt(ds.table)} BY NAME SELECT ${warehouseSelect(ds)} FROM read_parquet(${lit(glob)}, hive_partitioning = false)`,
          );
        }
      });
    } finally {
      await w.close({ checkpoint: true });
    }
    movePath(dataFolder(work).warehouse, target);
    saveSyncState(dataDir, { ...readSyncState(dataDir, bucket), head: head.runId });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { ...fetched, rows, runId: head.runId };
}
