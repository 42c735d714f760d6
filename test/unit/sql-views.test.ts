/**
 * The report views checked from fixtures, without a sandbox or an export: each file of test/sql/ names a view and
 * holds cases, each with input rows written by hand into the dataset tables (empty tables of the lake's own columns,
 * as `defineDatasetViews` makes them for a lake with no files), a query of the view, and its expected rows, worked out
 * by hand from the view's documented rule (never by running it). The format, after DuckDB's sqllogictest:
 *
 *     view reports.volume_hourly        the view the file is about (one per file)
 *     case <what the case shows>        starts a case; the cases of a file share nothing
 *     statement                         SQL run before the query (inserts; any number of statements)
 *     query                             the query, then a line `----`, then one expected row per line,
 *                                       values as DuckDB casts them to text, separated by ` | `, NULL for null
 *
 * Lines starting with `#` are comments.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it } from 'vitest';
import { DEFAULT_TRACKED } from '../../src/config/tracked.ts';
import { defineDatasetViews } from '../../src/lake/lake-db.ts';
import { defineReportViews, reportViews } from '../../src/reports/views.ts';

const DIR = new URL('../sql/', import.meta.url);
const empty = mkdtempSync(join(tmpdir(), 'pe-sql-'));
afterAll(() => rmSync(empty, { recursive: true, force: true }));

interface Case {
  readonly title: string;
  readonly statements: string;
  readonly query: string;
  readonly expected: string[];
}

/** The view a fixture file is about, and its cases. */
function parse(text: string): { view: string; cases: Case[] } {
  let view = '';
  const cases: Case[] = [];
  let current: { title: string; statements: string[]; query: string[]; expected: string[] } | undefined;
  let section: 'statement' | 'query' | 'expected' | undefined;
  const close = () => {
    if (current)
      cases.push({
        title: current.title,
        statements: current.statements.join('\n'),
        query: current.query.join('\n'),
        expected: current.expected,
      });
  };
  for (const line of text.split('\n')) {
    if (line.startsWith('#')) continue;
    if (line.startsWith('view ')) view = line.slice(5).trim();
    else if (line.startsWith('case ')) {
      close();
      current = { title: line.slice(5).trim(), statements: [], query: [], expected: [] };
      section = undefined;
    } else if (line === 'statement' || line === 'query') section = line;
    else if (line === '----') section = 'expected';
    else if (current && section === 'statement') current.statements.push(line);
    else if (current && section === 'query') current.query.push(line);
    else if (current && section === 'expected' && line.trim()) current.expected.push(line.trim());
  }
  close();
  return { view, cases };
}

const files = readdirSync(DIR)
  .filter((f) => f.endsWith('.test'))
  .sort();

/** A fresh database: every dataset an empty table of the lake's columns, then the helpers and the report views. */
async function database() {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  await conn.run("SET TimeZone = 'UTC'");
  await defineDatasetViews(conn, empty);
  await defineReportViews(conn, DEFAULT_TRACKED);
  const close = () => {
    conn.closeSync();
    instance.closeSync();
  };
  return { conn, close };
}

describe('SQL fixtures of the report views (test/sql/)', () => {
  it('has at least one file of cases for every report view', () => {
    const covered = new Set(files.map((f) => parse(readFileSync(new URL(f, DIR), 'utf8')).view));
    const views = reportViews().map((v) => `reports.${v.name}`);
    expect(views.length).toBeGreaterThan(10);
    expect(views.filter((v) => !covered.has(v))).toEqual([]);
  });

  for (const file of files) {
    const { view, cases } = parse(readFileSync(new URL(file, DIR), 'utf8'));
    describe(`${file}: ${view}`, () => {
      it('names a view and holds cases', () => {
        expect(view).toMatch(/^reports\.\w+$/);
        expect(cases.length).toBeGreaterThan(0);
      });
      for (const c of cases)
        it(c.title, async () => {
          const db = await database();
          try {
            if (c.statements.trim()) await db.conn.run(c.statements);
            const reader = await db.conn.runAndReadAll(
              `SELECT COLUMNS(*)::VARCHAR FROM (${c.query.replace(/;\s*$/, '')})`,
            );
            const rows = reader.getRows().map((r) => r.map((v) => (v === null ? 'NULL' : String(v))).join(' | '));
            expect(rows).toEqual(c.expected);
          } finally {
            db.close();
          }
        });
    });
  }
});
