/**
 * Replacing a file or a folder so that a reader sees the old one or the new one, never part of either, and so that a
 * machine that loses power keeps one of them too. The rule, in this one place: the new file's bytes reach the disk
 * (fsync) before the rename makes them the file, and the rename itself is made durable by an fsync of the folder that
 * holds it. Every file the project replaces goes through here (the status file, the lake's files and journal, the views
 * file, the dashboard, a report written to a file); `renameSync` appears nowhere else outside the sandbox.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/** Flushes a file's or a folder's data and metadata to the disk. */
function sync(path: string): void {
  const fd = openSync(path, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes `tmp` (a file written whole, by this process or by DuckDB) the file `target`: its bytes are synced, then it is
 * renamed over `target` (created with its folder if need be), then the folder is synced.
 */
export function replaceFile(tmp: string, target: string): void {
  replaceFiles([[tmp, target]]);
}

/**
 * Replaces several files as `replaceFile` does each, syncing each folder once after all the renames into it (a lake
 * publish renames many files into a few month folders).
 */
export function replaceFiles(moves: Iterable<readonly [tmp: string, target: string]>): void {
  const folders = new Set<string>();
  for (const [tmp, target] of moves) {
    sync(tmp);
    mkdirSync(dirname(target), { recursive: true });
    renameSync(tmp, target);
    folders.add(dirname(target));
  }
  for (const f of folders) sync(f);
}

/** Writes `data` as the file `path` (through `path.tmp`); a failed write leaves the old file and no temporary one. */
export function writeFileAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.tmp`;
  try {
    writeFileSync(tmp, data);
    replaceFile(tmp, path);
  } catch (e) {
    rmSync(tmp, { force: true });
    throw e;
  }
}

/**
 * Moves a folder (or a file) to `to`, which must not exist, and syncs the folders of both ends. With `ifPresent`, a
 * missing `from` is not an error (a move a crashed process may already have made).
 */
export function movePath(from: string, to: string, opts: { readonly ifPresent?: boolean } = {}): void {
  if (opts.ifPresent && !existsSync(from)) return;
  renameSync(from, to);
  sync(dirname(to));
  if (dirname(from) !== dirname(to)) sync(dirname(from));
}
