/**
 * `pool-export schedule`: runs each job on its cron schedule, or every few seconds with `--every`, until SIGINT or
 * SIGTERM. It parses its flags and calls the service (`service/schedule-service.ts`), which wires the rest.
 */

import type { Job } from '../catalog/job.ts';
import { asideSubject, setAsideSubgraphs } from '../catalog/subgraphs.ts';
import { UsageError } from '../errors.ts';
import { buildPlan } from '../export/routing/plan.ts';
import { parseScheduleOverrides } from '../scheduler/cron.ts';
import { serveSchedule } from '../service/schedule-service.ts';
import { inert } from '../util/inert.ts';
import type { CommandBody } from './command-body.ts';
import { checkDashboardOut } from './dashboard-command.ts';
import { metricsFor, parsePort, staleAfterOption } from './metrics-options.ts';
import { parseDuration } from './options.ts';
import { summary } from './summary.ts';
import { type CommonArgs, commonOptions, logFor, requireKey, resolveRequest } from './write-options.ts';

interface Args extends CommonArgs {
  schedule?: string[];
  every?: string;
  'run-now': boolean;
  dashboard?: string;
  'metrics-port'?: number;
  'metrics-host': string;
  'metrics-head-every': string;
  'stale-after': string;
}

/** The yargs module of the `schedule` command. */
export const scheduleCommand = (all: readonly Job[]): CommandBody<Args> => ({
  builder: (y) =>
    staleAfterOption(
      commonOptions(y)
        .option('schedule', {
          type: 'string',
          array: true,
          describe: "override a job's schedule: --schedule events='*/2 * * * *' (repeatable)",
        })
        .option('every', {
          type: 'string',
          describe:
            "run every selected job this often (e.g. 10s, 1m) instead of on its cron, each only once a head of its routes moved (the liquidity list, which has no block, every time); --schedule still sets a job's own",
        })
        .option('run-now', { type: 'boolean', default: false, describe: 'also run every job once at start' })
        .option('dashboard', {
          type: 'string',
          describe: 'renew this HTML dashboard after each successful run (see `pool-export dashboard`)',
        })
        .option('metrics-port', {
          type: 'number',
          describe: 'serve /metrics (Prometheus), /healthz and /readyz on this port (0: any free port, printed)',
        })
        .option('metrics-host', {
          type: 'string',
          default: '127.0.0.1',
          describe: 'the address --metrics-port listens on (0.0.0.0 in a container, for probes and scrapes)',
        })
        .option('metrics-head-every', {
          type: 'string',
          default: '60s',
          describe:
            "with --metrics-port: how often the upstream's head is read (one request per route) for the lag and /readyz",
        }),
    ),
  handler: async (a) => {
    const { config, jobs, chains, datasets, tasks } = resolveRequest(a, all);
    // A subgraph set aside is not scheduled: said once, at the start (every run would say it again).
    for (const s of setAsideSubgraphs())
      process.stderr.write(`${asideSubject(s)} is set aside, not scheduled: ${inert(s.error)}\n`);
    if (!tasks.length) {
      process.exitCode = 1;
      return;
    }
    requireKey(config, tasks);
    const overrides = parseScheduleOverrides(a.schedule ?? []);
    for (const name of Object.keys(overrides))
      if (!jobs.some((j) => j.name === name))
        throw new UsageError(
          `--schedule names job "${name}", which is not among the selected jobs (${jobs.map((j) => j.name).join(', ')})`,
        );
    const dashboard = a.dashboard === undefined ? undefined : checkDashboardOut(a.dashboard, '--dashboard');
    const port = a['metrics-port'] === undefined ? undefined : parsePort(a['metrics-port'], '--metrics-port');
    const headEveryMs = parseDuration(a['metrics-head-every'], '--metrics-head-every') * 1000;
    const everySecs = a.every === undefined ? undefined : parseDuration(a.every, '--every');
    if (everySecs !== undefined && everySecs < 1)
      throw new UsageError(`--every must be at least 1s (a run every second at most), not "${a.every}"`);
    await serveSchedule({
      config,
      jobs,
      plan: (js) => buildPlan(config, { jobs: js, ...(chains ? { chains } : {}), ...(datasets ? { datasets } : {}) }),
      overrides,
      everySecs,
      runNow: a['run-now'],
      waitLockSecs: Math.max(30, a['wait-lock']),
      verify: a.verify,
      ...(dashboard ? { dashboard: { file: dashboard, ...(chains ? { chains } : {}) } } : {}),
      ...(port === undefined
        ? {}
        : {
            metrics: {
              metrics: metricsFor(config, a['stale-after'], { processMetrics: true }),
              host: a['metrics-host'],
              port,
              headEveryMs,
            },
          }),
      log: logFor(a, config),
      summarize: (outcome) => summary(outcome.results).split('\n').slice(-2).join(' '),
    });
  },
});
