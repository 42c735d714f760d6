/**
 * Runs jobs on their cron schedules (node-cron). Runs happen one at a time in this process, and the data folder's lock
 * keeps other processes out. Missed-run policy: a tick that comes while the same job is running or waiting is skipped
 * (logged as `skipped`); ticks missed while the scheduler was down are not made up, since the next run exports
 * everything new since the last checkpoint anyway.
 */
import cron, { type ScheduledTask } from 'node-cron';
import type { Job } from '../catalog/job.ts';
import type { EventLog } from '../util/logger.ts';
import { checkCron } from './cron.ts';

/** Runs one job once; resolves when it is over (whatever its outcome). */
export type JobRunner = (job: Job, signal: AbortSignal) => Promise<void>;

/** When a job runs: on a cron expression, or every `everyMs` milliseconds (`schedule --every`). */
export type JobTiming =
  | { readonly job: Job; readonly schedule: string }
  | { readonly job: Job; readonly everyMs: number };

/** The scheduler of a set of jobs. */
export class Scheduler {
  private readonly tasks: ScheduledTask[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private readonly waiting: Job[] = [];
  private running: Job | undefined;
  private drained: Promise<void> = Promise.resolve();
  private readonly stopper = new AbortController();

  constructor(
    private readonly jobs: readonly JobTiming[],
    private readonly run: JobRunner,
    private readonly log: EventLog,
  ) {
    for (const j of jobs) if ('schedule' in j) checkCron(j.job.name, j.schedule);
  }

  /** Starts the cron timers and intervals; `runNow` also queues every job at once. */
  start(runNow: boolean): void {
    for (const j of this.jobs) {
      const { job } = j;
      if ('everyMs' in j) {
        this.timers.push(setInterval(() => this.tick(job), j.everyMs));
        const next = new Date(Date.now() + j.everyMs).toISOString();
        this.log('scheduled', { job: job.name, every: `${j.everyMs / 1000}s`, next });
        continue;
      }
      this.tasks.push(cron.schedule(j.schedule, () => this.tick(job), { name: job.name }));
      const next = this.tasks.at(-1)!.getNextRun()?.toISOString() ?? null;
      this.log('scheduled', { job: job.name, schedule: j.schedule, next });
    }
    if (runNow) for (const { job } of this.jobs) this.tick(job);
  }

  private tick(job: Job): void {
    if (this.stopper.signal.aborted) return;
    if (this.running === job || this.waiting.includes(job)) {
      this.log(
        'skipped',
        {
          job: job.name,
          reason:
            this.running === job
              ? 'the previous run of this job is still running'
              : 'a run of this job is already waiting',
        },
        'warn',
      );
      return;
    }
    this.waiting.push(job);
    this.drained = this.drained.then(() => this.next());
  }

  private async next(): Promise<void> {
    const job = this.waiting.shift();
    if (!job || this.stopper.signal.aborted) return;
    this.running = job;
    try {
      await this.run(job, this.stopper.signal);
    } catch (e) {
      this.log('run-error', { job: job.name, error: (e as Error).message }, 'error');
    } finally {
      this.running = undefined;
    }
  }

  /** Stops the timers, asks the current run to stop (its batch commits or rolls back), and waits for it. */
  async stop(): Promise<void> {
    for (const t of this.tasks) await t.destroy();
    for (const t of this.timers) clearInterval(t);
    this.waiting.length = 0;
    this.stopper.abort();
    await this.drained;
  }
}
