/**
 * The free space a run needs in its data folder. DuckDB keeps its memory within `duckdbMemoryLimit` by spilling to
 * `warehouse.duckdb.tmp/` there; a run that starts with too little room would fail half-way through a large backfill,
 * so it stops before it starts instead, naming the folder, what is free and the fix.
 */
import { statfsSync } from 'node:fs';
import { bytesText } from '../util/http-body.ts';

/** Free bytes a run with a memory limit needs in the data folder's file system. */
export const MIN_SPILL_BYTES = 1024 ** 3;

/** The message when `free` bytes are too few for a run limited to `memoryLimit`, or undefined when they suffice. */
export function spillSpaceProblem(at: { dataDir: string; memoryLimit: string }, free: number): string | undefined {
  if (at.memoryLimit === '' || free >= MIN_SPILL_BYTES) return undefined;
  return (
    `the data folder ${at.dataDir} has ${bytesText(free)} free; a run needs at least ${bytesText(MIN_SPILL_BYTES)} ` +
    `there, since DuckDB writes what does not fit in duckdbMemoryLimit (${at.memoryLimit}) to that disk. Free space ` +
    'there, point --data-dir at a folder on a larger disk, or set duckdbMemoryLimit to "" (DuckDB then holds the data ' +
    'in memory, up to 80% of RAM)'
  );
}

/** Free bytes for an unprivileged writer in the file system holding `dir`. */
export function freeBytes(dir: string): number {
  const s = statfsSync(dir);
  return s.bavail * s.bsize;
}
