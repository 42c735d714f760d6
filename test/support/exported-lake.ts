/**
 * A real export of the sandbox (bsc and polygon at scale 1,500) for the lake's tests (test/integration/lake*.int.test.ts),
 * made before a file's tests and removed after them, and how they read it: its Parquet files and the warehouse's counts.
 * `sb`, `dir`, `data` and `env` are live bindings.
 */
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { cli, sandboxEnv } from './cli-process.ts';

export let sb: SandboxProcess;
export let dir: string;
export let data: string;
export let env: Record<string, string>;

export function parquetFiles(root: string): string[] {
  try {
    return readdirSync(root).flatMap((n) => {
      const p = join(root, n);
      if (n.endsWith('.parquet')) return [p];
      return statSync(p).isDirectory() ? parquetFiles(p) : [];
    });
  } catch {
    return [];
  }
}

export async function warehouseCounts(): Promise<Map<string, number>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const out = new Map<string, number>();
    for (const ds of DATASETS)
      out.set(ds.name, Number((await w.all(`SELECT count(*) AS n FROM ${qt(ds.table)}`))[0]!.n));
    return out;
  } finally {
    await w.close();
  }
}

/** A sandbox and a folder exported from it, before the calling file's tests; both gone after them. */
export function useExportedLake(): void {
  beforeAll(async () => {
    sb = await startSandbox(['--scale', '1500', '--chains', '56,137']);
    dir = mkdtempSync(join(tmpdir(), 'pool-export-lake-'));
    data = join(dir, 'data');
    env = sandboxEnv(sb, data);
    const r = await cli(['run', '--chains', 'bsc,polygon'], env);
    if (r.code !== 0) throw new Error(r.stderr);
  });
  afterAll(async () => {
    await sb?.stop();
    rmSync(dir, { recursive: true, force: true });
  });
}
