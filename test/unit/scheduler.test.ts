/**
 * The scheduler's queue, driven in-process with node-cron's real timers set far in the future (1 January), so that
 * only the runs it is asked for happen; every wait is on an event of the runs themselves, never on a clock.
 */
import { describe, expect, it } from 'vitest';
import type { Job } from '../../src/catalog/job.ts';
import { selectJobs } from '../../src/catalog/job.ts';
import { UsageError } from '../../src/errors.ts';
import { checkCron, parseScheduleOverrides } from '../../src/scheduler/cron.ts';
import { Scheduler } from '../../src/scheduler/scheduler.ts';

const FAR = '0 0 1 1 *';
const job = (name: string): Job => ({ name, schedule: FAR, description: name, datasets: [] });
const A = job('a');
const B = job('b');

/** A promise and its resolver. */
function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

/** Records the log; `seen(event)` resolves when that event is logged. */
function recorder() {
  const lines: { event: string; fields: Record<string, unknown>; level: string }[] = [];
  const waiters: { event: string; done: () => void }[] = [];
  return {
    lines,
    log: (event: string, fields: Record<string, unknown>, level = 'info') => {
      lines.push({ event, fields, level });
      for (const w of waiters.filter((x) => x.event === event)) w.done();
    },
    seen: (event: string) =>
      new Promise<void>((done) => {
        if (lines.some((l) => l.event === event)) done();
        else waiters.push({ event, done });
      }),
  };
}

const tick = (s: Scheduler, j: Job) => (s as unknown as { tick(j: Job): void }).tick(j);

describe('the scheduler', () => {
  it('refuses a bad cron expression before starting, naming the job, the field and the fix', () => {
    const rec = recorder();
    expect(() => new Scheduler([{ job: A, schedule: '61 * * * *' }], async () => {}, rec.log)).toThrow(UsageError);
    expect(() => checkCron('events', '61 * * * *')).toThrow(
      /invalid cron expression "61 \* \* \* \*" for job events: .*minute.*"61".*Use five fields/,
    );
    expect(() => checkCron('events', 'every minute')).toThrow(/for job events: .+\. Use five fields/);
    expect(() => checkCron('events', '*/5 * * * *')).not.toThrow();
    expect(() => checkCron('events', '*/30 */5 * * * *')).not.toThrow();
  });

  it('logs each job with its next run, runs every job once with runNow, one at a time in order', async () => {
    const rec = recorder();
    const order: string[] = [];
    let running = 0;
    let most = 0;
    const allDone = gate();
    const s = new Scheduler(
      [
        { job: A, schedule: FAR },
        { job: B, schedule: '0 0 2 1 *' },
      ],
      async (j) => {
        running++;
        most = Math.max(most, running);
        order.push(`start ${j.name}`);
        await Promise.resolve();
        order.push(`end ${j.name}`);
        running--;
        if (j === B) allDone.open();
      },
      rec.log,
    );
    s.start(true);
    await allDone.promise;
    await s.stop();
    expect(order).toEqual(['start a', 'end a', 'start b', 'end b']);
    expect(most).toBe(1);
    const scheduled = rec.lines.filter((l) => l.event === 'scheduled');
    expect(scheduled.map((l) => [l.fields.job, l.fields.schedule])).toEqual([
      ['a', FAR],
      ['b', '0 0 2 1 *'],
    ]);
    for (const l of scheduled) {
      const next = new Date(String(l.fields.next));
      expect(next.getTime()).toBeGreaterThan(Date.now());
      expect(next.getMinutes()).toBe(0);
      expect(next.getMonth()).toBe(0);
    }
  });

  it('without runNow runs nothing until a tick; a tick of a job waiting or running is skipped with the reason', async () => {
    const rec = recorder();
    const release = gate();
    const started = gate();
    const bRan = gate();
    const runs: string[] = [];
    const s = new Scheduler(
      [
        { job: A, schedule: FAR },
        { job: B, schedule: FAR },
      ],
      async (j) => {
        runs.push(j.name);
        if (j === B) bRan.open();
        if (j === A) {
          started.open();
          await release.promise;
        }
      },
      rec.log,
    );
    s.start(false);
    await Promise.resolve();
    expect(runs).toEqual([]);
    tick(s, A);
    tick(s, A); // still waiting: the queue has not reached it yet
    await started.promise;
    tick(s, A); // running now
    tick(s, B); // waits behind a
    tick(s, B);
    const skipped = rec.lines.filter((l) => l.event === 'skipped');
    expect(skipped.map((l) => [l.fields.job, l.fields.reason, l.level])).toEqual([
      ['a', 'a run of this job is already waiting', 'warn'],
      ['a', 'the previous run of this job is still running', 'warn'],
      ['b', 'a run of this job is already waiting', 'warn'],
    ]);
    release.open();
    await bRan.promise;
    expect(runs).toEqual(['a', 'b']);
    // After a run ends, the same job may queue again.
    tick(s, A);
    await s.stop();
    expect(runs.filter((r) => r === 'a').length).toBeGreaterThanOrEqual(1);
  });

  it('a run that throws is logged as run-error and the queue goes on', async () => {
    const rec = recorder();
    const bRan = gate();
    const s = new Scheduler(
      [
        { job: A, schedule: FAR },
        { job: B, schedule: FAR },
      ],
      async (j) => {
        if (j === A) throw new Error('the upstream is down');
        bRan.open();
      },
      rec.log,
    );
    s.start(true);
    await bRan.promise;
    await s.stop();
    expect(rec.lines.filter((l) => l.event === 'run-error')).toEqual([
      { event: 'run-error', fields: { job: 'a', error: 'the upstream is down' }, level: 'error' },
    ]);
  });

  it('stop aborts the running job, waits for it, drops the queue, and ignores later ticks', async () => {
    const rec = recorder();
    const started = gate();
    const runs: string[] = [];
    let sawAbort = false;
    const s = new Scheduler(
      [
        { job: A, schedule: FAR },
        { job: B, schedule: FAR },
      ],
      async (j, signal) => {
        runs.push(j.name);
        started.open();
        await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
        sawAbort = signal.aborted;
      },
      rec.log,
    );
    s.start(true);
    await started.promise;
    await s.stop();
    expect(sawAbort).toBe(true);
    expect(runs).toEqual(['a']);
    tick(s, B);
    await Promise.resolve();
    expect(runs).toEqual(['a']);
    expect(rec.lines.filter((l) => l.event === 'skipped')).toEqual([]);
  });
});

describe('schedule options and job selection', () => {
  it('parses job=cron overrides, trimmed, and refuses one without a job name', () => {
    expect(parseScheduleOverrides(['events=*/5 * * * *', ' state = 0 * * * * '])).toEqual({
      events: '*/5 * * * *',
      state: '0 * * * *',
    });
    expect(parseScheduleOverrides([])).toEqual({});
    expect(() => parseScheduleOverrides(['=* * * * *'])).toThrow(/--schedule takes job=cron.*not "=\* \* \* \* \*"/);
    expect(() => parseScheduleOverrides(['events'])).toThrow(UsageError);
  });

  it('selects jobs by name in the order asked, all when none is named, and names the valid ones otherwise', () => {
    expect(selectJobs([A, B], undefined)).toEqual([A, B]);
    expect(selectJobs([A, B], [])).toEqual([A, B]);
    expect(selectJobs([A, B], ['b', 'a'])).toEqual([B, A]);
    expect(() => selectJobs([A, B], ['c'])).toThrow('unknown job "c"; jobs: a, b');
  });
});
