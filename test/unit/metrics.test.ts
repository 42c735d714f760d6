/**
 * The exporter's metrics: what a run's outcome, the live client and the status file turn into, read back from the
 * Prometheus text by a parser of this test's own, against values worked out by hand; and the textfile of
 * `run --metrics-file`, whose counters add up over runs.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { UpstreamError } from '../../src/errors.ts';
import type { TaskResult } from '../../src/export/task.ts';
import { emptyStats } from '../../src/export/task.ts';
import { ExportMetrics } from '../../src/metrics/metrics.ts';
import { countersFileOf, writeMetricsFile } from '../../src/metrics/textfile.ts';
import type { RunOutcome } from '../../src/pipeline/run.ts';
import { writeStatusFile } from '../../src/store/status-file.ts';
import type { UpstreamClient } from '../../src/upstream/client.ts';
import { headRoutesFor } from '../../src/upstream/routes.ts';
import { samples } from '../support/prometheus-text.ts';

const endpoint = { url: 'u', label: 'A', host: 'h' };

function result(over: Partial<TaskResult>, dataset = 'dodoex.swaps', chainId = 56): TaskResult {
  return {
    task: { chainId, ds: findDataset(dataset)!, endpoint, routes: [endpoint] },
    status: 'ok',
    stats: emptyStats(),
    block: 100,
    cursorBefore: null,
    cursorAfter: 'c',
    startedAt: new Date(1_000_000),
    endedAt: new Date(1_000_000),
    ...over,
  };
}

function outcome(over: Partial<RunOutcome>): RunOutcome {
  return { runId: 'r', results: [], stopped: false, lake: 'written', upstream: [], ...over };
}

/** A client as the metrics read it: its governors' 429s and pace. */
const client = (governors: [string, { limited: number; rate: number }][]) =>
  ({ governors: new Map(governors) }) as unknown as UpstreamClient;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'metrics-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const config = () => loadConfig({ env: { POOL_EXPORT_DATA_DIR: dir, POOL_EXPORT_API_KEY: 'k' } });
const metricsAt = (nowSecs: number, staleAfterSecs = 3600) =>
  new ExportMetrics({ config: config(), staleAfterSecs, version: '9.9.9', now: () => nowSecs });

describe('metrics of runs', () => {
  it("counts each task's rows, requests, bytes and retries by chain and dataset, and failures by class", async () => {
    const m = metricsAt(2_000_000);
    const failed = result(
      {
        status: 'failed',
        stats: { ...emptyStats(), rows: 2, requests: 9, retries: 8, bytes: 50 },
        startedAt: new Date(1_000_000),
        endedAt: new Date(1_000_700),
        error: { cls: 'upstream-http', message: 'x' },
      },
      'dodoex.pairs',
    );
    const ok = result({
      stats: { ...emptyStats(), rows: 5, requests: 3, bytes: 1000, duplicates: 1 },
      startedAt: new Date(1_000_000),
      endedAt: new Date(1_002_500),
    });
    const polygon = result({ stats: { ...emptyStats(), rows: 7, requests: 1 } }, 'dodoex.swaps', 137);
    m.recordRun('trades', { outcome: outcome({ results: [ok, failed, polygon] }) }, 12);
    m.recordRun('trades', { outcome: outcome({ results: [ok] }) }, 3);
    const s = samples(await m.text());
    expect(s.get('pool_export_rows_total{chain="bsc",dataset="dodoex.swaps"}')).toBe(10);
    expect(s.get('pool_export_rows_total{chain="polygon",dataset="dodoex.swaps"}')).toBe(7);
    expect(s.get('pool_export_rows_total{chain="bsc",dataset="dodoex.pairs"}')).toBe(2);
    expect(s.get('pool_export_requests_total{chain="bsc",dataset="dodoex.swaps"}')).toBe(6);
    expect(s.get('pool_export_read_bytes_total{chain="bsc",dataset="dodoex.swaps"}')).toBe(2000);
    expect(s.get('pool_export_retries_total{chain="bsc",dataset="dodoex.pairs"}')).toBe(8);
    expect(s.get('pool_export_duplicate_rows_total{chain="bsc",dataset="dodoex.swaps"}')).toBe(2);
    expect(s.get('pool_export_task_failures_total{chain="bsc",class="upstream-http",dataset="dodoex.pairs"}')).toBe(1);
    expect(s.get('pool_export_tasks_total{chain="bsc",dataset="dodoex.pairs",status="failed"}')).toBe(1);
    expect(s.get('pool_export_tasks_total{chain="bsc",dataset="dodoex.swaps",status="ok"}')).toBe(2);
    // Task durations: 2.5 s twice for swaps on bsc, 0.7 s for pairs.
    expect(s.get('pool_export_task_duration_seconds_sum{chain="bsc",dataset="dodoex.swaps"}')).toBe(5);
    expect(s.get('pool_export_task_duration_seconds_bucket{chain="bsc",dataset="dodoex.swaps",le="1"}')).toBe(0);
    expect(s.get('pool_export_task_duration_seconds_bucket{chain="bsc",dataset="dodoex.swaps",le="5"}')).toBe(2);
    expect(s.get('pool_export_task_duration_seconds_bucket{chain="bsc",dataset="dodoex.pairs",le="1"}')).toBe(1);
    // The first run failed (a task did), the second was ok.
    expect(s.get('pool_export_runs_total{export_job="trades",outcome="failed"}')).toBe(1);
    expect(s.get('pool_export_runs_total{export_job="trades",outcome="ok"}')).toBe(1);
    expect(s.get('pool_export_run_duration_seconds_sum{export_job="trades"}')).toBe(15);
    expect(s.get('pool_export_run_duration_seconds_count{export_job="trades"}')).toBe(2);
    expect(s.get('pool_export_last_run_success_timestamp_seconds{export_job="trades"}')).toBe(2_000_000);
    expect(s.get('pool_export_lake_writes_total{outcome="written"}')).toBe(2);
    expect(s.get(`pool_export_build_info{node="${process.version}",version="9.9.9"}`)).toBe(1);
  });

  it('tells a failed lake write, a stop, a locked folder and a run that could not happen apart', async () => {
    const m = metricsAt(5);
    m.recordRun('j', { outcome: outcome({ lake: 'failed', lakeError: 'disk' }) }, 1);
    m.recordRun('j', { outcome: outcome({ stopped: true, lake: 'deferred' }) }, 1);
    m.recordRun('j', { skipped: true }, 0);
    m.recordRun('j', { error: new UpstreamError('HTTP 401', { kind: 'auth', retryable: false, status: 401 }) }, 2);
    const s = samples(await m.text());
    expect(s.get('pool_export_runs_total{export_job="j",outcome="failed"}')).toBe(1);
    expect(s.get('pool_export_runs_total{export_job="j",outcome="stopped"}')).toBe(1);
    expect(s.get('pool_export_runs_total{export_job="j",outcome="skipped"}')).toBe(1);
    expect(s.get('pool_export_runs_total{export_job="j",outcome="error"}')).toBe(1);
    expect(s.get('pool_export_run_errors_total{class="upstream-auth",export_job="j"}')).toBe(1);
    expect(s.get('pool_export_lake_writes_total{outcome="failed"}')).toBe(1);
    expect(s.get('pool_export_lake_writes_total{outcome="deferred"}')).toBe(1);
    expect(s.has('pool_export_last_run_success_timestamp_seconds{export_job="j"}')).toBe(false);
    // A skipped run took no time of its own: only the three that ran are timed.
    expect(s.get('pool_export_run_duration_seconds_count{export_job="j"}')).toBe(3);
  });

  it("reads 429s and the pace from the run under way, then takes the run's own count once it ends", async () => {
    const m = metricsAt(5);
    const first = client([['api.example (key ab12)', { limited: 3, rate: 2.5 }]]);
    m.watch(first);
    let s = samples(await m.text());
    expect(s.get('pool_export_http_429_total{host="api.example (key ab12)"}')).toBe(3);
    expect(s.get('pool_export_upstream_pace_requests_per_second{host="api.example (key ab12)"}')).toBe(2.5);
    // The run ends with four (one more came after the scrape): four, not seven.
    m.recordRun(
      'j',
      { outcome: outcome({ upstream: [{ host: 'api.example (key ab12)', limited: 4, requestsPerSecond: 2 }] }) },
      1,
    );
    s = samples(await m.text());
    expect(s.get('pool_export_http_429_total{host="api.example (key ab12)"}')).toBe(4);
    expect(s.get('pool_export_upstream_pace_requests_per_second{host="api.example (key ab12)"}')).toBe(2);
    // A run that throws leaves its count in its client only; it is kept too.
    m.watch(client([['api.example (key ab12)', { limited: 1, rate: Number.POSITIVE_INFINITY }]]));
    m.recordRun('j', { error: new Error('x') }, 1);
    s = samples(await m.text());
    expect(s.get('pool_export_http_429_total{host="api.example (key ab12)"}')).toBe(5);
    expect(s.get('pool_export_upstream_pace_requests_per_second{host="api.example (key ab12)"}')).toBe(
      Number.POSITIVE_INFINITY,
    );
  });
});

describe('metrics of the status file', () => {
  const entry = (over: object) => ({
    dataset: 'dodoex.swaps',
    chainId: 56,
    lastSuccess: '2026-11-20T10:00:00.000Z',
    lastStatus: 'ok',
    lastError: null,
    rows: 1234,
    block: 1000,
    blockTime: '2026-11-20T09:59:00.000Z',
    ...over,
  });
  const write = (entries: object[]) =>
    writeStatusFile(dir, {
      writtenAt: '2026-11-20T10:00:00.000Z',
      run: { id: 'r', pid: 1, startedAt: '2026-11-20T09:00:00.000Z', state: 'ended' },
      entries: entries as never,
    });
  const at = (iso: string) => Date.parse(iso) / 1000;

  it('gives rows, last success, lag against the head read, staleness and the last verification', async () => {
    write([
      entry({ verification: { at: '2026-11-20T10:01:00.000Z', gaps: 3, error: null } }),
      entry({ dataset: 'dodoex.pairs', lastSuccess: null, lastStatus: 'failed', block: null, blockTime: null }),
      entry({ dataset: 'dodoex.positiveSlippages', lastStatus: 'unavailable', lastSuccess: null, blockTime: null }),
    ]);
    const m = metricsAt(at('2026-11-20T12:00:00.000Z'));
    const url = headRoutesFor(config(), findDataset('dodoex.swaps')!, 56)[0]!.url;
    // The head is 150 blocks and 5 minutes past the stored block.
    m.setHeads(new Map([[url, { number: 1150, timestamp: at('2026-11-20T10:04:00.000Z') }]]));
    const s = samples(await m.text());
    const swaps = '{chain="bsc",dataset="dodoex.swaps"}';
    expect(s.get(`pool_export_stored_rows${swaps}`)).toBe(1234);
    expect(s.get(`pool_export_last_success_timestamp_seconds${swaps}`)).toBe(at('2026-11-20T10:00:00.000Z'));
    expect(s.get(`pool_export_lag_blocks${swaps}`)).toBe(150);
    expect(s.get(`pool_export_lag_seconds${swaps}`)).toBe(300);
    expect(s.get(`pool_export_stale${swaps}`)).toBe(0);
    expect(s.get(`pool_export_verification_gaps${swaps}`)).toBe(3);
    expect(s.get(`pool_export_last_verification_timestamp_seconds${swaps}`)).toBe(at('2026-11-20T10:01:00.000Z'));
    // Never succeeded: stale, with no lag and no last success.
    const pairs = '{chain="bsc",dataset="dodoex.pairs"}';
    expect(s.get(`pool_export_stale${pairs}`)).toBe(1);
    expect(s.has(`pool_export_lag_seconds${pairs}`)).toBe(false);
    expect(s.has(`pool_export_last_success_timestamp_seconds${pairs}`)).toBe(false);
    // What the deployment lacks is never stale, and has no other sample.
    const slips = '{chain="bsc",dataset="dodoex.positiveSlippages"}';
    expect(s.get(`pool_export_stale${slips}`)).toBe(0);
    expect(s.has(`pool_export_stored_rows${slips}`)).toBe(false);
    expect(s.get('pool_export_stale_after_seconds')).toBe(3600);
  });

  it('measures the lag against the clock when no head was read, and reads the file again as it changes', async () => {
    write([entry({})]);
    const m = metricsAt(at('2026-11-20T12:00:00.000Z'));
    let s = samples(await m.text());
    const swaps = '{chain="bsc",dataset="dodoex.swaps"}';
    // 09:59 to 12:00: 7,260 s, over the hour allowed.
    expect(s.get(`pool_export_lag_seconds${swaps}`)).toBe(7260);
    expect(s.has(`pool_export_lag_blocks${swaps}`)).toBe(false);
    expect(s.get(`pool_export_stale${swaps}`)).toBe(1);
    write([entry({ rows: 99, blockTime: '2026-11-20T11:30:00.000Z' })]);
    await new Promise((r) => setTimeout(r, 1100));
    s = samples(await m.text());
    expect(s.get(`pool_export_stored_rows${swaps}`)).toBe(99);
    expect(s.get(`pool_export_stale${swaps}`)).toBe(0);
  });

  it('serves no status samples, and no error, for a status file that cannot be read', async () => {
    writeFileSync(join(dir, 'status.json'), '{ half');
    const s = samples(await metricsAt(5).text());
    expect([...s.keys()].filter((k) => k.startsWith('pool_export_stored_rows'))).toEqual([]);
  });
});

describe('the textfile of run --metrics-file', () => {
  it('adds counters and histograms to those of earlier runs, and keeps only the last run’s gauges', async () => {
    const file = join(dir, 'pool-export.prom');
    const run = async (rows: number, seconds: number) => {
      const m = metricsAt(seconds * 1000);
      m.recordRun('j', { outcome: outcome({ results: [result({ stats: { ...emptyStats(), rows } })] }) }, seconds);
      await writeMetricsFile(file, m);
      return samples((await import('node:fs')).readFileSync(file, 'utf8'));
    };
    await run(5, 2);
    const s = await run(7, 30);
    expect(s.get('pool_export_rows_total{chain="bsc",dataset="dodoex.swaps"}')).toBe(12);
    expect(s.get('pool_export_runs_total{export_job="j",outcome="ok"}')).toBe(2);
    expect(s.get('pool_export_run_duration_seconds_count{export_job="j"}')).toBe(2);
    expect(s.get('pool_export_run_duration_seconds_sum{export_job="j"}')).toBe(32);
    expect(s.get('pool_export_run_duration_seconds_bucket{export_job="j",le="5"}')).toBe(1);
    expect(s.get('pool_export_run_duration_seconds_bucket{export_job="j",le="30"}')).toBe(2);
    expect(s.get('pool_export_last_run_success_timestamp_seconds{export_job="j"}')).toBe(30_000);
    expect(s.get('pool_export_stale_after_seconds')).toBe(3600);
    // A counters file that cannot be read starts the count again (Prometheus takes it as a counter reset).
    writeFileSync(countersFileOf(file), 'not json');
    expect((await run(1, 1)).get('pool_export_rows_total{chain="bsc",dataset="dodoex.swaps"}')).toBe(1);
  });
});
