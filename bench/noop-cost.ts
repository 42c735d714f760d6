/**
 * What a run costs by what is new, on the demo's data (8 chains, every job, `--scale 5000`): a backfill, then a run
 * with nothing new upstream, then a run after 100 new blocks. For each: the requests the sandbox served
 * (`/_sandbox/stats`), the wall time of the whole command, and the lake files its lake write wrote (`lake-written`).
 *
 *   npx tsx bench/noop-cost.ts      (make bench-noop; about 2 minutes)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';

const sb = await startSandbox(['--scale', '5000', '--now', '2026-11-20T00:00:00Z']);
const data = mkdtempSync(join(tmpdir(), 'pe-noop-'));
const env = {
  ...process.env,
  POOL_EXPORT_API_KEY: sb.apiKey,
  POOL_EXPORT_BASE_URL: sb.url,
  POOL_EXPORT_DATA_DIR: data,
};

/** One `run` of every job: its exit, seconds, lake files written and the requests the sandbox served. */
async function run(what: string): Promise<string> {
  await sb.control('stats', {});
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, 'run', '--log-format', 'json'], {
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const secs = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  const lake = (r.stdout + r.stderr).split('\n').find((l) => l.includes('"event":"lake-written"'));
  const { files, ms } = lake ? (JSON.parse(lake) as { files: number; ms: number }) : { files: 0, ms: 0 };
  const { requests } = await sb.control<{ requests: number }>('stats');
  return `| ${what} | ${requests} | ${secs.toFixed(1)} s | ${files} (${(ms / 1000).toFixed(1)} s) |`;
}

try {
  const lines = ['| run | requests | wall time | lake files written (lake write) |', '|---|---|---|---|'];
  lines.push(await run('backfill of every job'));
  lines.push(await run('nothing new upstream'));
  await sb.control('advance', { blocks: 100 });
  lines.push(await run('after 100 new blocks'));
  console.log(lines.join('\n'));
} finally {
  await sb.stop();
  rmSync(data, { recursive: true, force: true });
}
