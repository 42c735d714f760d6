/** `pool-export run`: exports the selected jobs, chains and datasets once, then prints a summary. */
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Argv, CommandModule } from 'yargs';
import { selectJobs } from '../../jobs/index.ts';
import type { Job } from '../../jobs/job.ts';
import { chainName, parseChain, UsageError } from '../config/chains.ts';
import { loadConfig, type Config } from '../config/config.ts';
import { buildPlan } from '../export/plan.ts';
import { runOnce } from '../export/run-once.ts';
import type { Task, TaskResult } from '../export/task.ts';
import { CheckpointStore } from '../store/checkpoint-store.ts';
import { Warehouse, WAREHOUSE_FILE } from '../store/warehouse.ts';
import { createEventLog, LOG_FORMATS, LOG_LEVELS, type EventLog } from '../util/logger.ts';
import { TerminalProgress } from '../util/progress.ts';
import { inert } from '../util/display.ts';

/** Options shared by `run` and `schedule`. */
export interface CommonArgs {
  jobs?: string | undefined;
  chains?: string | undefined;
  datasets?: string | undefined;
  'data-dir'?: string | undefined;
  config?: string | undefined;
  'wait-lock': number;
  'log-level'?: string | undefined;
  'log-format': (typeof LOG_FORMATS)[number];
}

interface Args extends CommonArgs {
  'dry-run': boolean;
  'by-chain': boolean;
}

/** A comma list from a flag, trimmed; undefined when the flag is absent. */
export const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : undefined);

/**
 * The human summary of a run: rows, pages and requests per dataset (summed over its chains; per dataset and chain with
 * `byChain`), totals, datasets unavailable upstream, and one line per distinct failure. Tasks with nothing new are
 * left out of the table.
 */
export function summary(results: readonly TaskResult[], opts: { byChain?: boolean } = {}): string {
  const groups = new Map<string, TaskResult[]>();
  for (const r of results) {
    if ((r.stats.rows === 0 && r.status === 'ok') || r.status === 'unavailable') continue;
    const key = opts.byChain ? `${r.task.ds.name}\u0000${chainName(r.task.chainId)}` : r.task.ds.name;
    groups.set(key, [...(groups.get(key) ?? []), r]);
  }
  const head = opts.byChain ? 'chain' : 'chains';
  const lines = [`${'dataset'.padEnd(35)} ${head.padEnd(10)} ${'rows'.padStart(9)} ${'pages'.padStart(7)} ${'requests'.padStart(9)}  status`];
  for (const [key, rs] of groups) {
    const [name, chain] = key.split('\u0000') as [string, string | undefined];
    const add = (k: 'rows' | 'pages' | 'requests') => rs.reduce((a, r) => a + r.stats[k], 0);
    const failed = rs.filter((r) => r.status === 'failed').length;
    const status = failed === 0 ? 'ok' : rs.length === 1 ? 'failed' : `${failed} failed`;
    lines.push(`${name.padEnd(35)} ${(chain ?? String(rs.length)).padEnd(10)} ${String(add('rows')).padStart(9)} ${String(add('pages')).padStart(7)} ${String(add('requests')).padStart(9)}  ${status}`);
  }
  const sum = (k: 'rows' | 'requests' | 'retries' | 'pages' | 'duplicates') => results.reduce((a, r) => a + r.stats[k], 0);
  const failed = results.filter((r) => r.status === 'failed');
  const unavailable = results.filter((r) => r.status === 'unavailable');
  const ok = results.filter((r) => r.status === 'ok');
  const parts = [`${ok.length} ok`, `${failed.length} failed`, ...(unavailable.length ? [`${unavailable.length} unavailable`] : []), `${ok.filter((r) => r.stats.rows === 0).length} with no new rows`];
  lines.push(`\n${results.length} tasks (${parts.join(', ')}): ${sum('rows')} rows, ${sum('pages')} pages, ${sum('requests')} requests, ${sum('retries')} retries`);
  if (unavailable.length) {
    const byDataset = new Map<string, string[]>();
    for (const r of unavailable) byDataset.set(r.task.ds.name, [...(byDataset.get(r.task.ds.name) ?? []), chainName(r.task.chainId)]);
    lines.push(`unavailable (the upstream deployment has no such entity; skipped there, not a failure): ${[...byDataset].map(([d, c]) => `${d} on ${c.join(', ')}`).join('; ')}`);
  }
  const dups = sum('duplicates');
  if (dups) lines.push(`${dups} rows repeated an id the upstream had already sent (an upstream defect): the newest of each was kept; the log's duplicate-ids events name them`);
  for (const line of failureLines(failed)) lines.push(line);
  return lines.join('\n');
}

/** Names a few things, or counts many: `a, b, c` or `41 datasets`. */
function few(items: readonly string[], what: string): string {
  return items.length <= 4 ? items.join(', ') : `${items.length} ${what}`;
}

/**
 * One FAILED line per distinct failure: tasks that failed alike (every dataset behind an unreachable host, say) share
 * one line that names them, or counts them, instead of one line each.
 */
export function failureLines(failed: readonly TaskResult[]): string[] {
  const groups = new Map<string, TaskResult[]>();
  for (const f of failed) {
    const prefix = `${f.task.ds.name} on ${chainName(f.task.chainId)}: `;
    const message = f.error?.message ?? 'failed';
    const rest = message.startsWith(prefix) ? message.slice(prefix.length) : message;
    groups.set(rest, [...(groups.get(rest) ?? []), f]);
  }
  return [...groups].map(([rest, tasks]) => {
    if (tasks.length === 1) return `FAILED ${inert(tasks[0]!.error?.message ?? rest)}`;
    const datasets = [...new Set(tasks.map((t) => t.task.ds.name))].sort();
    const chains = [...new Set(tasks.map((t) => chainName(t.task.chainId)))].sort();
    return `FAILED ${tasks.length} tasks (${few(datasets, 'datasets')} on ${few(chains, 'chains')}): ${inert(rest)}`;
  });
}

/** Options shared by `run` and `schedule`. */
export function commonOptions<T>(y: Argv<T>) {
  return y
    .option('jobs', { type: 'string', describe: 'comma list of jobs (default: all; see `pool-export jobs`)' })
    .option('chains', { type: 'string', describe: 'comma list of chain names or ids (default: the config\'s chains)' })
    .option('datasets', { type: 'string', describe: 'comma list of datasets, e.g. dodoex.swaps,list.liquidity (default: the jobs\' datasets)' })
    .option('data-dir', { type: 'string', describe: 'data folder (default: POOL_EXPORT_DATA_DIR or ./data)' })
    .option('config', { type: 'string', describe: 'JSON config file (default: ./pool-export.config.json if present)' })
    .option('wait-lock', { type: 'number', default: 0, describe: 'seconds to wait when another run holds the data folder (default: stop at once)' })
    .option('log-level', { choices: LOG_LEVELS, describe: 'level of the log lines on stderr (default: info, or warn on a terminal where progress bars show)' })
    .option('log-format', { choices: LOG_FORMATS, default: 'json' as const, describe: 'json: one JSON object per line; pretty: for people' });
}

/** The config, jobs and plan that a `run` or `schedule` command line asks for. */
export function resolveRequest(a: CommonArgs): { config: Config; jobs: Job[]; tasks: readonly Task[]; chains?: number[]; datasets?: string[] } {
  const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
  const jobs = selectJobs(list(a.jobs));
  const chains = list(a.chains)?.map(parseChain);
  const datasets = list(a.datasets);
  const tasks = buildPlan(config, { jobs: a.datasets && !a.jobs ? [] : jobs, ...(chains ? { chains } : {}), ...(datasets ? { datasets } : {}) });
  if (!Number.isFinite(a['wait-lock']) || a['wait-lock'] < 0) throw new UsageError(`--wait-lock must be a number of seconds from 0, not ${a['wait-lock']}`);
  return { config, jobs, tasks, ...(chains ? { chains } : {}), ...(datasets ? { datasets } : {}) };
}

/** The event log for a command line. */
export function logFor(a: CommonArgs, config: Config): EventLog {
  return createEventLog(a['log-level'] ?? (process.stderr.isTTY ? 'warn' : 'info'), config.apiKey, a['log-format']);
}

/**
 * Prints the plan, writing nothing: the cursors come from an existing warehouse opened read-only, or are the start of
 * history where there is none.
 */
async function dryRun(config: Config, tasks: readonly Task[]): Promise<void> {
  const dir = config.dataDir;
  if (existsSync(dir) && !statSync(dir).isDirectory()) throw new UsageError(`the data folder ${dir} is a file; choose another with --data-dir or POOL_EXPORT_DATA_DIR`);
  const exists = existsSync(join(dir, WAREHOUSE_FILE));
  const warehouse = exists ? await Warehouse.open(dir, { readOnly: true }) : undefined;
  try {
    const cps = warehouse && new CheckpointStore(warehouse);
    process.stdout.write(`plan: ${tasks.length} tasks, data folder ${dir}${exists ? '' : ' (nothing exported there yet)'}\n`);
    if (!config.apiKey) process.stdout.write('no API key is set: a run needs POOL_EXPORT_API_KEY (or "apiKey" in the config file)\n');
    for (const t of tasks) {
      const cp = await cps?.get(t.chainId, t.ds.name).catch(() => undefined);
      process.stdout.write(`${t.ds.name.padEnd(35)} ${chainName(t.chainId).padEnd(10)} ${t.ds.kind.padEnd(8)} ${t.endpoint.label}  cursor ${cp ? inert(cp.cursor) : '(start of history)'}\n`);
    }
  } finally {
    await warehouse?.close();
  }
}

/** The yargs module of the `run` command. */
export const runCommand: CommandModule<object, Args> = {
  command: 'run',
  describe: 'Export the selected jobs once: every task from its checkpoint to the current block',
  builder: (y) =>
    commonOptions(y)
      .option('dry-run', { type: 'boolean', default: false, describe: 'print the plan (tasks, endpoints, cursors) and exit, writing nothing' })
      .option('by-chain', { type: 'boolean', default: false, describe: 'summary: one line per dataset and chain (default: one per dataset, summed over its chains)' }),
  handler: async (a) => {
    const { config, jobs, tasks } = resolveRequest(a);
    if (a['dry-run']) return dryRun(config, tasks);
    if (!config.apiKey) throw new UsageError('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)');
    const controller = new AbortController();
    process.once('SIGINT', () => controller.abort());
    process.once('SIGTERM', () => controller.abort());
    const progress = process.stderr.isTTY ? new TerminalProgress() : undefined;
    const outcome = await runOnce({ config, tasks, jobs: jobs.map((j) => j.name), waitLockSecs: a['wait-lock'], signal: controller.signal, log: logFor(a, config), ...(progress ? { progress } : {}) });
    process.stdout.write(`${summary(outcome.results, { byChain: a['by-chain'] })}\n`);
    if (outcome.stopped) process.stdout.write('stopped on request: committed batches are kept; the next run resumes from them\n');
    if (outcome.lakeError) process.stdout.write(`FAILED ${inert(outcome.lakeError)}\n`);
    if (outcome.stopped || outcome.lakeError || outcome.results.some((r) => r.status === 'failed')) process.exitCode = 1;
  },
};
