/** The `pool-export` command line. Exit codes: 0 success, 1 runtime failure, 2 bad usage. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { Job } from '../catalog/job.ts';
import { EXIT_USAGE, exitCodeOf } from '../errors.ts';
import { sandboxCommand } from '../sandbox/command.ts';
import { inert } from '../util/display.ts';
import { compactCommand } from './compact-command.ts';
import { dashboardCommand } from './dashboard-command.ts';
import { datasetsCommand, jobsCommand } from './datasets-command.ts';
import { followLauncher } from './launcher.ts';
import { migrateCommand } from './migrate-command.ts';
import { queryCommand, reportCommand } from './report-command.ts';
import { runCommand } from './run-command.ts';
import { scheduleCommand } from './schedule-command.ts';
import { schemaCommand } from './schema-command.ts';
import { shellCommand } from './shell-command.ts';
import { statusCommand } from './status-command.ts';

/**
 * Runs the command line with the jobs declared in `jobs/` (passed in by the entry point, `bin/pool-export.js`, so that
 * nothing under `src/` imports `jobs/`).
 */
export async function main(jobs: readonly Job[]): Promise<void> {
  // Under npx, a signal to npx must still stop the tool (see launcher.ts).
  followLauncher();

  // A reader that goes away (`pool-export status | head`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });

  await yargs(hideBin(process.argv))
    .scriptName('pool-export')
    .command(runCommand(jobs))
    .command(scheduleCommand(jobs))
    .command(statusCommand)
    .command(reportCommand)
    .command(queryCommand)
    .command(shellCommand)
    .command(dashboardCommand)
    .command(compactCommand)
    .command(migrateCommand)
    .command(datasetsCommand)
    .command(jobsCommand(jobs))
    .command(schemaCommand)
    .command(sandboxCommand)
    .demandCommand(1, 'Name a command; `pool-export --help` lists them.')
    .strict()
    .help()
    .fail((msg, err, y) => {
      if (err) {
        process.stderr.write(`pool-export: ${inert(err.message)}\n`);
        process.exit(exitCodeOf(err));
      }
      process.stderr.write(`${y.help() && ''}pool-export: ${inert(msg)}\nRun \`pool-export --help\` for usage.\n`);
      process.exit(EXIT_USAGE);
    })
    .parseAsync();
}
