/**
 * Runs the CLI under a tiny python3 parent that reaps it with wait4(2), so that its peak memory comes from the kernel
 * (`ru_maxrss`, the resident set's high-water mark, in KiB on Linux), whatever happens in its last milliseconds.
 */
import { spawn } from 'node:child_process';
import { BIN } from '../../src/sandbox/spawn.ts';

const MARK = 'peak-rss-kib:';
const WRAPPER = [
  'import os, subprocess, sys',
  'p = subprocess.Popen(sys.argv[1:])',
  '_, status, usage = os.wait4(p.pid, 0)',
  `sys.stderr.write("\\n${MARK}%d\\n" % usage.ru_maxrss)`,
  'sys.exit(os.waitstatus_to_exitcode(status))',
].join('\n');

/** The CLI's exit code, output, and peak resident memory in MiB. */
export function cliWithPeakRss(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string; peakMiB: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', WRAPPER, process.execPath, BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('exit', (code) => {
      const at = stderr.lastIndexOf(`\n${MARK}`);
      if (at < 0) return reject(new Error(`no peak memory was reported: ${stderr}`));
      resolve({
        code,
        stdout,
        stderr: stderr.slice(0, at),
        peakMiB: Number(stderr.slice(at + MARK.length + 1).trim()) / 1024,
      });
    });
  });
}
