/**
 * The commands of `pool-export`: each one's usage, its line in `pool-export --help`, and where its code is. A command's
 * module (its options, its handler and everything they import: DuckDB, the upstream client, the sandbox) is loaded
 * only when the command line names it, so `--version`, `--help` and a command that needs little start at once.
 */
import type { CommandModule } from 'yargs';
import type { Job } from '../catalog/job.ts';
import { EXIT_GAPS, EXIT_STALE } from '../errors.ts';
import type { CommandBody } from './command-body.ts';

export interface CommandEntry {
  /** Its usage as yargs reads it: the name, then positional arguments. */
  command: string;
  describe: string;
  /** Imports its module (and the jobs, for the commands that take them). */
  load: (jobs: () => Promise<readonly Job[]>) => Promise<CommandBody>;
}

/** Every command, in the order `pool-export --help` lists them. */
export const COMMANDS: readonly CommandEntry[] = [
  {
    command: 'run',
    describe: 'Export the selected jobs once: every task from its checkpoint to the current block',
    load: async (jobs) => (await import('./run-command.ts')).runCommand(await jobs()),
  },
  {
    command: 'schedule',
    describe: 'Run each job on its cron schedule until stopped (SIGINT/SIGTERM stop gracefully)',
    load: async (jobs) => (await import('./schedule-command.ts')).scheduleCommand(await jobs()),
  },
  {
    command: 'status',
    describe: `Report per dataset and chain: last success, rows, lag behind the upstream, last error, last verification (exit ${EXIT_STALE} when stale, ${EXIT_GAPS} when it found gaps); answers during a run`,
    load: async () => (await import('./status-command.ts')).statusCommand,
  },
  {
    command: 'verify',
    describe: `Prove the stored rows complete against the upstream's own counters, at the blocks they were read at (exit ${EXIT_GAPS} when rows are missing); --repair re-reads what is missing`,
    load: async () => (await import('./verify-command.ts')).verifyCommand,
  },
  {
    command: 'report [name]',
    describe:
      'Print a report (TVL, volume, APY, top and new pools, positions, crowd pools, smart route); --list lists them',
    load: async () => (await import('./report-command.ts')).reportCommand,
  },
  {
    command: 'query [sql]',
    describe: 'Run a read-only SQL query over the lake (tables dodoex.*, token.*, mine.*, list.*, reports.*)',
    load: async () => (await import('./report-command.ts')).queryCommand,
  },
  {
    command: 'shell',
    describe: 'An SQL prompt over the lake (read-only): tables as in query, .tables, .schema NAME, history',
    load: async () => (await import('./shell-command.ts')).shellCommand,
  },
  {
    command: 'dashboard',
    describe: 'Write TVL, volume, APY and freshness as charts in one HTML file that opens offline',
    load: async () => (await import('./dashboard-command.ts')).dashboardCommand,
  },
  {
    command: 'compact',
    describe:
      'Rewrite each month of the Parquet lake whose files are more than its rows need (runs keep months compact), and a warehouse file an earlier version made in larger blocks',
    load: async () => (await import('./compact-command.ts')).compactCommand,
  },
  {
    command: 'reset <datasets..>',
    describe:
      'Empty datasets (warehouse rows, checkpoints, lake files and objects) so that the next run reads them whole; --chains narrows it, --yes does it (without, it says what it would remove)',
    load: async () => (await import('./reset-command.ts')).resetCommand,
  },
  {
    command: 'restore',
    describe:
      "Rebuild the data folder's warehouse from its bucket lake (lake.url): the lake's objects and the state the last run published",
    load: async () => (await import('./restore-command.ts')).restoreCommand,
  },
  {
    command: 'lake <action>',
    describe:
      "lake ddl --engine duckdb|trino|spark|athena: print the CREATE statements that make the lake's tables that engine's, at the lake's URL",
    load: async () => (await import('./lake-command.ts')).lakeCommand,
  },
  {
    command: 'migrate',
    describe:
      "Upgrade a warehouse and a lake written by an earlier version to this version's schema and lake layout (any run does this too)",
    load: async () => (await import('./migrate-command.ts')).migrateCommand,
  },
  {
    command: 'datasets',
    describe: 'List every dataset: cursor kind, keyset field, upstream entity',
    load: async () => (await import('./datasets-command.ts')).datasetsCommand,
  },
  {
    command: 'jobs',
    describe: 'List the jobs: schedule, description, datasets',
    load: async (jobs) => (await import('./datasets-command.ts')).jobsCommand(await jobs()),
  },
  {
    command: 'schema <action>',
    describe:
      "schema check: compare the catalog with each upstream's introspected schema and print the drift (exit 1 on breaking drift)",
    load: async () => (await import('./schema-command.ts')).schemaCommand,
  },
  {
    command: 'subgraph <action> [name]',
    describe:
      "subgraph add NAME --chain C --url URL [--schema FILE]: export a subgraph of any schema beside DODO's; subgraph list; subgraph remove NAME; subgraph refresh NAME [--schema FILE]: take the schema its endpoint serves now",
    load: async () => (await import('./subgraph-command.ts')).subgraphCommand,
  },
  {
    command: 'sandbox',
    describe: 'Serve a local stand-in for the upstream service (liquidity list, subgraphs, gateway)',
    // Its module sits below the command line (src/sandbox), so it spells the type out, which TypeScript then cannot
    // match to `any` arguments.
    load: async () => (await import('../sandbox/command.ts')).sandboxCommand as CommandBody,
  },
];

/** A command's name: the first word of its usage. */
const nameOf = (e: CommandEntry) => e.command.split(' ')[0]!;

/**
 * The yargs modules of every command: the ones `argv` names, loaded in full, and the others as their usage and
 * description only, which is all `--help` shows of them and all yargs needs to tell a command from a typo. Every word
 * of `argv` that is a command's name loads that command (an option's value that happens to be one costs a load, never
 * a wrong parse).
 */
export async function commandModules(
  argv: readonly string[],
  jobs: () => Promise<readonly Job[]>,
): Promise<CommandModule[]> {
  const words = new Set(argv.filter((w) => !w.startsWith('-')));
  return Promise.all(
    COMMANDS.map(async (e): Promise<CommandModule> => {
      const head = { command: e.command, describe: e.describe };
      if (words.has(nameOf(e))) return { ...(await e.load(jobs)), ...head } as CommandModule;
      return {
        ...head,
        handler: () => {
          throw new Error(`the ${nameOf(e)} command ran without its module; this is a bug in pool-export`);
        },
      };
    }),
  );
}
