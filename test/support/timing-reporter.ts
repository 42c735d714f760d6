/**
 * A vitest reporter that ends each tier with its time and its ten slowest tests, each with its time limit, and names
 * every test and every file's setup that took more than half its limit (the room a slower or busier machine of this
 * kind needs). It only prints: a test never fails on time here, only on its own limit.
 */
import type { File, Task, Test } from '@vitest/runner';
import type { Reporter, Vitest } from 'vitest/node';

/** One timed thing: a test, or a file's setup (its `beforeAll` hooks and imports, up to its first test). */
export interface Timed {
  what: string;
  ms: number;
  limitMs: number;
}

function tests(task: Task): Test[] {
  if (task.type === 'test') return [task];
  return 'tasks' in task ? task.tasks.flatMap(tests) : [];
}

/** What ran of one file: its tests, and the time from the file's start to its first test's start (its setup). */
export function timings(
  files: readonly File[],
  root: string,
  hookTimeoutMs: number,
): { tests: Timed[]; setups: Timed[] } {
  const out: { tests: Timed[]; setups: Timed[] } = { tests: [], setups: [] };
  for (const file of files) {
    const name = file.filepath.startsWith(`${root}/`) ? file.filepath.slice(root.length + 1) : file.filepath;
    const ran = tests(file).filter((t) => t.result?.duration !== undefined && t.mode === 'run');
    for (const t of ran)
      out.tests.push({ what: `${name} > ${fullName(t)}`, ms: t.result!.duration!, limitMs: t.timeout });
    const fileStart = file.result?.startTime;
    const firstStart = Math.min(...ran.map((t) => t.result?.startTime ?? Number.POSITIVE_INFINITY));
    if (fileStart !== undefined && Number.isFinite(firstStart))
      out.setups.push({ what: `${name} (setup)`, ms: Math.max(0, firstStart - fileStart), limitMs: hookTimeoutMs });
  }
  return out;
}

/** The test's name behind its describe blocks' names, without the file's. */
function fullName(t: Task): string {
  const names: string[] = [];
  for (let s: Task | undefined = t; s && s !== t.file; s = s.suite) names.unshift(s.name);
  return names.join(' > ');
}

const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The closing lines: the tier's time, its ten slowest tests with their limits, then whatever used over half its limit. */
export function summary(tier: string, elapsedMs: number, t: { tests: Timed[]; setups: Timed[] }): string[] {
  const slowest = [...t.tests].sort((a, b) => b.ms - a.ms).slice(0, 10);
  const over = [...t.tests, ...t.setups]
    .filter((x) => x.ms > x.limitMs / 2)
    .sort((a, b) => b.ms / b.limitMs - a.ms / a.limitMs);
  const row = (x: Timed) => `  ${secs(x.ms).padStart(8)} of ${secs(x.limitMs).padStart(7)}  ${x.what}`;
  return [
    `${tier} tier: ${secs(elapsedMs)} for ${t.tests.length} tests; the ten slowest, each with its limit:`,
    ...slowest.map(row),
    `${tier} tier: the three slowest files' setups (imports and beforeAll, up to the first test), against the hook limit:`,
    ...[...t.setups]
      .sort((a, b) => b.ms - a.ms)
      .slice(0, 3)
      .map(row),
    over.length === 0
      ? `${tier} tier: every test and every file's setup took under half its limit`
      : `${tier} tier: OVER HALF ITS LIMIT (${over.length}):`,
    ...over.map(row),
  ];
}

/** Each tier's reporter; the tier's name comes from the config, which chose the tier's files. */
export default class TimingReporter implements Reporter {
  private started = Date.now();
  private ctx: Vitest | undefined;

  constructor(private readonly options: { tier: string }) {}

  onInit(ctx: Vitest): void {
    this.started = Date.now();
    this.ctx = ctx;
  }

  onFinished(files: File[] = []): void {
    const { root, hookTimeout } = this.ctx!.config;
    const lines = summary(this.options.tier, Date.now() - this.started, timings(files, root, hookTimeout));
    // Which Node.js ran the tier (its workers are forks of this process, on the same binary).
    const on = `${this.options.tier} tier: ran on Node.js ${process.version} (${process.execPath})`;
    process.stdout.write(`\n${[on, ...lines].join('\n')}\n`);
  }
}
