/**
 * DuckDB's allocator setting on a real first backfill: 500,000 swaps of one chain with pages returned at once
 * (`dirty_decay_ms:0,muzzy_decay_ms:0`, the setting under a control group's limit) against DuckDB's own
 * (`dirty_decay_ms:1000,muzzy_decay_ms:1000`, the setting elsewhere), alternated over two rounds, on the host fixture
 * of 8 GiB without a limit (so `auto` gives DuckDB 2048MiB whatever this machine has). Prints each run's seconds and
 * peak resident memory (GNU time's maximum RSS).
 *
 *   npx tsx bench/allocator.ts      (make bench-allocator; about 3 minutes)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';

const CONFS = ['dirty_decay_ms:0,muzzy_decay_ms:0', 'dirty_decay_ms:1000,muzzy_decay_ms:1000'];
const sb = await startSandbox(['--scale', '500000', '--chains', '56']);
try {
  console.log('| round | DUCKDB_JE_MALLOC_CONF | wall time | peak RSS |\n|---|---|---|---|');
  for (const round of [1, 2])
    for (const conf of CONFS) {
      const data = mkdtempSync(join(tmpdir(), 'pe-alloc-'));
      const t = performance.now();
      const args = ['-f', '%M', process.execPath, BIN, 'run', '--chains', 'bsc', '--datasets', 'dodoex.swaps'];
      const r = spawnSync('/usr/bin/time', [...args, '--no-verify', '--log-level', 'error'], {
        env: {
          ...process.env,
          POOL_EXPORT_API_KEY: sb.apiKey,
          POOL_EXPORT_BASE_URL: sb.url,
          POOL_EXPORT_DATA_DIR: data,
          POOL_EXPORT_HOST_FILES: resolve('test/fixtures/hosts/no-limit-8gib'),
          DUCKDB_JE_MALLOC_CONF: conf,
        },
        encoding: 'utf8',
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const secs = (performance.now() - t) / 1000;
      rmSync(data, { recursive: true, force: true });
      if (r.status !== 0) throw new Error(`exit ${r.status}: ${r.stderr.slice(-1500)}`);
      const kb = Number(r.stderr.trim().split('\n').at(-1));
      console.log(`| ${round} | ${conf} | ${secs.toFixed(1)} s | ${(kb / 2 ** 20).toFixed(2)} GiB |`);
    }
} finally {
  await sb.stop();
}
