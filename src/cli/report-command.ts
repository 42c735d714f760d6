/** `pool-export report` and `pool-export query`: read the Parquet lake through DuckDB views, never locking the warehouse. */
import type { CommandModule } from 'yargs';
import { parseChain, UsageError } from '../config/chains.ts';
import { loadConfig, trackedSettings } from '../config/config.ts';
import { openLakeDb, reportViews } from '../lake/lake-db.ts';
import { FORMATS, writeResult, type Format } from '../reports/output.ts';

interface ReportArgs {
  name?: string;
  list: boolean;
  chain?: string;
  from?: string;
  to?: string;
  format: Format;
  out?: string;
  'data-dir'?: string;
  config?: string;
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

function day(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!DAY_RE.test(v) || Number.isNaN(Date.parse(v))) throw new UsageError(`--${flag} takes a UTC day as YYYY-MM-DD, not "${v}"`);
  return v;
}

/** The yargs module of the `report` command. */
export const reportCommand: CommandModule<object, ReportArgs> = {
  command: 'report [name]',
  describe: 'Print a report (TVL, volume, APY, top and new pools, positions, crowd pools, smart route); --list lists them',
  builder: (y) =>
    y
      .positional('name', { type: 'string', describe: 'report name (see --list)' })
      .option('list', { type: 'boolean', default: false, describe: 'list the reports with what each answers and its grain' })
      .option('chain', { type: 'string', describe: 'only this chain (name or id)' })
      .option('from', { type: 'string', describe: 'first UTC day, YYYY-MM-DD' })
      .option('to', { type: 'string', describe: 'last UTC day, YYYY-MM-DD (inclusive)' })
      .option('format', { choices: FORMATS, default: 'table' as const, describe: 'output format' })
      .option('out', { type: 'string', describe: 'write to this file instead of stdout (written to a temporary name, then renamed)' })
      .option('data-dir', { type: 'string', describe: 'data folder' })
      .option('config', { type: 'string', describe: 'JSON config file' }),
  handler: async (a) => {
    const views = reportViews();
    if (a.list || !a.name) {
      for (const v of views) process.stdout.write(`${v.name.padEnd(20)} ${v.answers}\n${''.padEnd(20)} grain: ${v.grain}\n`);
      return;
    }
    const view = views.find((v) => v.name === a.name);
    if (!view) throw new UsageError(`unknown report "${a.name}"; reports: ${views.map((v) => v.name).join(', ')}`);
    const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
    const where: string[] = [];
    if (a.chain) where.push(`chain_id = ${parseChain(a.chain)}`);
    const from = day('from', a.from);
    const to = day('to', a.to);
    if (from) where.push(`day >= DATE '${from}'`);
    if (to) where.push(`day <= DATE '${to}'`);
    const db = await openLakeDb(config.dataDir, trackedSettings(config));
    try {
      const sql = `SELECT * FROM reports.${view.name}${where.length ? ` WHERE ${where.join(' AND ')}` : ''} ORDER BY ALL`;
      await writeResult(db.conn, sql, a.format, a.out);
    } finally {
      db.close();
    }
  },
};

interface QueryArgs {
  sql: string;
  format: Format;
  out?: string;
  'data-dir'?: string;
  config?: string;
}

/** The yargs module of the `query` command. */
export const queryCommand: CommandModule<object, QueryArgs> = {
  command: 'query <sql>',
  describe: 'Run a read-only SQL query over the lake (tables dodoex.*, token.*, mine.*, list.*, reports.*)',
  builder: (y) =>
    y
      .positional('sql', { type: 'string', demandOption: true, describe: 'one SELECT statement' })
      .option('format', { choices: FORMATS, default: 'table' as const, describe: 'output format' })
      .option('out', { type: 'string', describe: 'write to this file instead of stdout' })
      .option('data-dir', { type: 'string', describe: 'data folder' })
      .option('config', { type: 'string', describe: 'JSON config file' }),
  handler: async (a) => {
    const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
    const db = await openLakeDb(config.dataDir, trackedSettings(config));
    try {
      // Only one SELECT statement passes: DuckDB serializes nothing else.
      const check = await db.conn.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR)) AS j', [a.sql]);
      const parsed = JSON.parse(String(check.getRowObjectsJson()[0]!.j)) as { error?: boolean; error_message?: string };
      if (parsed.error) throw new UsageError(`query takes one read-only SELECT statement (${parsed.error_message}); for example: pool-export query "SELECT count(*) FROM dodoex.swaps"`);
      await writeResult(db.conn, a.sql, a.format, a.out);
    } finally {
      db.close();
    }
  },
};
