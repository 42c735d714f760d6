/**
 * The metrics of a running `schedule` (`--metrics-port`) and of `run --metrics-file`, against the sandbox as a real
 * process: what the endpoint serves, that Debian's `promtool check metrics` accepts it, that its counts equal what the
 * warehouse holds, and, end to end, that a real Prometheus scraping it fires the repository's stale-data alert once
 * the sandbox is stopped. `promtool` and `prometheus` come from Debian's `prometheus` package (`make ops-tools`).
 */
import { type ChildProcess, execFileSync, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { freePort } from '../support/ports.ts';
import { samples } from '../support/prometheus-text.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const ALERTS = join(ROOT, 'deploy/prometheus/alerts.yml');

/** Whether Debian's prometheus package is here; CI installs it, and may not go without. */
const havePrometheus = spawnSync('promtool', ['--version']).status === 0;
if (!havePrometheus && process.env.CI === 'true')
  throw new Error('promtool is not installed, and CI=true: `make ops-tools` installs Debian’s prometheus package');

let sb: SandboxProcess;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '300', '--chains', '56', '--history-days', '3']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-metrics-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The sum of every sample of `name` whose labels include `having`. */
const total = (s: Map<string, number>, name: string, having = '') =>
  [...s].filter(([k]) => k.startsWith(`${name}{`) && k.includes(having)).reduce((a, [, v]) => a + v, 0);

/** A `schedule` process with its metrics endpoint; resolves once it printed the endpoint's URL. */
async function schedule(
  args: string[],
  env: Record<string, string>,
): Promise<{ child: ChildProcess; url: string; stderr: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'schedule', '--metrics-port', '0', ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const url = await new Promise<string>((resolveUrl, reject) => {
    let out = '';
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /^metrics: (http:\/\/\S+)\/metrics/m.exec(out);
      if (m) resolveUrl(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`schedule exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    url,
    stderr: () => stderr,
    stop: () =>
      new Promise((r) => {
        if (child.exitCode !== null) return r(child.exitCode);
        child.once('exit', (code) => r(code));
        child.kill('SIGTERM');
      }),
  };
}

/** Polls `probe` every 250 ms until it returns a value, or fails after `ms`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

/** Rows per dataset in the warehouse, read after the process let go of it. */
async function warehouseRows(data: string, tables: readonly string[]): Promise<Record<string, number>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const out: Record<string, number> = {};
    for (const t of tables) out[t] = Number((await w.all(`SELECT count(*) AS n FROM ${t}`))[0]!.n);
    return out;
  } finally {
    await w.close();
  }
}

describe('schedule --metrics-port', () => {
  it('serves /healthz at once, /readyz after the first head read, and /metrics that promtool accepts and the warehouse confirms', async () => {
    const data = join(dir, 'serve');
    const s = await schedule(
      ['--chains', 'bsc', '--jobs', 'events', '--schedule', 'events=0 0 1 1 *', '--run-now'],
      sandboxEnv(sb, data),
    );
    try {
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      await until('readiness', async () => ((await fetch(`${s.url}/readyz`)).status === 200 ? true : undefined));
      const text = await until('the first run in the metrics', async () => {
        const t = await (await fetch(`${s.url}/metrics`)).text();
        return /pool_export_runs_total\{export_job="events",outcome="ok"\} 1/.test(t) ? t : undefined;
      });
      const res = await fetch(`${s.url}/metrics`);
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
      expect((await fetch(`${s.url}/nothing`)).status).toBe(404);
      expect((await fetch(`${s.url}/metrics`, { method: 'POST' })).status).toBe(405);
      if (havePrometheus) {
        const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
        expect(check.status, check.stdout + check.stderr).toBe(0);
      }
      const m = samples(text);
      // The process' own metrics are there too, under the same prefix.
      expect(m.get('pool_export_process_resident_memory_bytes')).toBeGreaterThan(0);
      // The sandbox's head was read, so the lag is in blocks, and nothing is stale.
      expect(m.get('pool_export_lag_blocks{chain="bsc",dataset="dodoex.swaps"}')).toBeGreaterThanOrEqual(0);
      expect(total(m, 'pool_export_stale')).toBe(0);
      expect(total(m, 'pool_export_tasks_total', 'status="failed"')).toBe(0);
      const code = await s.stop();
      expect(code, s.stderr()).toBe(0);
      // Counted against what the warehouse holds: a first run into an empty folder, so each dataset's rows counted
      // are its rows stored, for every dataset of the job.
      const counted = Object.fromEntries(
        [...m]
          .filter(([k]) => k.startsWith('pool_export_rows_total{'))
          .map(([k, v]) => [/dataset="([^"]+)"/.exec(k)![1]!, v]),
      );
      expect(Object.keys(counted).length).toBeGreaterThan(5);
      expect(counted).toEqual(await warehouseRows(data, Object.keys(counted)));
      expect(counted['dodoex.swaps']).toBeGreaterThan(0);
      expect(m.get('pool_export_stored_rows{chain="bsc",dataset="dodoex.swaps"}')).toBe(counted['dodoex.swaps']);
      expect(total(m, 'pool_export_read_bytes_total')).toBeGreaterThan(0);
    } finally {
      await s.stop();
    }
  }, 120_000);

  it('is not ready while the upstream cannot be reached, and says why; a bad port is a usage error', async () => {
    const data = join(dir, 'unready');
    const env = { ...sandboxEnv(sb, data), POOL_EXPORT_BASE_URL: `http://127.0.0.1:${await freePort()}` };
    const s = await schedule(['--chains', 'bsc', '--jobs', 'events', '--metrics-head-every', '1s'], env);
    try {
      expect((await fetch(`${s.url}/healthz`)).status).toBe(200);
      const body = await until(
        'a failed head read',
        async () => {
          const r = await fetch(`${s.url}/readyz`);
          const t = await r.text();
          return r.status === 503 && /could not be read/.test(t) ? t : undefined;
        },
        30_000,
      );
      expect(body).toMatch(/^not ready: the upstream's head could not be read/);
      expect(body).not.toContain(sb.apiKey);
    } finally {
      expect(await s.stop()).toBe(0);
    }
    for (const port of ['70000', '-1', 'x']) {
      const r = await cli(['schedule', '--jobs', 'events', '--metrics-port', port], env);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/--metrics-port takes a TCP port from 1 to 65535/);
    }
    const bad = await cli(['schedule', '--jobs', 'events', '--metrics-port', '0', '--metrics-head-every', 'soon'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--metrics-head-every takes a duration/);
  }, 60_000);
});

describe('run --metrics-file', () => {
  it('writes the textfile, its counters adding up over runs, and promtool accepts it', async () => {
    const data = join(dir, 'file');
    const file = join(dir, 'pool-export.prom');
    const env = sandboxEnv(sb, data);
    const first = await cli(['run', '--chains', 'bsc', '--jobs', 'events', '--metrics-file', file], env);
    expect(first.code, first.stderr).toBe(0);
    const one = samples(readFileSync(file, 'utf8'));
    // A first run into an empty folder: its rows counted are the rows stored.
    const swaps = 'pool_export_rows_total{chain="bsc",dataset="dodoex.swaps"}';
    expect(one.get(swaps)).toBe((await warehouseRows(data, ['dodoex.swaps']))['dodoex.swaps']);
    await sb.control('advance', { blocks: 400 });
    const second = await cli(['run', '--chains', 'bsc', '--jobs', 'events', '--metrics-file', file], env);
    expect(second.code, second.stderr).toBe(0);
    const text = readFileSync(file, 'utf8');
    const two = samples(text);
    expect(two.get('pool_export_runs_total{export_job="events",outcome="ok"}')).toBe(2);
    // Over both runs, the rows the run ledger recorded for them (the second run reads the reorg window again, so
    // this is more than the rows stored).
    const w = await Warehouse.open(data, { readOnly: true });
    const ledger = await w
      .all("SELECT sum(rows)::BIGINT AS n FROM _pool_export.run_tasks WHERE dataset = 'dodoex.swaps'")
      .finally(() => w.close());
    expect(two.get(swaps)).toBe(Number(ledger[0]!.n));
    expect(two.get(swaps)).toBeGreaterThan(one.get(swaps)!);
    // A process that ended has no process metrics in the file.
    expect([...two.keys()].some((k) => k.startsWith('pool_export_process_'))).toBe(false);
    if (havePrometheus) {
      const check = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
      expect(check.status, check.stdout + check.stderr).toBe(0);
    }
    const bad = await cli(['run', '--jobs', 'events', '--metrics-file', join(dir, 'no', 'such', 'x.prom')], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--metrics-file .*: the folder .* does not exist/);
  }, 120_000);
});

describe.runIf(havePrometheus)('a real Prometheus scraping schedule', () => {
  it("fires the repository's stale-data alert once the sandbox is stopped", async () => {
    const own = await startSandbox(['--scale', '100', '--chains', '56', '--history-days', '2']);
    const data = join(dir, 'prom');
    const s = await schedule(
      [
        '--chains',
        'bsc',
        '--jobs',
        'events',
        '--schedule',
        'events=0 0 1 1 *',
        '--run-now',
        '--metrics-head-every',
        '1s',
        '--stale-after',
        '1h',
      ],
      sandboxEnv(own, data),
    );
    const port = await freePort();
    const conf = join(dir, 'prometheus.yml');
    writeFileSync(
      conf,
      [
        'global: { scrape_interval: 1s, evaluation_interval: 1s }',
        `rule_files: [${JSON.stringify(ALERTS)}]`,
        'scrape_configs:',
        '  - job_name: pool-export',
        `    static_configs: [{ targets: [${JSON.stringify(new URL(s.url).host)}] }]`,
        '',
      ].join('\n'),
    );
    execFileSync('promtool', ['check', 'config', conf]);
    const prom = spawn(
      'prometheus',
      [
        `--config.file=${conf}`,
        `--storage.tsdb.path=${join(dir, 'tsdb')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--web.enable-lifecycle',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    let promLog = '';
    prom.stderr!.setEncoding('utf8').on('data', (d: string) => (promLog += d));
    const api = `http://127.0.0.1:${port}/api/v1`;
    const alerts = async () =>
      (
        (await (await fetch(`${api}/alerts`)).json()) as {
          data: { alerts: { labels: Record<string, string>; state: string }[] };
        }
      ).data.alerts;
    try {
      // Scraped, with the first run done and nothing stale.
      await until('a scrape of the first run', async () => {
        const r = (await (await fetch(`${api}/query?query=pool_export_stored_rows`)).json()) as {
          data: { result: unknown[] };
        };
        return r.data.result.length > 0 ? true : undefined;
      });
      expect((await alerts()).filter((a) => a.labels.alertname === 'PoolExportDatasetStale')).toEqual([]);
      // The upstream goes away: its head can no longer be read, the lag is measured against the clock, and the
      // sandbox's data (of 2026-01-01) lag far more than the hour allowed.
      await own.stop();
      const firing = await until(
        'the stale-data alert',
        async () => {
          const a = (await alerts()).filter(
            (x) => x.labels.alertname === 'PoolExportDatasetStale' && x.state === 'firing',
          );
          return a.length > 0 ? a : undefined;
        },
        150_000,
      );
      expect(firing.map((a) => a.labels.dataset)).toContain('dodoex.swaps');
      expect(firing.every((a) => a.labels.chain === 'bsc' && a.labels.job === 'pool-export')).toBe(true);
    } finally {
      prom.kill('SIGTERM');
      await s.stop();
      await own.stop();
      if (prom.exitCode === null) await new Promise((r) => prom.once('exit', r));
    }
    expect(promLog).not.toMatch(/level=error/);
  }, 240_000);
});

describe.runIf(havePrometheus)('the alert rules of deploy/prometheus', () => {
  it('pass promtool check rules, and each alert has unit tests that pass promtool test rules', () => {
    const check = spawnSync('promtool', ['check', 'rules', ALERTS], { encoding: 'utf8' });
    expect(check.status, check.stdout + check.stderr).toBe(0);
    const tests = join(ROOT, 'deploy/prometheus/alerts.test.yml');
    const names = (file: string, key: string) =>
      new Set([...readFileSync(file, 'utf8').matchAll(new RegExp(`${key}: (PoolExport\\w+)`, 'g'))].map((m) => m[1]));
    expect(names(ALERTS, '- alert')).toEqual(names(tests, 'alertname'));
    expect(names(ALERTS, '- alert').size).toBe(5);
    const run = spawnSync('promtool', ['test', 'rules', tests], {
      encoding: 'utf8',
      cwd: join(ROOT, 'deploy/prometheus'),
    });
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toMatch(/SUCCESS/);
  });
});
