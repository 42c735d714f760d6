/**
 * Hostile upstream data, against the sandbox's `hostile` garbage: names with markup, escapes, bidi controls, NUL and
 * a megabyte of text are stored byte for byte and shown inert everywhere a person reads them; an endless answer is cut
 * at the answer budget with bounded memory; a trickling one at the time-out; numbers no column can hold are refused
 * by name; and a run killed and left unreaped holds no lock.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOSTILE_ERROR, HOSTILE_TEXT } from '../../src/sandbox/garbage.ts';
import { BIN, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { cliWithPeakRss } from '../support/peak-rss.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

/** A raw control or bidirectional character (tab and newline aside): what no human-facing output may hold. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/u;
/** The same characters outside JSON's own escapes: what a JSON output or log line may not hold raw. */
const RAW_IN_JSON = /[\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/u;

let sb: SandboxProcess;
let dir: string;
const env = (data: string) => sandboxEnv(sb, data);
const config = (name: string, cfg: Record<string, unknown>) => {
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(cfg));
  return file;
};

/** Asserts that output for people holds no raw control or bidi character, and returns it. */
function inertOutput(what: string, text: string): string {
  const hit = UNSAFE.exec(text);
  expect(
    hit,
    `${what} holds U+${hit?.[0].codePointAt(0)?.toString(16).padStart(4, '0')} raw at ${hit?.index}`,
  ).toBeNull();
  return text;
}

/** Every distinct value of some columns, read with DuckDB from a Parquet glob of the lake. */
async function parquetValues(glob: string, columns: string[]): Promise<Set<string>> {
  const db = await DuckDBInstance.create(':memory:');
  const conn = await db.connect();
  try {
    const out = new Set<string>();
    for (const c of columns) {
      const rows = (
        await conn.runAndReadAll(`SELECT DISTINCT "${c}" AS v FROM read_parquet('${glob}', union_by_name = true)`)
      ).getRowObjectsJS();
      for (const r of rows) if (typeof r.v === 'string') out.add(r.v);
    }
    return out;
  } finally {
    conn.closeSync();
    db.closeSync();
  }
}

beforeAll(async () => {
  sb = await startSandbox(['--scale', '600', '--chains', '56']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-hostile-'));
});
afterAll(async () => {
  await sb?.control('garbage', {}).catch(() => undefined);
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('hostile names', () => {
  const data = () => join(dir, 'names');

  beforeAll(async () => {
    await sb.control('garbage', { mode: 'hostile', case: 'names' });
  });
  afterAll(async () => {
    await sb.control('garbage', {});
  });

  it('are stored byte for byte, in DuckDB and in Parquet, and every row matches the upstream', async () => {
    const r = await cli(['run', '--chains', 'bsc', '--log-format', 'pretty', '--log-level', 'info'], env(data()));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    inertOutput('the run summary', r.stdout);
    inertOutput('the pretty log', r.stderr);
    expect((await compareWithSandbox(sb, data(), [56])).mismatches).toEqual([]);

    const symbols = [HOSTILE_TEXT.DUST!, HOSTILE_TEXT.BIG!];
    const names = [HOSTILE_TEXT['Dust token']!, HOSTILE_TEXT['Big supply']!, HOSTILE_TEXT.Nameless!];
    expect(Buffer.byteLength(HOSTILE_TEXT.Nameless!)).toBeGreaterThanOrEqual(1024 ** 2);
    const w = await Warehouse.open(data(), { readOnly: true });
    try {
      const stored = await w.all('SELECT symbol, name FROM dodoex.tokens');
      expect(stored.map((x) => x.symbol)).toEqual(expect.arrayContaining(symbols));
      expect(stored.map((x) => x.name)).toEqual(expect.arrayContaining(names));
      const list = await w.all(
        'SELECT base_token_symbol AS s FROM list.liquidity UNION SELECT quote_token_symbol FROM list.liquidity',
      );
      expect(list.map((x) => x.s)).toEqual(expect.arrayContaining(symbols));
    } finally {
      await w.close();
    }
    const lake = join(data(), 'lake');
    const tokens = await parquetValues(join(lake, 'dodoex', 'tokens', '**', '*.parquet'), ['symbol', 'name']);
    for (const v of [...symbols, ...names]) expect(tokens.has(v), JSON.stringify(v.slice(0, 40))).toBe(true);
    const listed = await parquetValues(join(lake, 'list', 'liquidity', '**', '*.parquet'), [
      'base_token_symbol',
      'quote_token_symbol',
    ]);
    for (const v of symbols) expect(listed.has(v)).toBe(true);
  }, 120_000);

  it('are shown inert in tables, reports, the shell and status, and exact in JSON and CSV', async () => {
    const e = { ...env(data()), COLUMNS: '200' };
    const table = await cli(['query', 'SELECT symbol, name FROM dodoex.tokens ORDER BY id'], e);
    expect(table.code, table.stderr).toBe(0);
    inertOutput('a query table', table.stdout);
    // The escapes are visible, and the megabyte name is cut to a cell.
    expect(table.stdout).toContain('\\x1b]0;pwned\\x07\\x1b[2J\\u202eUSDT');
    expect(table.stdout).toContain('NUL\\x00C1\\x85\\x9b31mDEL\\x7f');
    expect(table.stdout.length).toBeLessThan(100_000);
    for (const report of ['top_pools', 'suspicious_pools', 'tvl_by_token']) {
      const r = await cli(['report', report, '--chain', 'bsc'], e);
      expect(r.code, r.stderr).toBe(0);
      inertOutput(`report ${report}`, r.stdout);
    }
    const top = await cli(
      [
        'report',
        'top_pools',
        '--chain',
        'bsc',
        '--columns',
        'pool,base_token_symbol,quote_token_symbol',
        '--limit',
        '1000',
      ],
      e,
    );
    expect(top.stdout).toMatch(/\\x1b\]0;pwned|NUL\\x00C1/);

    const shell = await new Promise<string>((resolve) => {
      const child = spawn(process.execPath, [BIN, 'shell'], {
        env: { ...process.env, ...e },
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.stderr.setEncoding('utf8').on('data', (d: string) => (out += d));
      child.on('exit', () => resolve(out));
      child.stdin.end('SELECT symbol FROM dodoex.tokens ORDER BY id;\n');
    });
    inertOutput('the shell', shell);
    expect(shell).toContain('\\u202eUSDT');

    const status = await cli(['status', '--offline'], e);
    inertOutput('status', status.stdout + status.stderr);

    const json = await cli(['query', 'SELECT id, symbol, name FROM dodoex.tokens ORDER BY id', '--format', 'json'], e);
    expect(json.code, json.stderr).toBe(0);
    expect(RAW_IN_JSON.exec(json.stdout)).toBeNull();
    const rows = JSON.parse(json.stdout) as { symbol: string; name: string }[];
    expect(rows.map((x) => x.symbol)).toEqual(expect.arrayContaining([HOSTILE_TEXT.DUST, HOSTILE_TEXT.BIG]));
    expect(rows.map((x) => x.name)).toEqual(
      expect.arrayContaining([HOSTILE_TEXT.Nameless, HOSTILE_TEXT['Big supply']]),
    );

    const csvFile = join(dir, 'tokens.csv');
    const csv = await cli(
      ['query', 'SELECT symbol FROM dodoex.tokens ORDER BY id', '--format', 'csv', '--out', csvFile],
      e,
    );
    expect(csv.code, csv.stderr).toBe(0);
    expect(readFileSync(csvFile, 'utf8')).toContain(HOSTILE_TEXT.DUST);
  }, 120_000);
});

describe('hostile error messages', () => {
  it('are inert in the summary, the logs (pretty and JSON) and status, and exact in JSON', async () => {
    const data = join(dir, 'error-text');
    const cfg = config('error-text', { maxAttempts: 2 });
    await sb.control('garbage', { mode: 'hostile', case: 'error-text' });
    const json = await cli(
      ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps,dodoex.tokens', '--config', cfg],
      env(data),
    );
    const pretty = await cli(
      ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', cfg, '--log-format', 'pretty'],
      env(data),
    );
    await sb.control('garbage', {});
    expect(json.code).toBe(1);
    expect(inertOutput('the summary', json.stdout)).toContain(
      'indexer said \\x1b[2J\\x1b]0;owned\\x07 \\u202edeifitrec\\u202c <b onmouseover=alert(1)>bold</b> \\x9b6n',
    );
    expect(RAW_IN_JSON.exec(json.stderr)).toBeNull();
    const lines = json.stderr
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.some((l) => Object.values(l).some((v) => typeof v === 'string' && v.includes(HOSTILE_ERROR)))).toBe(
      true,
    );
    expect(pretty.code).toBe(1);
    expect(inertOutput('the pretty log', pretty.stderr)).toContain('\\u202edeifitrec');
    inertOutput('the summary', pretty.stdout);

    const status = await cli(['status', '--offline'], { ...env(data), COLUMNS: '200' });
    expect(inertOutput('status', status.stdout)).toContain('\\x1b[2J');
    const statusJson = await cli(['status', '--offline', '--json'], env(data));
    expect(RAW_IN_JSON.exec(statusJson.stdout)).toBeNull();
    expect(statusJson.stdout.includes('\\u202e')).toBe(true);
    const parsed = JSON.parse(statusJson.stdout) as { datasets: { lastError?: string | null }[] };
    expect(parsed.datasets.some((d) => d.lastError?.includes(HOSTILE_ERROR))).toBe(true);
  }, 120_000);
});

describe('answers without end', () => {
  it('an endless answer is cut at the answer budget: exit 1 naming the size, within the retries, with bounded memory', async () => {
    const cfg = config('endless', { maxAttempts: 3 });
    await sb.control('garbage', { mode: 'hostile', case: 'endless' });
    const r = await cliWithPeakRss(['run', '--chains', 'bsc', '--config', cfg], env(join(dir, 'endless')));
    const small = await cli(
      [
        'run',
        '--chains',
        'bsc',
        '--datasets',
        'dodoex.swaps',
        '--config',
        config('endless-small', { maxAttempts: 2, maxAnswerBytes: '2MiB' }),
      ],
      env(join(dir, 'endless-small')),
    );
    await sb.control('garbage', {});
    expect(r.code, r.stdout + r.stderr.slice(-2000)).toBe(1);
    expect(r.stdout).toMatch(
      /^FAILED \d+ tasks \(.* on bsc\): .*the answer exceeded 48 MiB \([\d,]+ bytes received when reading stopped\), the budget for one answer \(maxAnswerBytes; a page is far smaller\) from http:\/\/127\.0\.0\.1:\d+\/\S+apikey=\*\*\* \(gave up after 3 attempts\)$/m,
    );
    expect(r.peakMiB, `peak RSS ${r.peakMiB.toFixed(0)} MiB`).toBeLessThan(400);
    expect(small.code).toBe(1);
    expect(small.stdout).toMatch(/the answer exceeded 2 MiB .*\(gave up after 2 attempts\)/);
  }, 180_000);

  it('an answer that trickles one byte a second ends at the time-out, with its body named', async () => {
    const cfg = config('trickle', { maxAttempts: 2, timeoutMs: 1500 });
    await sb.control('garbage', { mode: 'hostile', case: 'trickle' });
    const r = await cli(
      ['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', cfg],
      env(join(dir, 'trickle')),
    );
    await sb.control('garbage', {});
    expect(r.code, r.stdout + r.stderr).toBe(1);
    expect(r.stdout).toMatch(
      /FAILED .*the answer did not finish within 1500 ms \(its headers came, its body did not\) from http:\/\/127\.0\.0\.1:\d+\/\S+ \(gave up after 2 attempts\)/,
    );
  }, 60_000);
});

describe('numbers no column can hold', () => {
  it('are refused by name, storing nothing of their page and losing nothing stored; a clean re-run is exact', async () => {
    const datasets = ['dodoex.swaps', 'dodoex.tokens'];
    const run = (data: string) =>
      cli(
        ['run', '--chains', 'bsc', '--datasets', datasets.join(','), '--config', config('numbers', { maxAttempts: 2 })],
        env(data),
      );
    const base = join(dir, 'numbers-base');
    expect((await run(base)).code).toBe(0);
    await sb.control('advance', { blocks: 200 });
    const data = join(dir, 'numbers');
    cpSync(base, data, { recursive: true });
    const fresh = join(dir, 'numbers-fresh');
    const count = async (d: string) => {
      const w = await Warehouse.open(d, { readOnly: true });
      try {
        return Number((await w.all('SELECT count(*) AS n FROM dodoex.swaps'))[0]!.n);
      } finally {
        await w.close();
      }
    };
    const before = await count(data);
    await sb.control('garbage', { mode: 'hostile', case: 'numbers' });
    const r = await run(data);
    const f = await run(fresh);
    await sb.control('garbage', {});
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /FAILED dodoex\.swaps on bsc: .*field "amountIn": expected a BigDecimal within DOUBLE range \(below 1\.8e308\), got "10{78}… \(403 characters\)\. No real value comes near it/,
    );
    expect(await count(data)).toBe(before);
    expect(f.code).toBe(1);
    expect(f.stdout).toMatch(
      /FAILED dodoex\.tokens on bsc: .*field "totalSupply": expected an amount within DOUBLE range \(below 1\.8e308\), got "9{79}… \(10,002 characters\)/,
    );
    expect(inertOutput('the summary', r.stdout + f.stdout).length).toBeLessThan(5000);
    for (const d of [data, fresh]) {
      const again = await run(d);
      expect(again.code, again.stdout + again.stderr).toBe(0);
      expect((await compareWithSandbox(sb, d, [56], datasets)).mismatches).toEqual([]);
    }
  }, 180_000);
});

describe('a run killed and never reaped', () => {
  let parent: ChildProcess | undefined;
  afterAll(() => {
    parent?.kill('SIGKILL');
  });

  it('holds no lock: a run started at once takes it, and the export is exact', async () => {
    const data = join(dir, 'zombie');
    await sb.control('faults', { latencyMs: 20 });
    await sb.control('stats', {});
    // `exec sleep` makes the run's parent a process that never waits for it, like a container's bare PID 1.
    const sh = `"${process.execPath}" "${BIN}" run --chains bsc >/dev/null 2>&1 & echo $!; exec sleep 600`;
    parent = spawn('sh', ['-c', sh], { env: { ...process.env, ...env(data) }, stdio: ['ignore', 'pipe', 'ignore'] });
    const pid = await new Promise<number>((resolve) =>
      parent!.stdout!.setEncoding('utf8').once('data', (d: string) => resolve(Number(d.trim()))),
    );
    await waitForRequests(sb, 20);
    const owner = join(data, '.lock-owner.json');
    expect(existsSync(owner) && (JSON.parse(readFileSync(owner, 'utf8')) as { pid: number }).pid).toBe(pid);
    process.kill(pid, 'SIGKILL');
    const state = async () => /\) (\w)/.exec(readFileSync(`/proc/${pid}/stat`, 'utf8'))?.[1];
    // The kernel's own event: the killed run turns into a zombie (bounded by the test's time-out, not a count of polls).
    while ((await state()) !== 'Z') await new Promise((r) => setImmediate(r));
    expect(await state()).toBe('Z');
    await sb.control('faults', { latencyMs: 0 });
    const r = await cli(['run', '--chains', 'bsc'], env(data));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(r.stdout + r.stderr).not.toMatch(/in use by another/);
    expect(await state()).toBe('Z');
    expect((await compareWithSandbox(sb, data, [56])).mismatches).toEqual([]);
    expect(readdirSync(data)).toContain('warehouse.duckdb');
  }, 120_000);
});
