/**
 * What a 512 MiB container costs a large first backfill: the same backfill of N swaps (5,000,000 by default) and its
 * lake write, once as a process on this machine (no memory limit, so DuckDB's limit is 256MB) and once in the image
 * under `--memory=512m` (DuckDB's limit derived from it: 204 MiB, and the lake written on one thread). Prints the wall
 * time, the peak memory (the process' VmHWM; the container's cgroup peak) and the ratio of the container's time to the
 * process'. `make bench-512` (about 8 minutes at 5,000,000 swaps); `-- --swaps 500000` for a smaller one.
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildImage, IMAGE } from '../scripts/image.ts';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';
import { Warehouse } from '../src/store/warehouse.ts';

const at = process.argv.indexOf('--swaps');
const SWAPS = at > 0 ? Number(process.argv[at + 1]) : 5_000_000;
const ARGS = ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--no-verify'];

/** Waits for a child to exit while sampling `sample` every 200 ms; the exit code and the largest sample. */
function watch(
  child: ReturnType<typeof spawn>,
  sample: () => number | undefined,
): Promise<{ code: number | null; peak: number }> {
  let peak = 0;
  const poll = setInterval(() => {
    const v = sample();
    if (v !== undefined) peak = Math.max(peak, v);
  }, 200);
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, peak });
    }),
  );
}

const read = (path: string): number | undefined => {
  try {
    return Number(readFileSync(path, 'utf8').trim());
  } catch {
    return undefined;
  }
};

/** The peak memory of a running container, in bytes, from its control group on this host (v1 or v2). */
function cgroupPeak(id: string): number | undefined {
  for (const f of [
    `/sys/fs/cgroup/memory/docker/${id}/memory.max_usage_in_bytes`,
    `/sys/fs/cgroup/system.slice/docker-${id}.scope/memory.peak`,
  ])
    if (existsSync(f)) return read(f);
  return undefined;
}

async function rows(data: string): Promise<number> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    return Number((await w.all('SELECT count(*) AS n FROM dodoex.swaps'))[0]!.n);
  } finally {
    await w.close();
  }
}

const image = buildImage();
const sb = await startSandbox(['--scale', String(SWAPS), '--chains', '56']);
const dir = mkdtempSync(join(tmpdir(), 'pool-export-bench-512-'));
const env = { ...process.env, POOL_EXPORT_API_KEY: sb.apiKey, POOL_EXPORT_BASE_URL: sb.url };
try {
  // The process on this machine.
  const host = join(dir, 'host');
  let started = performance.now();
  const child = spawn(process.execPath, [BIN, ...ARGS], {
    env: { ...env, POOL_EXPORT_DATA_DIR: host },
    stdio: 'ignore',
  });
  const a = await watch(child, () => {
    const m = /VmHWM:\s+(\d+)/.exec(
      (() => {
        try {
          return readFileSync(`/proc/${child.pid}/status`, 'utf8');
        } catch {
          return '';
        }
      })(),
    );
    return m ? Number(m[1]) * 1024 : undefined;
  });
  const hostSecs = (performance.now() - started) / 1000;
  if (a.code !== 0) throw new Error(`the run on this machine exited ${a.code}`);

  // The image under --memory=512m.
  const boxed = join(dir, 'container');
  mkdirSync(boxed);
  chmodSync(boxed, 0o777);
  const name = `pool-export-bench-512-${process.pid}`;
  started = performance.now();
  const docker = spawn(
    'docker',
    [
      'run',
      '--name',
      name,
      '--network',
      'host',
      '--memory=512m',
      '-v',
      `${boxed}:/data`,
      '-e',
      `POOL_EXPORT_API_KEY=${sb.apiKey}`,
      '-e',
      `POOL_EXPORT_BASE_URL=${sb.url}`,
      IMAGE,
      ...ARGS,
    ],
    { stdio: 'ignore' },
  );
  let id: string | undefined;
  const b = await watch(docker, () => {
    id ??=
      spawnSync('docker', ['inspect', '--format', '{{.Id}}', name], { encoding: 'utf8' }).stdout.trim() || undefined;
    return id ? cgroupPeak(id) : undefined;
  });
  const boxSecs = (performance.now() - started) / 1000;
  const oom = spawnSync('docker', ['inspect', '--format', '{{.State.OOMKilled}}', name], {
    encoding: 'utf8',
  }).stdout.trim();
  spawnSync('docker', ['rm', name]);
  const [hostRows, boxRows] = [await rows(host), b.code === 0 ? await rows(boxed) : 0];
  const mb = (bytes: number) => (bytes ? `${(bytes / 1024 ** 2).toFixed(0)} MiB` : 'not read');
  process.stdout.write(
    [
      `a backfill of ${hostRows.toLocaleString('en')} swaps and its lake write (image ${image.name}, ${mb(image.bytes)})`,
      '| where | exit | seconds | peak memory | rows | time ratio |',
      '|---|---|---|---|---|---|',
      `| this machine, no limit (DuckDB 256MB) | ${a.code} | ${hostSecs.toFixed(0)} | ${mb(a.peak)} (VmHWM) | ${hostRows} | 1.00 |`,
      `| container, --memory=512m (DuckDB 204 MiB) | ${b.code}${oom === 'true' ? ' (OOM killed)' : ''} | ${boxSecs.toFixed(0)} | ${mb(b.peak)} (cgroup peak) | ${boxRows} | ${(boxSecs / hostSecs).toFixed(2)} |`,
      '',
    ].join('\n'),
  );
  if (b.code !== 0 || boxRows !== hostRows) process.exitCode = 1;
} finally {
  await sb.stop();
  rmSync(dir, { recursive: true, force: true });
}
