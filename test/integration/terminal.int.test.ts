/**
 * `run` at a terminal, as a person sees it: in a pseudo-terminal of 80×24 (test/support/terminal.ts), the output played
 * back through a terminal emulator. Log lines are readable, short enough, and never torn by the progress bars; the bar
 * of a sharded backfill moves; Ctrl-C stops the run within its batch, leaves the lake to the next run, and ends the
 * process by SIGINT.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { BIN, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { qt } from '../../src/util/sql.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { COLUMNS, inTerminal, screen } from '../support/terminal.ts';

let sb: SandboxProcess;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '3000', '--chains', '56']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-terminal-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The environment of a person's shell pointed at the sandbox: no COLUMNS, so the width is the terminal's. */
function env(data: string, over: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { COLUMNS: _c, LINES: _l, ...rest } = process.env;
  return { ...rest, ...sandboxEnv(sb, data), ...over };
}

/** A log line on the terminal: `[HH:MM:SS] LEVEL: …`. */
const LOG_LINE = /^\[\d\d:\d\d:\d\d\] (INFO|WARN|ERROR|DEBUG): /;

/** The lines as logged: a wrapped log line's following lines (indented by 4) joined to it. */
function logical(lines: readonly string[]): string[] {
  const out: string[] = [];
  for (const l of lines)
    if (/^ {4}\S/.test(l) && out.length) out[out.length - 1] += ` ${l.trim()}`;
    else out.push(l);
  return out;
}

/** The characters the progress bars are drawn with. */
const BAR = /[\u2588\u2591]/;

describe('run at an 80-column terminal', () => {
  it('logs readable lines of at most 80 columns, warnings and errors only, a repeated error once, under no bar', async () => {
    const data = join(dir, 'unreachable');
    const r = await inTerminal([process.execPath, BIN, 'run', '--jobs', 'liquidity'], {
      env: env(data, { POOL_EXPORT_BASE_URL: 'http://no-such-host.invalid' }),
    });
    expect(r.code).toBe(1);
    const { lines, overflows } = await screen(r.raw);
    const text = lines.join('\n');
    expect(overflows, text).toBe(0);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(COLUMNS);
    expect(text).not.toMatch(/\{"level"/);
    expect(text).not.toMatch(BAR);
    const logs = logical(lines).filter((l) => LOG_LINE.test(l));
    // The host's own line, and the first task that failed of it.
    expect(logs.map((l) => /(WARN|ERROR): (\S+)/.exec(l)?.slice(1).join(' '))).toEqual([
      'ERROR host-unreachable',
      'ERROR task-failed',
    ]);
    expect(logs.every((l) => / (WARN|ERROR): /.test(l))).toBe(true);
    // One cause, one line: the host's error once in full; the other 7 tasks that failed of it are left to the
    // summary's count (each has its line at --log-level info).
    const failed = logs.filter((l) => l.includes('task-failed list.liquidity@'));
    expect(failed).toHaveLength(1);
    expect(failed[0]).toContain('no-such-host.invalid');
    expect(text).not.toContain('the same error as');
    // The summary: no table row for tasks that failed before reading anything (their FAILED line tells them), the
    // count, and the failure line.
    expect(lines).not.toContainEqual(expect.stringMatching(/^dataset +chains +rows +pages +requests +status$/));
    expect(lines.join(' ').replace(/\s+/g, ' ')).toContain(
      'FAILED 8 tasks (list.liquidity on 8 chains): the upstream host no-such-host.invalid',
    );
  }, 60_000);

  it('a refused key on every dataset of a chain: one error line, one FAILED line, no table, at most 15 lines', async () => {
    const data = join(dir, 'wrong-key');
    const r = await inTerminal([process.execPath, BIN, 'run', '--chains', 'bsc'], {
      env: env(data, { POOL_EXPORT_API_KEY: 'wrong-key-123' }),
    });
    expect(r.code).toBe(1);
    const { lines } = await screen(r.raw);
    const text = lines.join('\n');
    const logs = logical(lines).filter((l) => LOG_LINE.test(l));
    expect(logs, text).toHaveLength(1);
    expect(logs[0]).toMatch(/ERROR: task-failed .* the service at 127\.0\.0\.1:\d+ refused the API key/);
    expect(logs[0]).not.toContain('apikey=');
    const failedLines = logical(lines.map((l) => l.replace(/^ {2}(?=\S)/, '    '))).filter((l) =>
      l.startsWith('FAILED'),
    );
    expect(failedLines).toEqual([
      expect.stringMatching(
        /^FAILED 41 tasks \(41 datasets on bsc\): the block lookup failed: the service at 127\.0\.0\.1:\d+ refused the API key .*set POOL_EXPORT_API_KEY to a valid key$/,
      ),
    ]);
    // Before: a line of every task that failed (two to four rows each), and one FAILED line per subgraph; then a
    // table row of each of the 41 datasets. One cause is one line plus the summary.
    expect(lines.filter((l) => l.trim()).length, text).toBeLessThanOrEqual(15);
  }, 60_000);

  it('an upstream that takes connections and never answers: what it waits for, then one line naming the host', async () => {
    // A listener that reads every request and answers none, counting them.
    const { createServer } = await import('node:net');
    let requests = 0;
    const held: import('node:net').Socket[] = [];
    const server = createServer((socket) => {
      held.push(socket);
      socket.on('data', (d) => (requests += (d.toString('latin1').match(/^POST /gm) ?? []).length));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as import('node:net').AddressInfo).port;
    const data = join(dir, 'stalled');
    const config = join(dir, 'stalled.json');
    // A 6 s time limit (30 s by default) keeps the test short; the waiting line comes after 5 s of an attempt.
    writeFileSync(config, JSON.stringify({ timeoutMs: 6000 }));
    try {
      const r = await inTerminal([process.execPath, BIN, 'run', '--config', config], {
        env: env(data, { POOL_EXPORT_BASE_URL: `http://127.0.0.1:${port}` }),
      });
      expect(r.code).toBe(1);
      const { lines } = await screen(r.raw);
      const text = lines.join('\n');
      const logs = logical(lines).filter((l) => LOG_LINE.test(l));
      const waiting = logs.filter((l) => l.includes('WARN: waiting'));
      expect(
        waiting.map((l) => /attempt=(\d) of=(\d)/.exec(l)?.slice(1).join('/')),
        text,
      ).toEqual(['1/3', '2/3', '3/3']);
      for (const l of waiting) expect(l).toContain(`host=127.0.0.1:${port}`);
      expect(logs.filter((l) => l.includes('ERROR: host-stalled'))).toHaveLength(1);
      // One route of the host asked, three times; its other 23 routes not at all.
      expect(requests).toBe(3);
      const summary = lines.join(' ').replace(/\s+/g, ' ');
      expect(summary).toContain(
        `FAILED 328 tasks (41 datasets on 8 chains): the block lookup failed: the upstream host 127.0.0.1:${port} took the connection but sent no answer`,
      );
      expect(summary).toContain(`check that 127.0.0.1:${port} is the service's address`);
    } finally {
      for (const s of held) s.destroy();
      server.close();
    }
  }, 120_000);

  it("draws one bar for a sharded backfill, whose share grows with its shards' pages; logs go above the bars", async () => {
    const data = join(dir, 'sharded');
    const config = join(dir, 'sharded.json');
    // Four shards of 200-row pages, a slow upstream, and a fault now and then; every event logged (retries are info).
    writeFileSync(config, JSON.stringify({ shards: 4, pageSize: 100, batchRows: 500 }));
    await sb.control('faults', { latencyMs: 150, faults: 'http500=0.05' });
    try {
      const r = await inTerminal(
        [
          process.execPath,
          BIN,
          'run',
          '--chains',
          'bsc',
          '--datasets',
          'dodoex.swaps',
          '--config',
          config,
          '--log-level',
          'info',
        ],
        { env: env(data) },
      );
      expect(r.code, r.raw.slice(-2000)).toBe(0);
      // Every drawing of the task's bar, with its share and pages.
      const plain = r.raw.replace(/\u001b\[[0-9;?]*[A-Za-z]/g, '');
      const draws = [...plain.matchAll(/dodoex\.swaps@bsc +\|[^|]*\| +(\d+)% (\d+) pages/g)].map((m) => ({
        share: Number(m[1]),
        pages: Number(m[2]),
      }));
      expect(draws.length).toBeGreaterThan(3);
      const shares = draws.map((d) => d.share);
      expect(
        shares.some((s) => s > 0 && s < 100),
        shares.join(' '),
      ).toBe(true);
      expect(Math.max(...shares)).toBeGreaterThanOrEqual(50);
      // One bar for the task, not one per shard: its pages count every shard's.
      const pages = draws.map((d) => d.pages);
      expect(Math.max(...pages)).toBeGreaterThan(4 * 2);
      const { lines, overflows } = await screen(r.raw);
      const text = lines.join('\n');
      // Once done, the bars are gone, and each log line starts a line of its own, whole.
      expect(text).not.toMatch(BAR);
      const retries = logical(lines).filter((l) => l.includes('INFO: retry dodoex.swaps@bsc'));
      expect(retries.length, text).toBeGreaterThan(0);
      for (const l of retries) expect(l).toMatch(LOG_LINE);
      expect(overflows).toBe(0);
    } finally {
      await sb.control('faults', { latencyMs: 0, faults: '' });
    }
  }, 120_000);

  it('Ctrl-C stops the run within its batch, says what it kept, ends by SIGINT; the next run completes it exactly', async () => {
    const data = join(dir, 'ctrl-c');
    await sb.control('faults', { latencyMs: 100 });
    let r: Awaited<ReturnType<typeof inTerminal>>;
    try {
      // Ctrl-C once the bars show pages read.
      r = await inTerminal([process.execPath, BIN, 'run', '--chains', 'bsc'], {
        env: env(data),
        ctrlC: (raw) => / [1-9]\d* pages/.test(raw),
      });
    } finally {
      await sb.control('faults', { latencyMs: 0 });
    }
    // `script` reports a command ended by a signal as 128 + its number.
    expect(r.code, r.raw.slice(-2000)).toBe(130);
    expect(r.left).toEqual([]);
    const { lines } = await screen(r.raw);
    const text = lines.join('\n');
    expect(text).toMatch(/WARN: stop-requested signal=SIGINT/);
    expect(logical(lines).join('\n')).toMatch(
      /stopped on request \(\d+ of \d+ tasks not started\): committed batches are kept/,
    );
    expect(text).not.toMatch(BAR);
    expect(lines).toContainEqual(expect.stringMatching(/^dataset +chains +rows +pages +requests +status$/));
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      expect((await w.all('SELECT status FROM _pool_export.runs')).map((x) => x.status)).toEqual(['stopped']);
      // The lake was left to the next run: no file written, and every dataset with committed rows listed for it.
      expect(
        existsSync(join(data, 'lake'))
          ? readdirSync(join(data, 'lake'), { recursive: true }).filter((f) => String(f).endsWith('.parquet'))
          : [],
      ).toEqual([]);
      const listed = new Set(
        (await w.all('SELECT dataset FROM _pool_export.lake_pending')).map((x) => String(x.dataset)),
      );
      const stored: string[] = [];
      for (const ds of DATASETS)
        if (
          (await w.all("SELECT 1 FROM duckdb_tables() WHERE schema_name || '.' || table_name = $1", [ds.table]))
            .length &&
          Number((await w.all(`SELECT count(*) AS n FROM ${qt(ds.table)}`))[0]!.n) > 0
        )
          stored.push(ds.name);
      for (const name of stored) expect(listed, name).toContain(name);
    } finally {
      await w.close();
    }
    const next = await cli(['run', '--chains', 'bsc'], sandboxEnv(sb, data));
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect((await compareWithSandbox(sb, data, [56])).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 180_000);

  it('report, report --list and schema check fit 80 columns: the most important columns first, the others named', async () => {
    const data = join(dir, 'reports');
    expect((await cli(['run', '--chains', 'bsc'], sandboxEnv(sb, data))).code).toBe(0);
    const top = await inTerminal([process.execPath, BIN, 'report', 'top_pools', '--chains', 'bsc', '--limit', '5'], {
      env: env(data),
    });
    expect(top.code, top.raw.slice(-1500)).toBe(0);
    const t = await screen(top.raw);
    expect(t.overflows).toBe(0);
    for (const l of t.lines) expect(l.length, l).toBeLessThanOrEqual(COLUMNS);
    // top_pools declares rank, the pair, tracked and service TVL and APY first: they are the ones shown.
    const head = t.lines.find((l) => l.startsWith('chain_id') || l.includes('rank'))!;
    for (const c of ['rank', 'base_token_symbol', 'quote_token_symbol', 'tvl_usd']) expect(head, head).toContain(c);
    expect(t.lines.join(' ').replace(/\s+/g, ' ')).toMatch(
      /\(\d+ more columns?: [a-z_, ]*\bpool\b[a-z_, ]*; --wide shows them all, --columns chooses, --format csv gives them exactly\)/,
    );
    for (const args of [
      ['report', '--list'],
      ['schema', 'check', '--chains', 'bsc'],
    ]) {
      const r = await inTerminal([process.execPath, BIN, ...args], { env: env(data) });
      expect(r.code, r.raw.slice(-1500)).toBe(0);
      const s = await screen(r.raw);
      expect(s.overflows, `${args.join(' ')}: ${s.lines.join('\n')}`).toBe(0);
      expect(s.lines.length).toBeGreaterThan(5);
    }
  }, 120_000);
});
