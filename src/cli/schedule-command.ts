/** `pool-export schedule`: runs each job on its cron schedule until SIGINT or SIGTERM. */

import type { Job } from '../catalog/job.ts';
import { trackedSettings } from '../config/config.ts';
import { DataLockedError, UsageError } from '../errors.ts';
import { buildPlan } from '../export/plan.ts';
import { type RunOutcome, runOnce } from '../pipeline/run.ts';
import { writeDashboard } from '../reports/dashboard.ts';
import { parseScheduleOverrides } from '../scheduler/cron.ts';
import { Scheduler } from '../scheduler/scheduler.ts';
import type { CommandBody } from './commands.ts';
import { checkDashboardOut } from './dashboard-command.ts';
import { summary } from './summary.ts';
import { type CommonArgs, commonOptions, logFor, resolveRequest } from './write-options.ts';

interface Args extends CommonArgs {
  schedule?: string[];
  'run-now': boolean;
  dashboard?: string;
}

/** The yargs module of the `schedule` command. */
export const scheduleCommand = (all: readonly Job[]): CommandBody<Args> => ({
  builder: (y) =>
    commonOptions(y)
      .option('schedule', {
        type: 'string',
        array: true,
        describe: "override a job's schedule: --schedule events='*/2 * * * *' (repeatable)",
      })
      .option('run-now', { type: 'boolean', default: false, describe: 'also run every job once at start' })
      .option('dashboard', {
        type: 'string',
        describe: 'renew this HTML dashboard after each successful run (see `pool-export dashboard`)',
      }),
  handler: async (a) => {
    const { config, jobs, chains, datasets } = resolveRequest(a, all);
    if (!config.apiKey) throw new UsageError('no API key: set POOL_EXPORT_API_KEY (or "apiKey" in the config file)');
    const overrides = parseScheduleOverrides(a.schedule ?? []);
    for (const name of Object.keys(overrides))
      if (!jobs.some((j) => j.name === name))
        throw new UsageError(
          `--schedule names job "${name}", which is not among the selected jobs (${jobs.map((j) => j.name).join(', ')})`,
        );
    const dashboard = a.dashboard === undefined ? undefined : checkDashboardOut(a.dashboard, '--dashboard');
    const log = logFor(a, config);
    /** Renews the dashboard after a run that ended well; a failure to is logged, and the next run tries again. */
    const renewDashboard = async (outcome: RunOutcome) => {
      if (!dashboard || outcome.stopped || outcome.lakeError || outcome.results.some((r) => r.status === 'failed'))
        return;
      try {
        const r = await writeDashboard(config.dataDir, dashboard, {
          tracked: trackedSettings(config),
          ...(chains ? { filter: { chains } } : {}),
        });
        log('dashboard-written', { file: r.file, bytes: r.bytes });
      } catch (e) {
        log('dashboard-failed', { file: dashboard, error: (e as Error).message }, 'error');
      }
    };
    const scheduler = new Scheduler(
      jobs.map((job) => ({ job, schedule: overrides[job.name] ?? job.schedule })),
      async (job, signal) => {
        const tasks = buildPlan(config, {
          jobs: [job],
          ...(chains ? { chains } : {}),
          ...(datasets ? { datasets } : {}),
        });
        try {
          const outcome = await runOnce({
            config,
            tasks,
            jobs: [job.name],
            waitLockSecs: Math.max(30, a['wait-lock']),
            verify: a.verify,
            signal,
            log,
          });
          log('job-summary', { job: job.name, summary: summary(outcome.results).split('\n').slice(-2).join(' ') });
          await renewDashboard(outcome);
        } catch (e) {
          if (e instanceof DataLockedError) log('skipped', { job: job.name, reason: e.message }, 'warn');
          else throw e;
        }
      },
      log,
    );
    scheduler.start(a['run-now']);
    process.stdout.write(
      `scheduler started: ${jobs.map((j) => `${j.name} (${overrides[j.name] ?? j.schedule})`).join(', ')}\n`,
    );
    await new Promise<void>((resolve) => {
      const stop = (sig: string) => {
        log('stopping', { signal: sig });
        void scheduler.stop().then(resolve);
      };
      process.once('SIGINT', () => stop('SIGINT'));
      process.once('SIGTERM', () => stop('SIGTERM'));
    });
    process.stdout.write('scheduler stopped\n');
  },
});
