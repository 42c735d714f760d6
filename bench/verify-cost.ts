/**
 * What verification costs: against the sandbox at the demo's size (8 chains, 5,000 swaps each), a first export, then
 * `verify` over the whole history, then an incremental run after new blocks with its own verification of the days it
 * touched, and the same run with `--no-verify`. Requests are the sandbox's own count of data requests; seconds, the
 * wall time of each command. `npx tsx bench/verify-cost.ts` (about 2 min).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';

const sandbox = await startSandbox(['--scale', '5000']);
const dir = mkdtempSync(join(tmpdir(), 'pool-export-verify-cost-'));
const env = { ...process.env, POOL_EXPORT_API_KEY: sandbox.apiKey, POOL_EXPORT_BASE_URL: sandbox.url };

/** Runs the CLI on a data folder: its exit code, wall seconds, peak memory, the requests the sandbox served, stderr. */
async function timed(
  args: string[],
  data: string,
): Promise<{ code: number | null; secs: number; peakMb: number; requests: number; stderr: string }> {
  await sandbox.control('stats', {});
  let peakKb = 0;
  const started = performance.now();
  const { code, stderr } = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...env, POOL_EXPORT_DATA_DIR: data },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let err = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (err += d));
    const poll = setInterval(() => {
      try {
        const kb = Number(/VmHWM:\s+(\d+)/.exec(readFileSync(`/proc/${child.pid}/status`, 'utf8'))![1]);
        peakKb = Math.max(peakKb, kb);
      } catch {
        // The process has ended.
      }
    }, 50);
    child.on('exit', (c) => {
      clearInterval(poll);
      resolve({ code: c, stderr: err });
    });
  });
  const secs = (performance.now() - started) / 1000;
  const { requests } = await sandbox.control<{ requests: number }>('stats');
  if (code !== 0 && args[0] !== 'verify') throw new Error(`${args.join(' ')} exited ${code}: ${stderr.slice(-500)}`);
  return { code, secs, peakMb: peakKb / 1024, requests, stderr };
}

/** The `verified` event of a run's log. */
const verified = (stderr: string) => {
  const line = stderr.split('\n').find((l) => l.includes('"event":"verified"'));
  return line ? (JSON.parse(line) as { requests: number; groups: number; gaps: number }) : undefined;
};

try {
  const a = join(dir, 'a');
  const b = join(dir, 'b');
  const first = await timed(['run'], a);
  const firstPlain = await timed(['run', '--no-verify'], b);
  const whole = await timed(['verify'], a);
  await sandbox.control('advance', { blocks: 1200 });
  const inc = await timed(['run'], a);
  const incPlain = await timed(['run', '--no-verify'], b);
  const v = verified(inc.stderr)!;
  const vFirst = verified(first.stderr)!;
  const rows = [
    [
      'first export of 8 chains (with its verification)',
      first,
      `${vFirst.requests} requests verify ${vFirst.groups} groups`,
    ],
    ['the same export, --no-verify', firstPlain, ''],
    ['verify, every day of 8 chains, and the lake', whole, `exit ${whole.code}`],
    ['incremental run (1,200 new blocks), verified', inc, `${v.requests} of its requests verify ${v.groups} groups`],
    ['the same run, --no-verify', incPlain, ''],
  ] as const;
  console.log('| what | requests | seconds | peak MB | note |\n|---|---|---|---|---|');
  for (const [what, r, note] of rows)
    console.log(`| ${what} | ${r.requests} | ${r.secs.toFixed(1)} | ${r.peakMb.toFixed(0)} | ${note} |`);
  console.log(
    `\nverification of an incremental run: ${v.requests} requests, ${((100 * v.requests) / inc.requests).toFixed(1)}% of the run's ${inc.requests}; ${(inc.secs - incPlain.secs).toFixed(1)} s more than the same run without it`,
  );
} finally {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}
