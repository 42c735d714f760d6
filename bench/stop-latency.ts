/**
 * How long a stop takes: `run` against the sandbox (8 chains, the demo's 5,000 swaps each, 20 ms of latency per
 * request), sent SIGINT at points spread over its tasks, and during its lake write; the time from the signal to the
 * end of the process, and how the process ended. `npx tsx bench/stop-latency.ts [trials]` (6 by default, about 2 min).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';
import { median } from './util.ts';

const trials = Number(process.argv[2] ?? 6);
const sandbox = await startSandbox(['--scale', '5000']);
await sandbox.control('faults', { latencyMs: 20 });
const dir = mkdtempSync(join(tmpdir(), 'pool-export-stop-'));

/**
 * One run, stopped by SIGINT `delayMs` after its log shows `tasks` tasks ended: the time from the signal to the end of
 * the process, and how the process ended.
 */
function stopped(data: string, tasks: number, delayMs = 0): Promise<{ ms: number; end: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, 'run'], {
      env: {
        ...process.env,
        POOL_EXPORT_API_KEY: sandbox.apiKey,
        POOL_EXPORT_BASE_URL: sandbox.url,
        POOL_EXPORT_DATA_DIR: data,
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let sent: number | undefined;
    let armed = false;
    let ended = 0;
    let rest = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      const lines = (rest + d).split('\n');
      rest = lines.pop()!;
      for (const line of lines) if (/"event":"task-(done|failed)"/.test(line)) ended++;
      if (!armed && ended >= tasks) {
        armed = true;
        setTimeout(() => {
          sent = performance.now();
          child.kill('SIGINT');
        }, delayMs);
      }
    });
    child.on('close', (code, signal) =>
      resolve({ ms: sent === undefined ? Number.NaN : performance.now() - sent, end: signal ?? `exit ${code}` }),
    );
  });
}

try {
  const rows: string[] = [];
  const during: number[] = [];
  for (let i = 0; i < trials; i++) {
    // Spread over the 328 tasks of a first run.
    const after = Math.round(((i + 0.5) / trials) * 300);
    const r = await stopped(join(dir, `tasks-${i}`), after);
    during.push(r.ms);
    rows.push(`during the tasks, after ${after} had ended: ${r.ms.toFixed(0)} ms, ${r.end}`);
  }
  const lake: number[] = [];
  for (let i = 0; i < Math.max(2, Math.round(trials / 2)); i++) {
    // Once every task has ended the lake write is under way (about 4 s of it here); a little later into it each time.
    const delay = 200 + i * 800;
    const r = await stopped(join(dir, `lake-${i}`), 328, delay);
    lake.push(r.ms);
    rows.push(`during the lake write, ${delay} ms after the last task: ${r.ms.toFixed(0)} ms, ${r.end}`);
  }
  for (const r of rows) console.log(r);
  console.log(
    `stop latency: during the tasks median ${median(during).toFixed(0)} ms, max ${Math.max(...during).toFixed(0)} ms; during the lake write median ${median(lake).toFixed(0)} ms, max ${Math.max(...lake).toFixed(0)} ms`,
  );
} finally {
  await sandbox.stop();
  rmSync(dir, { recursive: true, force: true });
}
