/**
 * The sandbox alone, without the exporter (no DuckDB): the entry point bundled into the container image,
 * with the same flags as `pool-export sandbox`.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { EXIT_USAGE, exitCodeOf } from '../errors.ts';
import { sandboxCommand } from './command.ts';

await yargs(hideBin(process.argv))
  .scriptName('pool-export-sandbox')
  .command({ ...sandboxCommand, command: '$0' })
  .strict()
  .help()
  .fail((msg, err) => {
    process.stderr.write(`pool-export-sandbox: ${err?.message ?? msg}\n`);
    process.exit(err ? exitCodeOf(err) : EXIT_USAGE);
  })
  .parseAsync();
