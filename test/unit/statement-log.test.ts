/** The statement log: a developer's record of each statement's time, which never holds a parameter. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterEach, expect, it, vi } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'pe-sqllog-'));
afterEach(() => {
  delete process.env.POOL_EXPORT_SQL_LOG;
  vi.resetModules();
});

it('writes each statement once with its connection and time, and no parameter; nothing when off', async () => {
  const file = join(dir, 'sql.tsv');
  process.env.POOL_EXPORT_SQL_LOG = file;
  const { logged, mark } = await import('../../src/store/statement-log.ts');
  const instance = await DuckDBInstance.create(':memory:');
  const conn = logged(await instance.connect(), 'main');
  try {
    await conn.run('CREATE TABLE t (k VARCHAR)');
    await conn.run('INSERT INTO t VALUES ($1)', ['secret-key-value']);
    mark('tasks');
    // runAndReadAll runs through run: one line, not two.
    expect((await conn.runAndReadAll('SELECT count(*)::INTEGER AS n\n  FROM t')).getRowObjectsJson()).toEqual([
      { n: 1 },
    ]);
  } finally {
    conn.closeSync();
    instance.closeSync();
  }
  const lines = readFileSync(file, 'utf8')
    .trimEnd()
    .split('\n')
    .map((l) => l.split('\t'));
  expect(lines.map((l) => [l[0], l[3]])).toEqual([
    ['main', 'CREATE TABLE t (k VARCHAR)'],
    ['main', 'INSERT INTO t VALUES ($1)'],
    ['step', 'tasks'],
    ['main', 'SELECT count(*)::INTEGER AS n FROM t'],
  ]);
  for (const l of lines) expect(Number(l[1])).toBeGreaterThan(0);
  expect(readFileSync(file, 'utf8')).not.toContain('secret-key-value');
  // Off: the connection is handed back as it was.
  delete process.env.POOL_EXPORT_SQL_LOG;
  vi.resetModules();
  const off = await import('../../src/store/statement-log.ts');
  const other = await DuckDBInstance.create(':memory:');
  const plain = await other.connect();
  const run = plain.run;
  expect(off.logged(plain, 'main').run).toBe(run);
  plain.closeSync();
  other.closeSync();
  rmSync(dir, { recursive: true, force: true });
});
