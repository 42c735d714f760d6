/** `pool-export report` and `pool-export query`: read the Parquet lake through DuckDB views, never locking the warehouse. */

import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Argv } from 'yargs';
import { chainName } from '../config/chains.ts';
import { type Config, trackedSettings } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { UsageError } from '../errors.ts';
import { fetchForReading } from '../pipeline/lake-step.ts';
import { holdsDodoData } from '../pipeline/sources.ts';
import { checkOutput, FORMATS, type Format, writeResult } from '../reports/output.ts';
import type { TableOptions } from '../reports/table-format.ts';
import { openLakeDb, reportViews } from '../reports/views.ts';
import { terminalWidth } from '../util/display.ts';
import { inert } from '../util/inert.ts';
import { closest } from '../util/suggest.ts';
import { wrap } from '../util/wrap.ts';
import type { CommandBody } from './command-body.ts';
import {
  CHAINS_FILTER,
  chainsOption,
  checkReadableDataDir,
  configFor,
  dayRangeOptions,
  type FolderArgs,
  folderOptions,
  list,
  parseChains,
  parseDayRange,
} from './options.ts';

interface OutputArgs extends FolderArgs {
  format: Format;
  out?: string;
  columns?: string;
  limit?: number;
  wide?: boolean;
}

interface ReportArgs extends OutputArgs {
  name?: string;
  list: boolean;
  chains?: string;
  from?: string;
  to?: string;
}

/** The options of `report`, `query` and `shell` that shape the output. */
function outputOptions<T>(y: Argv<T>) {
  return folderOptions(y)
    .option('format', {
      choices: FORMATS,
      default: 'table' as const,
      describe:
        'table: for reading (numbers rounded for people, as many columns as fit); csv, json, parquet, arrow: exact',
    })
    .option('out', {
      type: 'string',
      describe: 'write to this file instead of stdout (written to a temporary name, then renamed)',
    })
    .option('columns', {
      type: 'string',
      describe: 'table format: the columns to show, comma-separated (default: as many as fit the terminal)',
    })
    .option('limit', { type: 'number', describe: 'table format: rows to show at most' })
    .option('wide', {
      type: 'boolean',
      describe: 'table format: every column, however wide the terminal (default: the ones that fit)',
    });
}

/** With --out, where the result went (on stderr: stdout stays the data's alone when there is no --out). */
function sayWritten(a: { readonly out?: string; readonly format: string }, rows: number): void {
  if (a.out) process.stderr.write(`wrote ${rows} rows as ${a.format} to ${inert(resolve(a.out))}\n`);
}

/** The table layout the options ask for. */
function tableOptions(a: OutputArgs): TableOptions {
  if (a.limit !== undefined && (!Number.isInteger(a.limit) || a.limit < 1))
    throw new UsageError(`--limit takes a number of rows from 1, not ${a.limit}`);
  const columns = list(a.columns);
  return {
    ...(columns ? { columns } : {}),
    ...(a.limit !== undefined ? { limit: a.limit } : {}),
    ...(a.wide ? { wide: true } : {}),
  };
}

/**
 * The lake of a data folder, checked before a query: a folder that is a file, or one where nothing was exported, is
 * a mistake in the command line (a report of it would say 0 rows).
 */
export async function openLake(
  a: OutputArgs,
): Promise<{ db: Awaited<ReturnType<typeof openLakeDb>>; dataDir: string }> {
  const config = configFor(a);
  const dir = config.dataDir;
  checkReadableDataDir(dir);
  await fetchForReading(config, (line) => process.stderr.write(`${line}\n`));
  if (!existsSync(dataFolder(dir).lake)) {
    throw new UsageError(
      `nothing has been exported to ${dir} yet (it has no lake); run \`pool-export run\` there, or point --data-dir (or POOL_EXPORT_DATA_DIR) at a data folder, such as data/demo after \`make demo\``,
    );
  }
  return { db: await openLakeDb(dir, trackedSettings(config)), dataDir: dir };
}

/**
 * Checks that `sql` is one read-only SELECT statement (DuckDB serializes nothing else), with a message that says what
 * was wrong and how to write it.
 */
export async function checkSelect(conn: DuckDBConnection, sql: string): Promise<void> {
  const example = 'for example: pool-export query "SELECT chain, count(*) FROM dodoex.swaps GROUP BY ALL"';
  const check = await conn.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR)) AS j', [sql]);
  const parsed = JSON.parse(String(check.getRowObjectsJson()[0]!.j)) as {
    error?: boolean;
    error_message?: string;
    statements?: unknown[];
  };
  if (parsed.error) {
    const why = /Only SELECT statements/.test(parsed.error_message ?? '') ? 'it is not a SELECT' : parsed.error_message;
    throw new UsageError(`query takes one read-only SELECT statement, and ${why}; ${example}`);
  }
  if ((parsed.statements?.length ?? 0) !== 1)
    throw new UsageError(
      `query takes one SELECT statement, and this holds ${parsed.statements?.length}; run them one at a time`,
    );
}

/** What a folder of subgraphs alone says of DODO's reports, with the query that reads its own tables. */
const DODO_LESS = (config: Config) => {
  const first = config.subgraphs[0]!.name;
  return `these reports read DODO's datasets, and this folder holds none (its data: ${config.subgraphs.map((s) => `subgraph ${s.name}`).join(', ')}); its tables are read with pool-export query, e.g. pool-export query "SELECT table_schema, table_name FROM information_schema.tables WHERE table_schema = '${first}'"`;
};

/** The yargs module of the `report` command. */
export const reportCommand: CommandBody<ReportArgs> = {
  builder: (y) =>
    dayRangeOptions(
      chainsOption(
        outputOptions(y).positional('name', { type: 'string', describe: 'report name (see --list)' }).option('list', {
          type: 'boolean',
          default: false,
          describe: 'list the reports with what each answers and its grain',
        }),
        CHAINS_FILTER,
      ),
    ),
  handler: async (a) => {
    const views = reportViews();
    const config = configFor(a);
    // DODO's reports read DODO's datasets: a folder of subgraphs alone has none to show.
    const dodoLess = config.subgraphs.length > 0 && !holdsDodoData(config);
    if (a.list || !a.name) {
      if (dodoLess) process.stdout.write(`${DODO_LESS(config)}\n`);
      // Each report's question and grain, wrapped to the terminal (or COLUMNS); unwrapped into a file or a pipe.
      const width = Math.max(40, terminalWidth().width ?? Number.POSITIVE_INFINITY);
      for (const v of views)
        process.stdout.write(
          `${wrap(v.answers, { width, first: `${v.name.padEnd(20)} `, indent: 21 })}\n${wrap(`grain: ${v.grain}`, { width, first: ' '.repeat(21), indent: 28 })}\n`,
        );
      return;
    }
    const view = views.find((v) => v.name === a.name);
    if (!view) {
      const near = closest(
        a.name,
        views.map((v) => v.name),
      );
      throw new UsageError(
        `unknown report "${a.name}"${near ? `; did you mean ${near}?` : ''} (\`pool-export report --list\` lists the reports: ${views.map((v) => v.name).join(', ')})`,
      );
    }
    if (dodoLess) throw new UsageError(`report ${view.name}: ${DODO_LESS(config)}`);
    const where: string[] = [];
    const chains = parseChains(a.chains);
    const { from, to } = parseDayRange(a);
    if (chains?.length) where.push(`chain_id IN (${chains.join(', ')})`);
    if (from) where.push(`day >= DATE '${from}'`);
    if (to) where.push(`day <= DATE '${to}'`);
    const table = tableOptions(a);
    checkOutput(a.format, a.out);
    const { db } = await openLake(a);
    try {
      for (const chain of chains ?? []) await checkChain(db.conn, chain);
      const sql = `SELECT * FROM reports.${view.name}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ALL`;
      const n = await writeResult(db.conn, sql, {
        format: a.format,
        out: a.out,
        table: { ...table, display: view.display },
      });
      sayWritten(a, n);
    } finally {
      db.close();
    }
  },
};

interface QueryArgs extends OutputArgs {
  sql?: string;
}

/** A chain the lake holds no row of is a mistake in `--chains`: the error lists the chains it has. */
async function checkChain(conn: DuckDBConnection, chain: number): Promise<void> {
  const have = (
    await conn.runAndReadAll(
      'SELECT DISTINCT chain_id FROM list.liquidity UNION SELECT DISTINCT chain_id FROM dodoex.pairs ORDER BY 1',
    )
  )
    .getRowObjectsJson()
    .map((r) => Number(r.chain_id));
  if (!have.includes(chain))
    throw new UsageError(
      `the lake holds no data of chain ${chainName(chain)} (${chain}); its chains: ${have.map((c) => `${chainName(c)} (${c})`).join(', ') || 'none yet'}`,
    );
}

/** DuckDB's error classes that mean the statement itself is wrong (a name, a type, a value), not the lake. */
const SQL_MISTAKES = /^(Parser|Binder|Catalog|Conversion|Invalid Input|Out of Range|Not implemented) Error: /;

/**
 * A DuckDB error on a user's statement, as a usage error of at most three lines: its message and its hint ("Did you
 * mean …?"), without the echo of the statement and the caret under it. Undefined for any other error.
 */
export function sqlMistake(e: unknown): UsageError | undefined {
  const message = (e as Error | undefined)?.message ?? '';
  if (!SQL_MISTAKES.test(message)) return undefined;
  const lines = message
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !/^LINE \d+:/.test(l) && !/^\^/.test(l));
  return new UsageError(`the query is not valid SQL for the lake: ${lines.slice(0, 3).join(' ')}`);
}

/** The yargs module of the `query` command. */
export const queryCommand: CommandBody<QueryArgs> = {
  builder: (y) => outputOptions(y).positional('sql', { type: 'string', describe: 'one SELECT statement' }),
  handler: async (a) => {
    if (!a.sql?.trim())
      throw new UsageError(
        'query needs one SELECT statement, e.g. pool-export query "SELECT chain, count(*) FROM dodoex.swaps GROUP BY ALL"; `pool-export shell` opens a prompt',
      );
    const table = tableOptions(a);
    checkOutput(a.format, a.out);
    const { db } = await openLake(a);
    try {
      await checkSelect(db.conn, a.sql);
      const n = await writeResult(db.conn, a.sql, { format: a.format, out: a.out, table }).catch((e: unknown) => {
        throw sqlMistake(e) ?? e;
      });
      sayWritten(a, n);
    } finally {
      db.close();
    }
  },
};
