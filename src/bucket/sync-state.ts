/**
 * What the bucket holds of the data folder's lake, as this machine last saw it: `lake-bucket.json` in the data folder,
 * each object's size and local modification time (to tell a file the lake writer replaced since) and its ETag (to tell
 * an object another machine replaced since). A table path whose manifest is still to be written is listed in `dirty`
 * before its objects go up, so that a process killed in between writes it on its next publish.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { dataFolder } from '../config/data-folder.ts';
import { showLakeUrl } from '../config/lake-url.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import type { Bucket } from './bucket.ts';

/** One object as last published or fetched. */
export interface Synced {
  readonly size: number;
  readonly mtimeMs: number;
  readonly etag: string;
}

export interface SyncState {
  /** The bucket lake these objects are in: a state of another bucket counts as empty. */
  readonly url: string;
  readonly objects: Record<string, Synced>;
  /** Table paths (`dodoex/swaps`) whose manifest must be written again. */
  dirty: string[];
  /** The run whose state head this data folder last published or restored: another in the bucket is another writer's. */
  head?: string;
  /** When the rows of the last publish that ended began to be read (its run's start; milliseconds since the epoch). */
  publishedAt?: number;
  /** A publish began and has not ended (it failed, or the process stopped): the next run publishes, whatever the cadence. */
  publishing?: boolean;
  /** The lake changed since the last publish ended (a run within the cadence wrote it): the bucket is behind. */
  owed?: boolean;
  /** Per chain id, the newest block time (seconds) of the checkpoints whose rows the last published state covers. */
  covered?: Record<string, number>;
}

export function readSyncState(dataDir: string, bucket: Pick<Bucket, 'url'>): SyncState {
  const url = showLakeUrl(bucket.url);
  const file = dataFolder(dataDir).bucketSync;
  if (existsSync(file)) {
    const s = JSON.parse(readFileSync(file, 'utf8')) as SyncState;
    if (s.url === url) return { ...s, objects: { ...s.objects }, dirty: [...(s.dirty ?? [])] };
  }
  return { url, objects: {}, dirty: [] };
}

export function saveSyncState(dataDir: string, s: SyncState): void {
  writeFileAtomic(dataFolder(dataDir).bucketSync, JSON.stringify(s));
}

/** A file of the local lake: its key below the lake (`/` separated), path, size and modification time. */
export interface LocalFile {
  readonly rel: string;
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/** Every file of a local lake but its work files (names beginning with `.`, such as `.tmp/`, and `*.part`). */
export function localFiles(lake: string): Map<string, LocalFile> {
  const out = new Map<string, LocalFile>();
  const walk = (dir: string, rel: string) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      if (e.name.startsWith('.') || e.name.endsWith('.part') || e.name.endsWith('.tmp')) continue;
      const path = join(dir, e.name);
      const r = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(path, r);
      else if (e.isFile()) {
        const st = statSync(path);
        out.set(r, { rel: r, path, size: st.size, mtimeMs: st.mtimeMs });
      }
    }
  };
  walk(lake, '');
  return out;
}

/** The table path of an object (`dodoex/swaps`), or null for the lake's own files (`_layout.json`). */
export function tableOf(rel: string): string | null {
  const parts = rel.split('/');
  return parts.length >= 3 ? `${parts[0]}/${parts[1]}` : null;
}

/** The manifest of a table path. */
export const manifestKey = (table: string) => `${table}/_manifest.json`;

/** The bucket's state folder: the exporter's own tables and their head. */
export const STATE_DIR = '_state';
