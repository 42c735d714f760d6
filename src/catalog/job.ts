/**
 * A job: datasets exported together on one cron schedule. The jobs themselves are declared in `jobs/` at the root of
 * the repository, which imports this type; the command line receives them from its entry point (`bin/`), so the
 * machinery under `src/` never imports `jobs/`.
 */
import { UsageError } from '../errors.ts';

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

/** The jobs of `all` named in a comma list, or all of them. */
export function selectJobs(all: readonly Job[], names: readonly string[] | undefined): Job[] {
  if (!names?.length) return [...all];
  return names.map((n) => {
    const j = all.find((x) => x.name === n);
    if (!j) throw new UsageError(`unknown job "${n}"; jobs: ${all.map((x) => x.name).join(', ')}`);
    return j;
  });
}
