/** Unattended operation: the scheduler, the data-folder lock, graceful stops, the run ledger and `status`. */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../jobs/events.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '1500', '--chains', '56,137']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-ops-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});
afterEach(async () => {
  await sb.control('faults', { latencyMs: 0 });
});

async function ledger(data: string): Promise<{ runs: Record<string, any>[]; tasks: Record<string, any>[] }> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const runs = await w.all(
      'SELECT run_id, jobs, epoch_ms(started_at) AS s, epoch_ms(ended_at) AS e, status, tasks, failed, error FROM _pool_export.runs ORDER BY started_at',
    );
    const tasks = await w.all(
      'SELECT run_id, dataset, status, error_class, block, cursor_before, cursor_after FROM _pool_export.run_tasks',
    );
    return { runs, tasks };
  } finally {
    await w.close();
  }
}

describe('scheduler', () => {
  it('runs jobs on per-second schedules, never overlapping, and SIGTERM leaves the warehouse consistent and the ledger closed', async () => {
    const data = join(dir, 'sched');
    const env = sandboxEnv(sb, data);
    // Backfill first, so that scheduled runs are incremental. Slow answers make every run outlast its one-second tick,
    // however fast the machine: a run with nothing new still asks its heads (at least one answer of 1.5 s).
    expect((await cli(['run', '--chains', 'bsc', '--jobs', 'events,liquidity'], env)).code).toBe(0);
    await sb.control('faults', { latencyMs: 1500 });
    const runsDone = (stderr: string) => (stderr.match(/"event":"run-done"/g) ?? []).length;
    const r = await cli(
      [
        'schedule',
        '--chains',
        'bsc',
        '--jobs',
        'events,liquidity',
        '--schedule',
        'events=* * * * * *',
        '--schedule',
        'liquidity=*/2 * * * * *',
      ],
      env,
      {
        termWhen: (stderr) => runsDone(stderr) >= 3,
        termAfterMs: 60_000,
      },
    );
    expect(runsDone(r.stderr)).toBeGreaterThanOrEqual(3);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('scheduler stopped');
    const { runs } = await ledger(data);
    expect(runs.length).toBeGreaterThanOrEqual(4);
    for (let i = 1; i < runs.length; i++) expect(Number(runs[i]!.s)).toBeGreaterThanOrEqual(Number(runs[i - 1]!.e));
    expect(runs.every((x) => x.e !== null && ['ok', 'stopped'].includes(String(x.status)))).toBe(true);
    expect(r.stderr).toMatch(/"event":"skipped"/);
    await sb.control('faults', { latencyMs: 0 });
    const again = await cli(['run', '--chains', 'bsc', '--jobs', 'events'], env);
    expect(again.code, again.stderr).toBe(0);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
  }, 120_000);

  it('--every runs a job every second, but only once a head of its routes moved: idle ticks make one head query and no run', async () => {
    const data = join(dir, 'every');
    const env = sandboxEnv(sb, data);
    expect((await cli(['run', '--chains', 'bsc', '--jobs', 'events'], env)).code).toBe(0);
    const count = (stderr: string, event: string) => (stderr.match(new RegExp(`"event":"${event}"`, 'g')) ?? []).length;
    let advanced = false;
    let counting = false;
    let idleAtReset = 0;
    let idleBefore = 0;
    let requestsIdle = 0;
    const r = await cli(
      ['schedule', '--chains', 'bsc', '--jobs', 'events', '--every', '1s', '--log-level', 'debug'],
      env,
      {
        termWhen: (stderr) => {
          // The first tick runs (nothing is known of the heads yet); then the chain stands still: idle ticks. Then new
          // blocks: the next tick runs.
          if (!counting && count(stderr, 'run-done') === 1) {
            // From the end of the first run, the sandbox counts what the idle ticks ask.
            counting = true;
            idleAtReset = count(stderr, 'idle');
            void sb.control('stats', {});
          }
          if (!advanced && count(stderr, 'run-done') === 1 && count(stderr, 'idle') >= idleAtReset + 3) {
            advanced = true;
            idleBefore = count(stderr, 'idle');
            void sb.control<{ requests: number }>('stats').then((st) => {
              requestsIdle = st.requests;
              return sb.control('advance', { blocks: 5 });
            });
          }
          return advanced && count(stderr, 'run-done') >= 2;
        },
        termAfterMs: 90_000,
      },
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    expect(r.stdout).toContain('scheduler started: events (every 1s)');
    expect(count(r.stderr, 'run-done')).toBe(2);
    expect(idleBefore).toBeGreaterThanOrEqual(3);
    expect(r.stderr).toMatch(/"event":"idle".*"no route's head moved since the job's last run"/);
    // Two runs in the ledger from the scheduler (and the backfill): the idle ticks left no row.
    expect((await ledger(data)).runs).toHaveLength(3);
    // One head query per idle tick (one route: bsc's dodoex deployment), give or take the tick under way.
    expect(requestsIdle).toBeGreaterThanOrEqual(idleBefore - idleAtReset - 1);
    expect(requestsIdle).toBeLessThanOrEqual(idleBefore - idleAtReset + 1);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
    const bad = await cli(['schedule', '--jobs', 'events', '--every', '0.5s'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--every must be at least 1s/);
  }, 120_000);

  it('--dashboard renews the page after each successful run, by a temporary file renamed over it', async () => {
    const data = join(dir, 'sched-dash');
    const env = sandboxEnv(sb, data);
    const page = join(dir, 'pools.html');
    const written = (stderr: string) => (stderr.match(/"event":"dashboard-written"/g) ?? []).length;
    const r = await cli(
      [
        'schedule',
        '--chains',
        'bsc',
        '--jobs',
        'events,liquidity',
        '--schedule',
        'events=* * * * * *',
        '--run-now',
        '--dashboard',
        page,
      ],
      env,
      { termWhen: (stderr) => written(stderr) >= 3 },
    );
    expect(r.code, r.stderr).toBe(0);
    expect(written(r.stderr)).toBeGreaterThanOrEqual(3);
    const html = readFileSync(page, 'utf8');
    expect(html).toContain('id="dashboard-data"');
    expect(html).toContain('data-chain-id="56"');
    expect(existsSync(`${page}.tmp`)).toBe(false);
    // A folder that does not exist is refused before anything runs.
    const bad = await cli(['schedule', '--jobs', 'events', '--dashboard', join(dir, 'no', 'such', 'p.html')], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--dashboard .*: the folder .* does not exist/);
  }, 120_000);

  it('rejects an invalid cron expression with the job, field and fix', async () => {
    const r = await cli(['schedule', '--schedule', 'events=*/5 25 * * *'], sandboxEnv(sb, join(dir, 'cron')));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/invalid cron expression "\*\/5 25 \* \* \*" for job events: hour "25".*Use five fields/);
  });
});

describe('the data-folder lock and graceful stops', () => {
  it('stops a second run at once with a clear message while the first runs, lets a third wait its turn, and ends exact', async () => {
    const data = join(dir, 'lock');
    const env = sandboxEnv(sb, data);
    await sb.control('faults', { latencyMs: 150 });
    const first = cli(['run', '--chains', 'polygon', '--jobs', 'events'], env);
    // Start the second only once the first holds the lock (its owner file appears), however slow the machine is.
    while (!existsSync(join(data, '.lock-owner.json'))) await new Promise((r) => setTimeout(r, 20));
    expect(existsSync(join(data, '.lock-owner.json'))).toBe(true);
    const second = await cli(['run', '--chains', 'polygon', '--jobs', 'events'], env);
    expect(second.code).toBe(1);
    expect(second.stderr).toMatch(/data folder .* is in use by another pool-export process \(pid \d+, run of events/);
    // A third asks to wait: it runs once the first is done, and finds the first's work in place.
    const third = cli(['run', '--chains', 'polygon', '--jobs', 'events', '--wait-lock', '120'], env);
    expect((await first).code).toBe(0);
    const waited = await third;
    expect(waited.code, waited.stderr).toBe(0);
    await sb.control('faults', { latencyMs: 0 });
    expect((await compareWithSandbox(sb, data, [137], events.datasets)).mismatches).toEqual([]);
  }, 120_000);

  it('on SIGTERM commits or rolls back the current batch, closes the ledger, and the next run resumes exactly', async () => {
    const data = join(dir, 'term');
    const env = sandboxEnv(sb, data);
    await sb.control('faults', { latencyMs: 300 });
    await sb.control('stats', {});
    // Stopped once the sandbox has served 10 of its requests: mid-backfill, whatever the machine's speed.
    const r = await cli(['run', '--chains', 'bsc', '--jobs', 'events'], env, { termOn: waitForRequests(sb, 10) });
    // The process ends by the signal it was sent, as a shell expects of a stopped program (status 143 there).
    expect([r.code, r.signal]).toEqual([null, 'SIGTERM']);
    expect(r.stdout).toContain('stopped on request');
    const { runs, tasks } = await ledger(data);
    expect(runs.map((x) => x.status)).toEqual(['stopped']);
    // A task under way when the stop came is `stopped`: no failure, no error.
    expect(tasks.every((t) => ['ok', 'stopped'].includes(String(t.status)))).toBe(true);
    // Tasks not started when the stop came are not in the ledger at all.
    expect(tasks.length).toBeLessThan(events.datasets.length);
    await sb.control('faults', { latencyMs: 0 });
    expect((await cli(['run', '--chains', 'bsc', '--jobs', 'events'], env)).code).toBe(0);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 120_000);
});

describe('logs', () => {
  it('--log-format pretty writes one readable line per event: time, level, event, task, fields', async () => {
    const data = join(dir, 'pretty');
    const r = await cli(
      ['run', '--chains', 'bsc', '--jobs', 'liquidity', '--log-format', 'pretty', '--log-level', 'info'],
      sandboxEnv(sb, data),
    );
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stderr.trim().split('\n');
    expect(lines.length).toBeGreaterThanOrEqual(4);
    // Not a terminal: one line per event, however long, none wrapped.
    for (const line of lines) expect(line).toMatch(/^\[\d\d:\d\d:\d\d\] (INFO|WARN|ERROR): [a-z-]+( \S.*)?$/);
    expect(lines.filter((l) => / INFO: task-done /.test(l))).toContainEqual(
      expect.stringMatching(
        / INFO: task-done list\.liquidity@bsc rows=\d+ pages=\d+ requests=\d+ retries=0 duplicates=0$/,
      ),
    );
    expect(lines.map((l) => /: ([a-z-]+)/.exec(l)![1])).toEqual(
      expect.arrayContaining(['run-start', 'task-start', 'task-done', 'run-done']),
    );
  });
});

describe('status', () => {
  it('is fresh after a run and reports stale datasets, with exit code 3, once the upstream moves on', async () => {
    const data = join(dir, 'status');
    const env = sandboxEnv(sb, data);
    expect((await cli(['run', '--chains', 'polygon', '--jobs', 'state'], env)).code).toBe(0);
    const fresh = await cli(['status', '--json', '--stale-after', '1h'], env);
    expect(fresh.code, fresh.stderr).toBe(0);
    const before = JSON.parse(fresh.stdout) as {
      datasets: { dataset: string; stale: boolean; lagBlocks: number; rows: number }[];
    };
    expect(before.datasets.length).toBeGreaterThan(10);
    expect(before.datasets.every((d) => !d.stale && d.lagBlocks === 0)).toBe(true);
    expect(before.datasets.find((d) => d.dataset === 'dodoex.pairs')!.rows).toBeGreaterThan(0);
    await sb.control('advance', { blocks: 3600, chainId: 137 });
    const stale = await cli(['status', '--json', '--stale-after', '1h'], env);
    expect(stale.code).toBe(3);
    const after = JSON.parse(stale.stdout) as { datasets: { stale: boolean; lagBlocks: number; lagSeconds: number }[] };
    expect(after.datasets.every((d) => d.stale && d.lagBlocks === 3600 && d.lagSeconds === 7200)).toBe(true);
    const table = await cli(['status', '--stale-after', '1h'], env);
    expect(table.stdout).toMatch(/dodoex\.pairs\s+polygon .* STALE/);
  }, 120_000);

  it('judges only the chains the configuration selects, or --chains; the others it names in one line', async () => {
    const data = join(dir, 'status-chains');
    const env = sandboxEnv(sb, data);
    for (const chain of ['bsc', 'polygon'])
      expect((await cli(['run', '--chains', chain, '--jobs', 'liquidity'], env)).code).toBe(0);
    const cfg = join(dir, 'polygon-only.json');
    writeFileSync(cfg, JSON.stringify({ chains: ['polygon'] }));
    // Far in the future: every dataset is stale, so exit 3 says a judged chain was shown.
    const table = await cli(['status', '--offline', '--config', cfg], { ...env, COLUMNS: '80' });
    expect(table.stdout).toMatch(/list\.liquidity +polygon/);
    expect(table.stdout).not.toMatch(/^\S+ +bsc /m);
    expect(table.stdout.replace(/\s+/g, ' ')).toContain(
      'not shown: bsc: data in this folder, but not among the configured chains ("chains" in the config file); --chains bsc shows them',
    );
    for (const line of table.stdout.split('\n')) expect(line.length).toBeLessThanOrEqual(80);
    const json = JSON.parse((await cli(['status', '--offline', '--json', '--config', cfg], env)).stdout) as {
      chains: string[];
      notShown: string[];
      datasets: { chain: string }[];
    };
    expect(json.chains).toEqual(['polygon']);
    expect(json.notShown).toEqual(['bsc']);
    expect(new Set(json.datasets.map((d) => d.chain))).toEqual(new Set(['polygon']));
    // Named on the command line, a chain is shown whatever the config says, and the others are not mentioned.
    const named = await cli(['status', '--offline', '--config', cfg, '--chains', 'bsc'], env);
    expect(named.stdout).toMatch(/list\.liquidity +bsc/);
    expect(named.stdout).not.toMatch(/polygon|not shown/);
    // A configured chain whose tasks only ever failed is never exported, and stale (exit 3), with a hint.
    const both = join(dir, 'both.json');
    writeFileSync(both, JSON.stringify({ chains: ['bsc', 'polygon'], maxAttempts: 1 }));
    await sb.control('faults', { faults: 'http500=1' });
    const failing = join(dir, 'status-never');
    expect(
      (await cli(['run', '--chains', 'bsc', '--jobs', 'liquidity', '--config', both], sandboxEnv(sb, failing))).code,
    ).toBe(1);
    await sb.control('faults', { faults: '' });
    const never = await cli(['status', '--offline', '--config', both], { ...sandboxEnv(sb, failing), COLUMNS: '200' });
    expect(never.code).toBe(3);
    expect(never.stdout).toMatch(/list\.liquidity +bsc .*never .*STALE/);
    expect(never.stdout).toContain(
      'never exported on bsc: a chain you do not export can be left out with "chains" in the config file, or with --chains',
    );
  }, 120_000);
});
