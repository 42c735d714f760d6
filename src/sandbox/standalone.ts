/**
 * The sandbox alone, without the exporter (no DuckDB): the entry point bundled into the container image,
 * with the same flags as `pool-export sandbox`.
 */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import { UsageError } from '../config/chains.ts';
import { sandboxCommand } from '../cli/sandbox-command.ts';

await yargs(hideBin(process.argv))
  .scriptName('pool-export-sandbox')
  .command({ ...sandboxCommand, command: '$0' })
  .strict()
  .help()
  .fail((msg, err) => {
    process.stderr.write(`pool-export-sandbox: ${err?.message ?? msg}\n`);
    process.exit(err && !(err instanceof UsageError) && err.name !== 'YError' ? 1 : 2);
  })
  .parseAsync();
