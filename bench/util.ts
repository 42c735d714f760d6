/** Small helpers of the benchmark suite's sections. */
import { spawnSync } from 'node:child_process';
import { BIN } from '../src/sandbox/spawn.ts';

/** The median of some figures (the upper of the two middle ones for an even count). */
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Stops the suite when a command it runs fails, with the command's last output. */
export function must(r: { code: number | null; out: string }, what: string): void {
  if (r.code !== 0) throw new Error(`${what} failed (exit ${r.code}):\n${r.out.slice(-2000)}`);
}

/** One command of the CLI (`args`) with `env`, which must exit 0: what it printed, and its wall time in seconds. */
export function cliRun(
  env: NodeJS.ProcessEnv,
  args: string[],
  what = args.join(' '),
): { stdout: string; stderr: string; secs: number } {
  const t = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 28 });
  const secs = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${what}: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  return { stdout: r.stdout, stderr: r.stderr, secs };
}
