/** `pool-export run`: exports the selected jobs, chains and datasets once, then prints a summary. */
import { existsSync } from 'node:fs';
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
}

/** A comma list from a flag, trimmed; undefined when the flag is absent. */
export const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : undefined);

/** The human summary of a run: rows per dataset and chain, totals, datasets unavailable upstream, failures. */
export function summary(results: readonly TaskResult[]): string {
  const lines = ['dataset                             chain        rows   pages  requests  status'];
  for (const r of results) {
    if ((r.stats.rows === 0 && r.status === 'ok') || r.status === 'unavailable') continue;
    lines.push(`${r.task.ds.name.padEnd(35)} ${chainName(r.task.chainId).padEnd(10)} ${String(r.stats.rows).padStart(6)} ${String(r.stats.pages).padStart(7)} ${String(r.stats.requests).padStart(9)}  ${r.status}`);
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
  for (const f of failed) lines.push(`FAILED ${f.error?.message}`);
  return lines.join('\n');
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

async function dryRun(config: Config, tasks: readonly Task[]): Promise<void> {
  const warehouse = await Warehouse.open(config.dataDir, { readOnly: existsSync(join(config.dataDir, WAREHOUSE_FILE)) });
  try {
    const cps = new CheckpointStore(warehouse);
    process.stdout.write(`plan: ${tasks.length} tasks, data folder ${config.dataDir}\n`);
    for (const t of tasks) {
      const cp = await cps.get(t.chainId, t.ds.name).catch(() => undefined);
      process.stdout.write(`${t.ds.name.padEnd(35)} ${chainName(t.chainId).padEnd(10)} ${t.ds.kind.padEnd(8)} ${t.endpoint.label}  cursor ${cp?.cursor ?? '(start of history)'}\n`);
    }
  } finally {
    await warehouse.close();
  }
}

/** The yargs module of the `run` command. */
export const runCommand: CommandModule<object, Args> = {
  command: 'run',
  describe: 'Export the selected jobs once: every task from its checkpoint to the current block',
  builder: (y) => commonOptions(y).option('dry-run', { type: 'boolean', default: false, describe: 'print the plan (tasks, endpoints, cursors) and exit' }),
  handler: async (a) => {
    const { config, jobs, tasks } = resolveRequest(a);
    if (a['dry-run']) return dryRun(config, tasks);
    if (!config.apiKey) throw new UsageError('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)');
    const controller = new AbortController();
    process.once('SIGINT', () => controller.abort());
    process.once('SIGTERM', () => controller.abort());
    const progress = process.stderr.isTTY ? new TerminalProgress() : undefined;
    const outcome = await runOnce({ config, tasks, jobs: jobs.map((j) => j.name), waitLockSecs: a['wait-lock'], signal: controller.signal, log: logFor(a, config), ...(progress ? { progress } : {}) });
    process.stdout.write(`${summary(outcome.results)}\n`);
    if (outcome.stopped) process.stdout.write('stopped on request: committed batches are kept; the next run resumes from them\n');
    if (outcome.lakeError) process.stdout.write(`FAILED ${outcome.lakeError}\n`);
    if (outcome.stopped || outcome.lakeError || outcome.results.some((r) => r.status === 'failed')) process.exitCode = 1;
  },
};
