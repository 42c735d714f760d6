/**
 * What the warehouse's block size costs its writers and its readers, DuckDB alone, for each size given (bytes):
 * - a run's commits: 41 tables of 40 columns (a third text, a third doubles, a third integers) of 20,000 rows each,
 *   checkpointed; then 12 rows appended to each table, one commit per table, and the checkpoint after (the shape of a
 *   run after 100 new blocks on the demo's 8 chains: a few rows into each of 41 tables);
 * - a reader of 2,000,000 rows in one table: a grouped aggregate, a distinct count, a lookup by id and a max over text,
 *   each the mean of 5, and the file's size.
 * Each size is measured in a process of its own (DuckDB's allocator and caches start cold in each).
 *
 *   npx tsx bench/block-size.ts [SIZE ...]      (default: 262144 65536 16384; about 2 minutes)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';

const TABLES = 41;
const COLUMNS = 40;

const column = (i: number) => (i % 3 === 0 ? 'VARCHAR' : i % 3 === 1 ? 'DOUBLE' : 'BIGINT');
const rows = (n: number, offset: number) =>
  `SELECT ${Array.from({ length: COLUMNS }, (_, i) => `CAST(${column(i) === 'VARCHAR' ? `'v' || (r + ${offset})` : `r + ${offset}`} AS ${column(i)})`).join(', ')} FROM range(${n}) t(r)`;

/** One size, in this process: prints one JSON line. */
async function measure(size: number, dir: string): Promise<void> {
  const commits = join(dir, 'commits.duckdb');
  const create = await DuckDBInstance.create(commits, { default_block_size: String(size), threads: '1' });
  const c = await create.connect();
  const columns = Array.from({ length: COLUMNS }, (_, i) => `c${i} ${column(i)}`).join(', ');
  for (let t = 0; t < TABLES; t++) {
    await c.run(`CREATE TABLE t${t} (${columns})`);
    await c.run(`INSERT INTO t${t} ${rows(20_000, 0)}`);
  }
  await c.run('CHECKPOINT');
  c.closeSync();
  create.closeSync();
  const open = await DuckDBInstance.create(commits, { threads: '1' });
  const o = await open.connect();
  let t0 = performance.now();
  for (let t = 0; t < TABLES; t++) {
    await o.run('BEGIN TRANSACTION');
    await o.run(`INSERT INTO t${t} ${rows(12, 20_000)}`);
    await o.run('COMMIT');
  }
  const commitMs = performance.now() - t0;
  t0 = performance.now();
  await o.run('CHECKPOINT');
  const checkpointMs = performance.now() - t0;
  o.closeSync();
  open.closeSync();

  const scans = join(dir, 'scans.duckdb');
  const made = await DuckDBInstance.create(scans, { default_block_size: String(size), threads: '1' });
  const m = await made.connect();
  await m.run(
    `CREATE TABLE swaps AS SELECT 'id-' || r AS id, r // 7 AS block, 1790000000 + r * 3 AS ts, 'pair-' || (r % 500) AS pair,
     random() * 1e6 AS amount_in, random() * 1e6 AS amount_out, CAST(CAST(random() * 1e18 AS HUGEINT) AS VARCHAR) AS amount_text,
     'user-' || (r % 20000) AS usr, r % 8 AS chain_id FROM range(2000000) t(r)`,
  );
  m.closeSync();
  made.closeSync();
  const read = await DuckDBInstance.create(scans, { threads: '1', access_mode: 'READ_ONLY' });
  const r = await read.connect();
  const queries = [
    'SELECT pair, ts // 86400 AS d, count(*), sum(amount_in) FROM swaps GROUP BY ALL ORDER BY ALL LIMIT 5',
    'SELECT count(DISTINCT usr) FROM swaps WHERE chain_id = 3',
    "SELECT * FROM swaps WHERE id = 'id-1234567'",
    'SELECT max(amount_text), min(block) FROM swaps',
  ];
  const queryMs: number[] = [];
  for (const q of queries) {
    const t = performance.now();
    for (let k = 0; k < 5; k++) await r.runAndReadAll(q);
    queryMs.push((performance.now() - t) / 5);
  }
  r.closeSync();
  read.closeSync();
  const mb = statSync(scans).size / 1e6;
  console.log(JSON.stringify({ size, commitMs, checkpointMs, queryMs, mb }));
}

if (process.argv[2] === '--one') {
  await measure(Number(process.argv[3]), process.argv[4]!);
} else {
  const sizes = process.argv.slice(2).map(Number);
  const lines = [
    '| block size | 41 commits of 12 rows | checkpoint after | aggregate | distinct | by id | max of text | file (2,000,000 rows) |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const size of sizes.length ? sizes : [262_144, 65_536, 16_384]) {
    const dir = mkdtempSync(join(tmpdir(), 'pe-block-'));
    try {
      const r = spawnSync(process.execPath, [...process.execArgv, process.argv[1]!, '--one', String(size), dir], {
        encoding: 'utf8',
      });
      if (r.status !== 0) throw new Error(`block size ${size}: exit ${r.status}: ${r.stderr.slice(-2000)}`);
      const x = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as {
        commitMs: number;
        checkpointMs: number;
        queryMs: number[];
        mb: number;
      };
      const ms = (v: number) => `${v.toFixed(0)} ms`;
      lines.push(
        `| ${size / 1024} KiB | ${ms(x.commitMs)} | ${ms(x.checkpointMs)} | ${x.queryMs.map(ms).join(' | ')} | ${x.mb.toFixed(1)} MB |`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
  console.log(lines.join('\n'));
}
