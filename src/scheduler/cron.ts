/** Cron expressions: validated with node-cron, with an error that names the job, the field and the fix. */
import cron from 'node-cron';
import { UsageError } from '../errors.ts';

/** Checks a cron expression; the error lists what is wrong per field. */
export function checkCron(job: string, expr: string): void {
  const v = cron.validateDetailed(expr);
  if (v.valid) return;
  const why = v.errors.map((e) => `${e.field}${e.value !== undefined ? ` "${e.value}"` : ''}: ${e.message}`).join('; ');
  throw new UsageError(
    `invalid cron expression "${expr}" for job ${job}: ${why || 'not a cron expression'}. ` +
      'Use five fields (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *", or six with seconds first',
  );
}

/** Parses repeated `--schedule job=expr` options. */
export function parseScheduleOverrides(values: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf('=');
    if (at <= 0) throw new UsageError(`--schedule takes job=cron, e.g. --schedule events='*/5 * * * *', not "${v}"`);
    out[v.slice(0, at).trim()] = v.slice(at + 1).trim();
  }
  return out;
}
