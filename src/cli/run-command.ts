/** `pool-export run`: exports the selected jobs, chains and datasets once, then prints a summary. */
import { randomUUID } from 'node:crypto';
import type { CommandModule } from 'yargs';
import { selectJobs } from '../../jobs/index.ts';
import { chainName, parseChain } from '../config/chains.ts';
import { loadConfig } from '../config/config.ts';
import { buildPlan } from '../export/plan.ts';
import { runExport } from '../export/run-export.ts';
import type { TaskResult } from '../export/task.ts';
import { Warehouse } from '../store/warehouse.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { createEventLog, LOG_LEVELS } from '../util/logger.ts';

interface Args {
  jobs?: string;
  chains?: string;
  datasets?: string;
  'data-dir'?: string;
  config?: string;
  'dry-run': boolean;
  'log-level': string;
}

const list = (s: string | undefined) => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) : undefined);

function summary(results: readonly TaskResult[]): string {
  const lines = ['dataset                             chain        rows   pages  requests  status'];
  for (const r of results) {
    if (r.stats.rows === 0 && r.status === 'ok') continue;
    lines.push(`${r.task.ds.name.padEnd(35)} ${chainName(r.task.chainId).padEnd(10)} ${String(r.stats.rows).padStart(6)} ${String(r.stats.pages).padStart(7)} ${String(r.stats.requests).padStart(9)}  ${r.status}`);
  }
  const sum = (k: 'rows' | 'requests' | 'retries' | 'pages') => results.reduce((a, r) => a + r.stats[k], 0);
  const failed = results.filter((r) => r.status === 'failed');
  const count = (k: 'outOfRange' | 'truncated') => results.reduce((a, r) => a + Object.values(r.stats[k]).reduce((x, y) => x + y, 0), 0);
  const oor = count('outOfRange');
  const cut = count('truncated');
  lines.push(`\n${results.length} tasks (${results.length - failed.length} ok, ${failed.length} failed, ${results.filter((r) => r.status === 'ok' && r.stats.rows === 0).length} with no new rows): ${sum('rows')} rows, ${sum('pages')} pages, ${sum('requests')} requests, ${sum('retries')} retries`);
  if (oor) lines.push(`${oor} values exceed DECIMAL(38,18)/HUGEINT range: their numeric column is NULL; the exact value is in <column>_text`);
  if (cut) lines.push(`${cut} values have more than 18 fractional digits: their numeric column is cut to 18; the exact value is in <column>_text`);
  for (const f of failed) lines.push(`FAILED ${f.error?.message}`);
  return lines.join('\n');
}

/** The yargs module of the `run` command. */
export const runCommand: CommandModule<object, Args> = {
  command: 'run',
  describe: 'Export the selected jobs once: every task from its checkpoint to the current block',
  builder: (y) =>
    y
      .option('jobs', { type: 'string', describe: 'comma list of jobs (default: all; see `pool-export jobs`)' })
      .option('chains', { type: 'string', describe: 'comma list of chain names or ids (default: the config\'s chains)' })
      .option('datasets', { type: 'string', describe: 'comma list of datasets, e.g. dodoex.swaps,list.liquidity (default: the jobs\' datasets)' })
      .option('data-dir', { type: 'string', describe: 'data folder (default: POOL_EXPORT_DATA_DIR or ./data)' })
      .option('config', { type: 'string', describe: 'JSON config file (default: ./pool-export.config.json if present)' })
      .option('dry-run', { type: 'boolean', default: false, describe: 'print the plan (tasks, endpoints, cursors) and exit' })
      .option('log-level', { choices: LOG_LEVELS, default: 'warn', describe: 'level of the JSON log lines on stderr' }),
  handler: async (a) => {
    const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
    const jobs = selectJobs(list(a.jobs));
    const chains = list(a.chains)?.map(parseChain);
    const datasets = list(a.datasets);
    const tasks = buildPlan(config, { jobs: a.datasets && !a.jobs ? [] : jobs, ...(chains ? { chains } : {}), ...(datasets ? { datasets } : {}) });
    if (!config.apiKey && !a['dry-run']) throw Object.assign(new Error('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)'), { usage: true });
    const warehouse = await Warehouse.open(config.dataDir, { readOnly: false });
    try {
      if (a['dry-run']) {
        const { CheckpointStore } = await import('../store/checkpoint-store.ts');
        const cps = new CheckpointStore(warehouse);
        process.stdout.write(`plan: ${tasks.length} tasks, data folder ${config.dataDir}\n`);
        for (const t of tasks) {
          const cp = await cps.get(t.chainId, t.ds.name);
          process.stdout.write(`${t.ds.name.padEnd(35)} ${chainName(t.chainId).padEnd(10)} ${t.ds.kind.padEnd(8)} ${t.endpoint.label}  cursor ${cp?.cursor ?? '(start of history)'}\n`);
        }
        return;
      }
      const controller = new AbortController();
      const stop = () => controller.abort();
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      const client = new UpstreamClient({ apiKey: config.apiKey, userAgent: `${config.userAgentPrefix}-${config.developerId}`, timeoutMs: config.timeoutMs });
      const log = createEventLog(a['log-level'], config.apiKey);
      const results = await runExport({ config, tasks, jobs: jobs.map((j) => j.name), warehouse, client, runId: randomUUID(), signal: controller.signal, log });
      process.stdout.write(`${summary(results)}\n`);
      if (results.some((r) => r.status === 'failed')) process.exitCode = 1;
    } finally {
      await warehouse.close();
    }
  },
};
