/** The `pool-export` command line. Exit codes: 0 success, 1 runtime failure, 2 bad usage. */
import yargs from 'yargs';
import { hideBin } from 'yargs/helpers';
import type { Job } from '../catalog/job.ts';
import { EXIT_USAGE, exitCodeOf } from '../errors.ts';
import { inert } from '../util/inert.ts';
import { closest } from '../util/suggest.ts';
import { COMMANDS, commandModules } from './commands.ts';
import { followLauncher } from './launcher.ts';
import { VERSION } from './version.ts';

/**
 * The message for a command line whose first word names no command (`reprot --list`), with the command it most likely
 * meant; undefined when the first word is a command or an option.
 */
export function unknownCommand(argv: readonly string[]): string | undefined {
  const first = argv[0];
  if (first === undefined || first.startsWith('-')) return undefined;
  const names = COMMANDS.map((c) => c.command.split(' ')[0]!);
  if (names.includes(first)) return undefined;
  const near = closest(first, names);
  return `unknown command "${inert(first)}"${near ? `; did you mean ${near}?` : ''} (commands: ${names.join(', ')})`;
}

/** For yargs' "Unknown argument(s): a, b": the known option each one most likely meant, as a hint ("" if none). */
export function suggestOptions(msg: string, known: readonly string[]): string {
  const m = /^Unknown arguments?: (.+)$/.exec(msg);
  if (!m) return '';
  // The options as a user types them: no one-letter aliases, no camelCase twins of kebab-case names.
  const names = known.filter((k) => k.length > 1 && k === k.toLowerCase());
  const hints = unknownArguments(msg).flatMap((arg) => {
    const near = closest(arg, names);
    return near ? [`--${inert(arg)}: did you mean --${near}?`] : [];
  });
  return hints.length ? `; ${hints.join('; ')}` : '';
}

/**
 * The arguments of yargs' "Unknown argument(s): a, b", each once: yargs names an option both as typed and as its
 * camelCase twin (`dry-runn, dryRunn`).
 */
function unknownArguments(msg: string): string[] {
  const args = /^Unknown arguments?: (.+)$/.exec(msg)?.[1]?.split(', ') ?? [];
  const kebab = (a: string) => a.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
  return args.filter((a) => a === kebab(a) || !args.includes(kebab(a)));
}

/**
 * yargs' message in one line: each unknown argument named once; a value that is not one of its choices (yargs' "Invalid
 * values:" and a line per argument) with the choices and the one it most likely meant.
 */
export function usageMessage(msg: string): string {
  const args = unknownArguments(msg);
  if (args.length) return `Unknown argument${args.length > 1 ? 's' : ''}: ${args.join(', ')}`;
  const invalid = [...msg.matchAll(/Argument: ([\w-]+), Given: "((?:[^"\\]|\\.)*)", Choices: (.+)/g)];
  if (!invalid.length) return msg.replace(/\s*\n\s*/g, ' ');
  return invalid
    .map(([, arg, given, list]) => {
      const choices = [...list!.matchAll(/"([^"]*)"/g)].map((c) => c[1]!);
      const near = closest(given!, choices);
      return `${arg} "${given}" is not one of ${choices.join(', ')}${near ? `; did you mean ${near}?` : ''}`;
    })
    .join('; ');
}

/**
 * The options the failing command knows, read from its help (yargs hands `fail` an object that can show the help but
 * not list the options).
 */
function optionNames(y: { showHelp: (print: (text: string) => void) => unknown }): string[] {
  let help = '';
  y.showHelp((text) => {
    help = text;
  });
  return [...help.matchAll(/^\s+(?:-\w, )?--([\w-]+)/gm)].map((m) => m[1]!);
}

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
      const line = unknownCommand(argv) ?? `${inert(usageMessage(msg))}${suggestOptions(msg, optionNames(y as never))}`;
      process.stderr.write(`${y.help() && ''}pool-export: ${line}\nRun \`pool-export --help\` for usage.\n`);
      process.exit(EXIT_USAGE);
    })
    .parseAsync();
}
