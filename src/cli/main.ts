/** The `pool-export` command line. Exit codes: 0 success, 1 runtime failure, 2 bad usage. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { UsageError } from '../config/chains.ts';
import { inert } from '../util/display.ts';
import { followLauncher } from './launcher.ts';
import { compactCommand } from './compact-command.ts';
import { datasetsCommand, jobsCommand } from './datasets-command.ts';
import { migrateCommand } from './migrate-command.ts';
import { queryCommand, reportCommand } from './report-command.ts';
import { runCommand } from './run-command.ts';
import { sandboxCommand } from './sandbox-command.ts';
import { shellCommand } from './shell-command.ts';
import { scheduleCommand } from './schedule-command.ts';
import { schemaCommand } from './schema-command.ts';
import { statusCommand } from './status-command.ts';

/** Exit code for bad usage (unknown flag, invalid value). */
export const EXIT_USAGE = 2;

// Under npx, a signal to npx must still stop the tool (see launcher.ts).
followLauncher();

// A reader that goes away (`pool-export status | head`) is not an error.
process.stdout.on('error', (e: NodeJS.ErrnoException) => {
  if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
  throw e;
});

await yargs(hideBin(process.argv))
  .scriptName('pool-export')
  .command(runCommand)
  .command(scheduleCommand)
  .command(statusCommand)
  .command(reportCommand)
  .command(queryCommand)
  .command(shellCommand)
  .command(compactCommand)
  .command(migrateCommand)
  .command(datasetsCommand)
  .command(jobsCommand)
  .command(schemaCommand)
  .command(sandboxCommand)
  .demandCommand(1, 'Name a command; `pool-export --help` lists them.')
  .strict()
  .help()
  .fail((msg, err, y) => {
    if (err) {
      process.stderr.write(`pool-export: ${inert(err.message)}\n`);
      // yargs raises YError for a failed `check()`: bad usage, like unknown flags.
      process.exit(err instanceof UsageError || err.name === 'YError' ? EXIT_USAGE : 1);
    }
    process.stderr.write(`${y.help() && ''}pool-export: ${inert(msg)}\nRun \`pool-export --help\` for usage.\n`);
    process.exit(EXIT_USAGE);
  })
  .parseAsync();
