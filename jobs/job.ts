/** A job: datasets exported together on one cron schedule. */
export interface Job {
  /** Name used by `--jobs`. */
  readonly name: string;
  /** Five-field cron expression (node-cron syntax; a sixth leading field for seconds is allowed). */
  readonly schedule: string;
  /** One line for `--help` and the README. */
  readonly description: string;
  /** Dataset names (see `pool-export datasets`). */
  readonly datasets: readonly string[];
}
