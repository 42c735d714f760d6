/** Result output of `query` and `report` on a real in-memory DuckDB: every format, written to files, read back. */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type DuckDBConnection, DuckDBInstance } from '@duckdb/node-api';
import { tableFromIPC } from 'apache-arrow';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError } from '../../src/errors.ts';
import { checkOutput, writeResult } from '../../src/reports/output.ts';
import { renderTable, tableCells } from '../../src/reports/table-format.ts';
import { TORN_READ } from '../../src/reports/torn-read.ts';
import { jsonSafe } from '../../src/util/inert.ts';

let inst: DuckDBInstance;
let conn: DuckDBConnection;
const dir = mkdtempSync(join(tmpdir(), 'pool-export-output-'));

/** Rows with an exact 64-bit integer past 2^53, a decimal, text that needs CSV quoting, a time and a null. */
const SQL = `SELECT * FROM (VALUES
  (1::BIGINT, 9007199254740993::BIGINT, 1234567.891::DOUBLE, 'plain', TIMESTAMPTZ '2026-01-02 03:04:05+00', NULL::VARCHAR),
  (2::BIGINT, 5::BIGINT, 0.5::DOUBLE, 'a "quoted", comma
line', TIMESTAMPTZ '2026-01-03 00:00:00+00', 'x')
) t(n, big, usd, name, ts, maybe) ORDER BY n`;

beforeAll(async () => {
  inst = await DuckDBInstance.create(':memory:');
  conn = await inst.connect();
  await conn.run("SET TimeZone = 'UTC'");
});
afterAll(() => {
  conn.closeSync();
  inst.closeSync();
  rmSync(dir, { recursive: true, force: true });
});

describe('writeResult', () => {
  it('asks a result again while its read of a file is torn by the file’s replacement, which a plain read is not', async () => {
    // A writer replaces one Parquet file under its name every 15 ms or so, as runs publish rewritten files (a run
    // replaces a file once); the file of run i holds 100 + i rows. Two readers read it meanwhile: writeResult, and
    // DuckDB's own read beside it.
    const race = join(dir, 'race');
    const file = join(race, 'part-00001.parquet');
    mkdirSync(race, { recursive: true });
    const writer = await (await DuckDBInstance.create(':memory:')).connect();
    const write = (to: string, i: number) =>
      writer.run(
        `COPY (SELECT range AS x, md5(range::VARCHAR) AS s FROM range(${100 + i})) TO '${to}' (FORMAT parquet)`,
      );
    await write(file, 0);
    const sql = `SELECT count(*) AS n, max(s) AS m FROM read_parquet('${file}')`;
    let writing = true;
    const answers: number[] = [];
    let plainFailed = 0;
    const ours = (async () => {
      for (let k = 0; writing; k++) {
        const out = join(race, `r${k % 2}.csv`);
        await writeResult(conn, sql, { format: 'csv', out });
        answers.push(Number(readFileSync(out, 'utf8').split('\n')[1]!.split(',')[0]));
      }
    })();
    const plain = (async () => {
      const c = await inst.connect();
      while (writing) await c.runAndReadAll(sql).catch((e) => void (TORN_READ.test(String(e)) && plainFailed++));
    })();
    try {
      for (let i = 1; i <= 300; i++) {
        await write(join(race, 'next.parquet'), i);
        renameSync(join(race, 'next.parquet'), file);
        await new Promise((r) => setTimeout(r, 15));
      }
    } finally {
      writing = false;
    }
    await Promise.all([plain, ours]);
    writer.closeSync();
    // The race was on: DuckDB's own reads failed; writeResult's every answer was one file's whole count.
    expect(plainFailed).toBeGreaterThan(0);
    expect(answers.length).toBeGreaterThan(20);
    for (const n of answers) expect(n >= 100 && n <= 400).toBe(true);
  }, 60_000);

  it('takes for torn the reads of a file replaced by one in the other codec, as DuckDB words them', () => {
    // Seen in test/unit/lake-writer.test.ts's reader, once small files were written in snappy and larger ones in zstd.
    const file =
      'Invalid Input Error: Failed to read file "/tmp/pe-lake-x/lake/dodoex/swaps/chain=bsc/month=2026-01/part-00012.parquet"';
    expect(TORN_READ.test(`${file}: ZSTD Decompression failure`)).toBe(true);
    expect(TORN_READ.test(`${file}: Snappy decompression failure: Uncompressed data size mismatch`)).toBe(true);
    // A failure of another kind is not asked again.
    expect(TORN_READ.test(`${file}: No such file or directory`)).toBe(false);
  });

  it('CSV keeps every value exact, quotes what needs quoting, and leaves null empty', async () => {
    const out = join(dir, 'r.csv');
    expect(await writeResult(conn, SQL, { format: 'csv', out })).toBe(2);
    expect(readFileSync(out, 'utf8')).toBe(
      'n,big,usd,name,ts,maybe\n' +
        '1,9007199254740993,1234567.891,plain,2026-01-02 03:04:05+00,\n' +
        '2,5,0.5,"a ""quoted"", comma\nline",2026-01-03 00:00:00+00,x\n',
    );
    expect(existsSync(`${out}.tmp`)).toBe(false);
  });

  it('JSON keeps a 64-bit integer past 2^53 as text and small ones as numbers', async () => {
    const out = join(dir, 'r.json');
    await writeResult(conn, SQL, { format: 'json', out });
    const rows = JSON.parse(readFileSync(out, 'utf8'));
    expect(rows[0]).toEqual({
      n: 1,
      big: '9007199254740993',
      usd: 1234567.891,
      name: 'plain',
      ts: '2026-01-02 03:04:05+00',
      maybe: null,
    });
    expect(rows[1].big).toBe(5);
  });

  it('Parquet and Arrow hold the same rows', async () => {
    const pq = join(dir, 'r.parquet');
    expect(await writeResult(conn, SQL, { format: 'parquet', out: pq })).toBe(2);
    const back = await conn.runAndReadAll(`SELECT big::VARCHAR AS big, usd FROM '${pq}' ORDER BY n`);
    expect(back.getRowObjects()).toEqual([
      { big: '9007199254740993', usd: 1234567.891 },
      { big: '5', usd: 0.5 },
    ]);
    const arrow = join(dir, 'r.arrow');
    expect(await writeResult(conn, SQL, { format: 'arrow', out: arrow })).toBe(2);
    const t = tableFromIPC(readFileSync(arrow));
    expect(t.numRows).toBe(2);
    expect(t.schema.fields.map((f) => f.name)).toEqual(['n', 'big', 'usd', 'name', 'ts', 'maybe']);
    expect(t.get(0)!.toJSON().usd).toBe(1234567.891);
    const empty = join(dir, 'e.arrow');
    expect(await writeResult(conn, 'SELECT 1 AS a WHERE false', { format: 'arrow', out: empty })).toBe(0);
    expect(tableFromIPC(readFileSync(empty)).numRows).toBe(0);
  });

  it('the table is for reading: human numbers, one time format, chosen columns, a row limit and the count', async () => {
    const out = join(dir, 'r.txt');
    await writeResult(conn, SQL, { format: 'table', out, table: { columns: ['name', 'usd', 'ts'], limit: 1 } });
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toMatch(/^name\s+usd\s+ts$/);
    expect(lines[2]).toMatch(/^plain\s+1\.235M\s+2026-01-02 03:04:05Z$/);
    expect(lines.at(-1)).toBe('(2 rows, 1 shown)');
    await expect(writeResult(conn, SQL, { format: 'table', out, table: { columns: ['nope'] } })).rejects.toThrow(
      '--columns names nope, which the result does not have; its columns: n, big, usd, name, ts, maybe',
    );
  });

  it('refuses Parquet to stdout and --out into a folder that does not exist, before running anything', () => {
    expect(() => checkOutput('parquet', undefined)).toThrow('--format parquet needs --out FILE');
    expect(() => checkOutput('csv', join(dir, 'no', 'such', 'x.csv'))).toThrow(UsageError);
    expect(() => checkOutput('csv', join(dir, 'no', 'x.csv'))).toThrow(
      `--out ${join(dir, 'no', 'x.csv')}: the folder ${join(dir, 'no')} does not exist`,
    );
    expect(() => checkOutput('parquet', join(dir, 'ok.parquet'))).not.toThrow();
    expect(() => checkOutput('csv', undefined)).not.toThrow();
  });
});

describe('renderTable', () => {
  const rows = [
    { pool: 'A', tvl: 1234567.891, note: 'x' },
    { pool: 'Bb', tvl: null, note: 'yy' },
  ];
  it('right-aligns numeric columns, pads text, and shows the row count', () => {
    expect(renderTable(['pool', 'tvl', 'note'], rows)).toBe(
      ['pool     tvl  note', '----  ------  ----', 'A     1.235M  x', 'Bb            yy', '(2 rows)'].join('\n'),
    );
  });
  it('keeps the columns that fit the width and names the others', () => {
    const t = renderTable(['pool', 'tvl', 'note'], rows, { width: 12 }).split('\n');
    expect(t[0]).toBe('pool     tvl');
    expect(t[3]).toBe('Bb');
    // The footer is wrapped to the width, never cut: every word of it is there, each line within the width unless a
    // single word is wider.
    const footer = t.slice(t.indexOf('(2 rows)') + 1);
    expect(footer.join(' ').replace(/\s+/g, ' ')).toBe(
      '(1 more columns: note; --wide shows them all, --columns chooses, --format csv gives them exactly)',
    );
    expect(footer.filter((l) => l.length > 12 && l.trim().includes(' '))).toEqual([]);
    const wide = renderTable(['pool', 'tvl', 'note'], rows, { width: 200 }).split('\n');
    expect(wide.at(-1)).toBe('(2 rows)');
    const narrow = renderTable(['pool', 'tvl', 'note'], rows, { width: 1 }).split('\n');
    expect(narrow[0]).toBe('pool');
    expect(narrow.at(-1)).toBe(' exactly)');
  });
  it('shows a text cell inert and cut to 44 cells', () => {
    const t = renderTable(['name'], [{ name: `\x1b[31mred${'z'.repeat(100)}` }]).split('\n');
    expect(t[2]).not.toContain('\x1b');
    expect(t[2]!.length).toBeLessThanOrEqual(44);
  });
});

describe('writeResult to stdout and of nested values', () => {
  /** Runs `f` with process.stdout.write captured (and isTTY as given), returning what was written. */
  async function captured(f: () => Promise<unknown>, isTTY = false): Promise<string> {
    const chunks: string[] = [];
    const write = process.stdout.write;
    const tty = process.stdout.isTTY;
    process.stdout.write = ((d: string | Uint8Array) => {
      chunks.push(typeof d === 'string' ? d : Buffer.from(d).toString('latin1'));
      return true;
    }) as typeof process.stdout.write;
    process.stdout.isTTY = isTTY;
    try {
      await f();
    } finally {
      process.stdout.write = write;
      process.stdout.isTTY = tty;
    }
    return chunks.join('');
  }
  const NESTED = "SELECT [1, 2] AS l, {'a': 1, 'b': 'x'} AS s, 'plain' AS t";

  it('lists and structs are JSON in CSV and in the table; CSV ignores --columns', async () => {
    expect(await captured(() => writeResult(conn, NESTED, { format: 'csv', table: { columns: ['t'] } }))).toBe(
      'l,s,t\n"[1,2]","{""a"":1,""b"":""x""}",plain\n',
    );
    const table = await captured(() => writeResult(conn, NESTED, { format: 'table', table: { width: 200 } }));
    expect(table.split('\n')[2]).toBe('[1,2]  {"a":1,"b":"x"}  plain');
  });

  it('the table fits the terminal width or COLUMNS when not told one; a file gets every column', async () => {
    const wide = 'SELECT 1 AS aaaaaaaaaa, 2 AS bbbbbbbbbb, 3 AS cccccccccc';
    const before = process.env.COLUMNS;
    process.env.COLUMNS = '14';
    try {
      const shown = await captured(() => writeResult(conn, wide, { format: 'table' }));
      expect(shown.split('\n')[0]).toBe('aaaaaaaaaa');
      const out = join(dir, 'wide.txt');
      await writeResult(conn, wide, { format: 'table', out });
      expect(readFileSync(out, 'utf8').split('\n')[0]).toBe('aaaaaaaaaa  bbbbbbbbbb  cccccccccc');
      process.env.COLUMNS = 'many';
      expect((await captured(() => writeResult(conn, wide, { format: 'table' }))).split('\n')[0]).toBe(
        'aaaaaaaaaa  bbbbbbbbbb  cccccccccc',
      );
    } finally {
      if (before === undefined) delete process.env.COLUMNS;
      else process.env.COLUMNS = before;
    }
  });

  it('refuses Arrow to a terminal, writes it to a pipe', async () => {
    expect(() => checkOutput('arrow', undefined)).not.toThrow();
    const tty = process.stdout.isTTY;
    process.stdout.isTTY = true;
    try {
      expect(() => checkOutput('arrow', undefined)).toThrow('--format arrow writes a binary stream: pass --out FILE');
      expect(() => checkOutput('csv', undefined)).not.toThrow();
    } finally {
      process.stdout.isTTY = tty;
    }
    const piped = await captured(() => writeResult(conn, 'SELECT 1 AS a', { format: 'arrow' }));
    expect(piped.length).toBeGreaterThan(50);
  });

  it('a column of numbers and text is left-aligned; a column of numbers and nulls is right-aligned', () => {
    const t = renderTable(
      ['m', 'n'],
      [
        { m: 1, n: 1000 },
        { m: 'abcd', n: null },
      ],
    ).split('\n');
    expect(t[2]).toBe('1     1000');
    expect(t[3]).toBe('abcd');
  });
});

describe('tables of any length', () => {
  /** The line of row `i` of `SELECT range AS n, 'x' || range AS s FROM range(N)`, N ≤ 1,000,000: n right-aligned. */
  const lineOf = (i: number) => `${String(i).padStart(6)}  x${i}`;

  it('renderTable draws 300,000 rows, each column as wide as its widest cell', () => {
    const rows = Array.from({ length: 300_000 }, (_, i) => ({ n: i, s: `x${i}` }));
    const lines = renderTable(['n', 's'], rows, { cells: 1_000_000 }).split('\n');
    expect(lines).toHaveLength(300_003);
    expect(lines[0]).toBe('     n  s');
    expect(lines[1]).toBe('------  -------');
    const wrong = lines.slice(2, -1).findIndex((l, i) => l !== lineOf(i));
    expect(wrong).toBe(-1);
    expect(lines.at(-1)).toBe('(300000 rows)');
  });

  it('writeResult writes a table of 300,000 rows to a file, line for line with the CSV of the same rows', async () => {
    const sql = "SELECT range AS n, 'x' || range AS s FROM range(300000)";
    const txt = join(dir, 'big.txt');
    const csv = join(dir, 'big.csv');
    expect(await writeResult(conn, sql, { format: 'table', out: txt, table: { cells: 1_000_000 } })).toBe(300_000);
    expect(await writeResult(conn, sql, { format: 'csv', out: csv })).toBe(300_000);
    const table = readFileSync(txt, 'utf8').split('\n');
    const values = readFileSync(csv, 'utf8').trimEnd().split('\n').slice(1);
    expect(values).toHaveLength(300_000);
    const wrong = values.findIndex((v, i) => {
      const [n, s] = v.split(',');
      return table[i + 2] !== `${n!.padStart(6)}  ${s}`;
    });
    expect(wrong).toBe(-1);
    expect(table.slice(-2)).toEqual(['(300000 rows)', '']);
  });

  it('holds at most its cells, counts every row past them, and says how to get them all', async () => {
    const sql = "SELECT range AS n, 'x' || range AS s FROM range(300000)";
    const out = join(dir, 'capped.txt');
    expect(await writeResult(conn, sql, { format: 'table', out, table: { cells: 10 } })).toBe(300_000);
    const lines = readFileSync(out, 'utf8').trimEnd().split('\n');
    expect(lines.slice(2, -1)).toEqual([0, 1, 2, 3, 4].map((i) => `${i}  x${i}`));
    expect(lines.at(-1)).toBe(
      '(300000 rows, 5 shown: a table holds at most 10 cells here; --format csv or json writes every row)',
    );
    // --limit below the cells: the count alone.
    await writeResult(conn, sql, { format: 'table', out, table: { limit: 3 } });
    expect(readFileSync(out, 'utf8').trimEnd().split('\n').at(-1)).toBe('(300000 rows, 3 shown)');
  });

  it('holds at most a fifth of a control group limit, 64 bytes a cell, and six million cells without one', () => {
    expect(tableCells(undefined)).toBe(6_000_000);
    expect(tableCells(512 * 1024 ** 2)).toBe(1_677_721);
    expect(tableCells(64 * 1024 ** 3)).toBe(6_000_000);
  });

  it('JSON of many chunks is laid out as JSON.stringify lays out the whole array, and an empty one is []', async () => {
    const sql = `SELECT range AS n, [range::INTEGER, NULL] AS l, {'a': 'x' || range, 'b': range % 3 = 0} AS s,
      CASE WHEN range % 2 = 0 THEN 'é\u202e' END AS t FROM range(5000) ORDER BY n`;
    const out = join(dir, 'many.json');
    expect(await writeResult(conn, sql, { format: 'json', out })).toBe(5000);
    // The same rows read another way: DuckDB's own JSON of each row, parsed, in one array.
    const rows = (await conn.runAndReadAll(`SELECT to_json(r)::VARCHAR AS j FROM (${sql}) r`))
      .getRowObjectsJson()
      .map((r) => JSON.parse(String(r.j)));
    expect(readFileSync(out, 'utf8')).toBe(`${jsonSafe(JSON.stringify(rows, null, 1))}\n`);
    await writeResult(conn, 'SELECT 1 AS a WHERE false', { format: 'json', out });
    expect(readFileSync(out, 'utf8')).toBe('[]\n');
  });

  it('a result that fails part-way leaves the file it was to replace as it was, and no temporary file', async () => {
    const out = join(dir, 'kept.csv');
    await writeResult(conn, 'SELECT 1 AS a', { format: 'csv', out });
    const failing =
      "SELECT CASE WHEN range < 9000 THEN range ELSE error('boom at ' || range) END AS n FROM range(10000)";
    for (const format of ['csv', 'json', 'table'] as const) {
      await expect(writeResult(conn, failing, { format, out })).rejects.toThrow('boom at 9000');
      expect(readFileSync(out, 'utf8')).toBe('a\n1\n');
      expect(existsSync(`${out}.tmp`)).toBe(false);
    }
  });

  it('integers of every width are JSON numbers where JavaScript holds them exactly, text beyond', async () => {
    const out = join(dir, 'ints.json');
    await writeResult(
      conn,
      `SELECT sum(x) AS total, 170141183460469231731687303715884105727::HUGEINT AS huge, 42::UHUGEINT AS u
       FROM (VALUES (1::INTEGER), (397::INTEGER)) v(x)`,
      { format: 'json', out },
    );
    expect(JSON.parse(readFileSync(out, 'utf8'))).toEqual([
      { total: 398, huge: '170141183460469231731687303715884105727', u: 42 },
    ]);
  });
});
