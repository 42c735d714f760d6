/** The `pool-export` command line. Exit codes: 0 success, 1 runtime failure, 2 bad usage. */
import { readFileSync } from 'node:fs';
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { Job } from '../catalog/job.ts';
import { EXIT_USAGE, exitCodeOf } from '../errors.ts';
import { inert } from '../util/inert.ts';
import { commandModules } from './commands.ts';
import { followLauncher } from './launcher.ts';

/** This package's version (package.json is two folders up from the sources and from the bundle alike). */
const VERSION: string = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).version;

/**
 * Runs the command line with the jobs declared in `jobs/`, which `jobs` imports (passed in by the entry point,
 * `bin/main.ts`, so that nothing under `src/` imports `jobs/`; a function, so that only the commands that use the jobs
 * load them and the catalog they are made of).
 */
export async function main(jobs: () => Promise<readonly Job[]>): Promise<void> {
  // Under npx, a signal to npx must still stop the tool (see launcher.ts).
  followLauncher();

  // A reader that goes away (`pool-export status | head`) is not an error.
  process.stdout.on('error', (e: NodeJS.ErrnoException) => {
    if (e.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw e;
  });

  const argv = hideBin(process.argv);
  // Named here: yargs looks for a package.json above the current folder, which is the user's, not this one.
  let cli = yargs(argv).scriptName('pool-export').version(VERSION);
  for (const m of await commandModules(argv, jobs)) cli = cli.command(m);
  await cli
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
