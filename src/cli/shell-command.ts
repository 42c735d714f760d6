/**
 * `pool-export shell`: an SQL prompt over the lake, for ad hoc questions without installing DuckDB's own command line.
 * Statements end with `;` and may span lines; `.tables`, `.schema NAME`, `.help` and `.quit` are commands. Results
 * print as tables that fit the terminal (see `reports/output.ts`); history is kept across sessions. With no terminal
 * on stdin it reads the statements from stdin, so that a script can pipe them in.
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { DuckDBConnection } from '@duckdb/node-api';
import { UsageError } from '../errors.ts';
import { writeResult } from '../reports/output.ts';
import { inert } from '../util/inert.ts';
import type { CommandBody } from './command-body.ts';
import { folderOptions } from './options.ts';
import { checkSelect, openLake } from './report-command.ts';

interface Args {
  'data-dir'?: string;
  config?: string;
}

/** Where the prompt's history is kept, one statement a line. */
const HISTORY_FILE = join(homedir(), '.pool-export-history');
/** Statements kept in the history. */
const HISTORY_SIZE = 500;

const HELP = `Statements end with ';' and may span lines. Only SELECT statements run (the lake is read, never written).
  .tables          the tables and views: dodoex.*, token.*, mine.*, list.*, reports.*
  .schema NAME     the columns of a table or view, with their types
  .help            this text
  .quit            leave (or Ctrl-D)
`;

/** Runs one line of input: a dot command, or part of a statement. Returns false when the session should end. */
async function dot(conn: DuckDBConnection, line: string): Promise<boolean> {
  const [cmd, arg] = line.trim().split(/\s+/, 2);
  switch (cmd) {
    case '.quit':
    case '.exit':
      return false;
    case '.help':
      process.stdout.write(HELP);
      return true;
    case '.tables':
      await writeResult(
        conn,
        "SELECT table_schema || '.' || table_name AS name FROM information_schema.tables WHERE table_schema NOT IN ('main', 'information_schema', 'pg_catalog') ORDER BY ALL",
        { format: 'table' },
      );
      return true;
    case '.schema': {
      if (!arg || !/^[A-Za-z0-9_]+(\.[A-Za-z0-9_]+)?$/.test(arg))
        throw new UsageError('.schema takes a table or view, such as .schema dodoex.swaps');
      await writeResult(conn, `SELECT column_name AS "column", column_type AS type FROM (DESCRIBE ${arg})`, {
        format: 'table',
      });
      return true;
    }
    default:
      throw new UsageError(`unknown command ${cmd}; .help lists them`);
  }
}

/** The yargs module of the `shell` command. */
export const shellCommand: CommandBody<Args> = {
  builder: (y) => folderOptions(y),
  handler: async (a) => {
    const { db, dataDir } = await openLake({ format: 'table', ...a });
    const tty = process.stdin.isTTY === true;
    const history =
      tty && existsSync(HISTORY_FILE)
        ? readFileSync(HISTORY_FILE, 'utf8').split('\n').filter(Boolean).slice(-HISTORY_SIZE).reverse()
        : [];
    const rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: tty,
      history,
      historySize: HISTORY_SIZE,
      prompt: 'pool-export> ',
    });
    if (tty) process.stdout.write(`The lake of ${dataDir}: .tables lists what is there, .help the commands.\n`);
    let statement = '';
    let failed = false;
    const prompt = () => tty && rl.prompt();
    prompt();
    try {
      for await (const line of rl) {
        try {
          if (!statement && line.trim().startsWith('.')) {
            if (!(await dot(db.conn, line))) break;
          } else if (line.trim()) {
            statement += `${line}\n`;
            if (line.trim().endsWith(';')) {
              const sql = statement.trim().replace(/;\s*$/, '');
              statement = '';
              if (tty) appendFileSync(HISTORY_FILE, `${sql.replace(/\s*\n\s*/g, ' ')}\n`);
              await checkSelect(db.conn, sql);
              await writeResult(db.conn, sql, { format: 'table' });
            }
          }
        } catch (e) {
          failed = true;
          process.stderr.write(`${inert((e as Error).message)}\n`);
        }
        rl.setPrompt(statement ? '         ...> ' : 'pool-export> ');
        prompt();
      }
    } finally {
      rl.close();
      db.close();
      if (tty) process.stdout.write('\n');
    }
    // A script piped in fails as a whole when one of its statements failed.
    if (!tty && failed) process.exitCode = 1;
  },
};
