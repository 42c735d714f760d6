/** `pool-export run`: exports the selected jobs, chains and datasets once, then prints a summary. */
import { existsSync, statSync } from 'node:fs';
import type { Job } from '../catalog/job.ts';
import { asideSubject, setAsideSubgraphs, subgraphOf } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { DataLockedError, StopRequested, UsageError } from '../errors.ts';
import type { Task } from '../export/task.ts';
import type { RunRecord } from '../metrics/metrics.ts';
import { checkMetricsFile, writeMetricsFile } from '../metrics/textfile.ts';
import { type RunOutcome, runOnce } from '../pipeline/run.ts';
import { CheckpointStore } from '../store/checkpoint-store.ts';
import { Warehouse } from '../store/warehouse.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { tableLines, terminalWidth } from '../util/display.ts';
import { inert } from '../util/inert.ts';
import { wrap } from '../util/wrap.ts';
import { VERIFIED_DATASETS } from '../verify/identities.ts';
import type { CommandBody } from './command-body.ts';
import { metricsFor, staleAfterOption } from './metrics-options.ts';
import { TerminalProgress } from './progress.ts';
import { StopRequests } from './stop.ts';
import { summary } from './summary.ts';
import { type CommonArgs, commonOptions, logFor, requireKey, resolveRequest } from './write-options.ts';

interface Args extends CommonArgs {
  'dry-run': boolean;
  'by-chain': boolean;
  'metrics-file'?: string;
  'stale-after': string;
}

/**
 * Prints the plan, writing nothing: the cursors come from an existing warehouse opened read-only, or are the start of
 * history where there is none.
 */
async function dryRun(config: Config, tasks: readonly Task[]): Promise<void> {
  const dir = config.dataDir;
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UsageError(`the data folder ${dir} is a file; choose another with --data-dir or POOL_EXPORT_DATA_DIR`);
  const exists = existsSync(dataFolder(dir).warehouse);
  const warehouse = exists ? await Warehouse.open(dir, { readOnly: true }) : undefined;
  try {
    const cps = warehouse && new CheckpointStore(warehouse);
    process.stdout.write(
      `plan: ${tasks.length} tasks, data folder ${dir}${exists ? '' : ' (nothing exported there yet)'}\n`,
    );
    process.stdout.write(
      `DuckDB memory limit: ${config.duckdbMemoryLimit || 'none'} (${config.duckdbMemoryLimitFrom}; duckdbMemoryLimit in the config file sets it)\n`,
    );
    if (!config.apiKey && tasks.some((t) => subgraphOf(t.ds.schema) === undefined))
      process.stdout.write(
        'no API key is set: DODO\'s tasks need POOL_EXPORT_API_KEY (or "apiKey" in the config file)\n',
      );
    const plan: string[][] = [];
    for (const t of tasks) {
      const cp = await cps?.get(t.chainId, t.ds.name).catch(() => undefined);
      const cursor = `cursor ${cp ? inert(cp.cursor) : '(start of history)'}`;
      plan.push([t.ds.name, chainName(t.chainId), t.ds.kind, t.endpoint.label, cursor]);
    }
    // A table as every table of the command line is laid out (`util/display.ts`), with no header: a line per task.
    const [first, ...rest] = plan;
    if (first) for (const line of tableLines(first, rest, { right: [] })) process.stdout.write(`${line}\n`);
  } finally {
    await warehouse?.close();
  }
}

/**
 * What a run verified when it checked nothing against the upstream's counters: none of its datasets has them (a
 * subgraph's), or none of those that have them read anything new.
 */
function unverified(results: readonly { readonly task: Task }[]): string {
  return results.some((r) => VERIFIED_DATASETS.has(r.task.ds.name))
    ? "nothing verified against the upstream's counters: no dataset that has them read anything new"
    : "not verified: the upstream keeps no counters of these datasets; `pool-export verify` compares their row ids with the deployment's";
}

/** The yargs module of the `run` command. */
export const runCommand = (jobs: readonly Job[]): CommandBody<Args> => ({
  builder: (y) =>
    staleAfterOption(
      commonOptions(y)
        .option('dry-run', {
          type: 'boolean',
          default: false,
          describe: 'print the plan (tasks, endpoints, cursors) and exit, writing nothing',
        })
        .option('by-chain', {
          type: 'boolean',
          default: false,
          describe: 'summary: one line per dataset and chain (default: one per dataset, summed over its chains)',
        })
        .option('metrics-file', {
          type: 'string',
          describe:
            "write the run's metrics to this file for node-exporter's textfile collector (*.prom); counters add up over runs",
        }),
    ),
  handler: async (a) => {
    const { config, jobs: selected, tasks } = resolveRequest(a, jobs);
    if (!tasks.length) {
      // Every subgraph of the folder is set aside: nothing runs, and each says why.
      for (const s of setAsideSubgraphs())
        process.stdout.write(`FAILED ${asideSubject(s)} was set aside, not exported: ${inert(s.error)}\n`);
      process.exitCode = 1;
      return;
    }
    if (a['dry-run']) return dryRun(config, tasks);
    requireKey(config, tasks);
    const metricsFile = a['metrics-file'] === undefined ? undefined : checkMetricsFile(a['metrics-file']);
    const metrics = metricsFile && metricsFor(config, a['stale-after'], { processMetrics: false });
    const progress = process.stderr.isTTY ? new TerminalProgress() : undefined;
    const log = logFor(a, config, progress);
    const stop = new StopRequests((sig) =>
      log(
        'stop-requested',
        {
          signal: sig,
          next: 'the requests and the transaction under way are cancelled (committed batches stay), the lake is left to the next run; a second signal ends the run at once',
        },
        'warn',
      ),
    );
    const job = selected.map((j) => j.name).join(',') || 'datasets';
    const started = performance.now();
    /** The metrics file, written whatever the run came to (a failure to write it is logged, never the run's). */
    const record = async (r: RunRecord) => {
      if (!metrics || !metricsFile) return;
      metrics.recordRun(job, r, (performance.now() - started) / 1000);
      await writeMetricsFile(metricsFile, metrics).catch((e: Error) =>
        log('metrics-file-failed', { file: metricsFile, error: e.message }, 'error'),
      );
    };
    let outcome: RunOutcome;
    try {
      outcome = await runOnce({
        config,
        tasks,
        jobs: selected.map((j) => j.name),
        waitLockSecs: a['wait-lock'],
        verify: a.verify,
        signal: stop.signal,
        log,
        ...(progress ? { progress } : {}),
        ...(metrics ? { onClient: (c: UpstreamClient) => metrics.watch(c) } : {}),
        // A plain run publishes a bucket lake every time, unless `lake.publishEvery` says otherwise.
        ...(config.lake.publishEverySecs ? { publishEverySecs: config.lake.publishEverySecs } : {}),
      });
    } catch (e) {
      await record(e instanceof DataLockedError ? { skipped: true } : { error: e });
      // Stopped before the export began (waiting on the bucket's first answer): nothing was written; the process ends
      // by the signal, as a run stopped later does.
      if (e instanceof StopRequested && stop.signal.aborted) {
        process.stdout.write('stopped on request before the export began: nothing was written\n');
        stop.end();
        return;
      }
      throw e;
    }
    await record({ outcome });
    // On a terminal (or with COLUMNS set, as `make demo` sets it for the runs it shows), the summary's prose is wrapped.
    const { width } = terminalWidth();
    const say = (line: string) => process.stdout.write(`${width ? wrap(line, { width, indent: 2 }) : line}\n`);
    process.stdout.write(`${summary(outcome.results, { byChain: a['by-chain'], ...(width ? { width } : {}) })}\n`);
    if (outcome.stopped) {
      const left = tasks.length - outcome.results.length;
      say(
        `stopped on request${left ? ` (${left} of ${tasks.length} tasks not started)` : ''}: committed batches are kept; the next run resumes from them, and writes to the Parquet lake what it lacks`,
      );
    }
    if (outcome.lakeError) say(`FAILED ${inert(outcome.lakeError)}`);
    const v = outcome.verification;
    const failed = outcome.results.filter((r) => r.status === 'failed').length;
    if (!v && a.verify && !outcome.stopped && failed > 0 && failed === outcome.results.length)
      say(`verification skipped: every task of this run failed (${failed}), so it stored nothing to verify`);
    if (v)
      say(
        v.chains === 0
          ? unverified(outcome.results)
          : v.gaps
            ? `GAPS: ${v.gaps} groups of the days this run touched differ from the upstream's counters (${v.requests} requests); \`pool-export verify\` names them, \`pool-export verify --repair\` re-reads them`
            : `verified against the upstream's counters: ${v.groups} groups of the days this run touched, no gaps (${v.requests} requests)${v.errors ? `; ${v.errors} identities could not be checked (see the log)` : ''}`,
      );
    // A plain run takes every subgraph of the folder: one set aside was not exported, and says why.
    const aside = a.subgraphs || a.jobs || a.datasets ? [] : setAsideSubgraphs();
    for (const s of aside) say(`FAILED ${asideSubject(s)} was set aside, not exported: ${inert(s.error)}`);
    if (outcome.stopped || outcome.lakeError || aside.length || outcome.results.some((r) => r.status === 'failed'))
      process.exitCode = 1;
    // Stopped by a signal: the process ends by it (130 or 143 as a shell reports it), whatever else happened.
    stop.end();
  },
});
