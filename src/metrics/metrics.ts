/**
 * The exporter's metrics in Prometheus' format (prom-client), for `schedule --metrics-port` and `run --metrics-file`.
 * Names start with `pool_export_`, counters end in `_total`, times in `_seconds`; `chain` and `dataset` label what is
 * per task, and `export_job` the job of a run (not `job`, which Prometheus gives the scrape job). They come from three
 * places:
 * - each run's outcome, when it ends: runs, tasks, rows, requests, bytes, durations, failures by class, the lake step;
 * - the upstream client of the run under way, read at each scrape: HTTP 429s and the rate governor's pace;
 * - the status file the runs keep in the data folder, read at each scrape: rows stored, last success, lag in blocks and
 *   seconds (against the heads given by `setHeads`, or the clock), staleness, and the last verification.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import { bucketFreshness, headClock } from '../bucket/cadence.ts';
import { chainName } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { errorClass } from '../errors.ts';
import { isStopped } from '../export/task.ts';
import type { RunOutcome } from '../pipeline/run.ts';
import { freshnessOf, type Heads } from '../store/freshness.ts';
import type { StatusEntry } from '../store/status-entries.ts';
import { readStatusFile } from '../store/status-file.ts';
import type { UpstreamClient } from '../upstream/client.ts';

/** Every name starts with this. */
export const PREFIX = 'pool_export_';

/** How one run of a job ended, as `pool_export_runs_total{outcome}` counts it. */
export type RunEnd =
  /** Every task ended well and the lake was written. */
  | 'ok'
  /** A task failed, or the lake write did. */
  | 'failed'
  /** Stopped by a signal. */
  | 'stopped'
  /** Another process held the data folder's lock. */
  | 'skipped'
  /** The run could not happen (no space, a bucket lake refused, …): `pool_export_run_errors_total` has its class. */
  | 'error';

/** What a job's run came to: its outcome, or the error that kept it from running. */
export type RunRecord = { readonly outcome: RunOutcome } | { readonly error: unknown } | { readonly skipped: true };

/** Settings of the metrics. */
export interface MetricsOptions {
  readonly config: Config;
  /** A dataset lagging more than this is stale (`pool_export_stale`), as `status --stale-after` judges it. */
  readonly staleAfterSecs: number;
  /** Also the process' own metrics (memory, CPU, event loop), for a long-lived process. */
  readonly processMetrics?: boolean;
  /** This package's version, for `pool_export_build_info`. */
  readonly version: string;
  /** The clock, in Unix seconds. */
  readonly now?: () => number;
}

const TASK = ['chain', 'dataset'] as const;

/** Status entries read at most this often (a scrape reads the file once, not once per metric). */
const STATUS_MAX_AGE_MS = 1000;

/** The exporter's metrics registry, fed by runs, the live client and the status file. */
export class ExportMetrics {
  readonly registry = new Registry();
  private heads: Heads = new Map();
  private readonly live = new Set<UpstreamClient>();
  /** 429s of the runs that ended, per host. */
  private readonly limitedBefore = new Map<string, number>();
  /** The pace each host was last kept to (requests per second; +Inf before a 429). */
  private readonly paceBefore = new Map<string, number>();
  private status: { at: number; entries: readonly StatusEntry[] } | undefined;
  private readonly now: () => number;

  private readonly runs: Counter<'export_job' | 'outcome'>;
  private readonly runErrors: Counter<'export_job' | 'class'>;
  private readonly runSeconds: Histogram<'export_job'>;
  private readonly lastRunSuccess: Gauge<'export_job'>;
  private readonly tasks: Counter<'chain' | 'dataset' | 'status'>;
  private readonly taskFailures: Counter<'chain' | 'dataset' | 'class'>;
  private readonly taskSeconds: Histogram<'chain' | 'dataset'>;
  private readonly rows: Counter<'chain' | 'dataset'>;
  private readonly requests: Counter<'chain' | 'dataset'>;
  private readonly retries: Counter<'chain' | 'dataset'>;
  private readonly bytes: Counter<'chain' | 'dataset'>;
  private readonly duplicates: Counter<'chain' | 'dataset'>;
  private readonly lakeWrites: Counter<'outcome'>;

  constructor(private readonly opts: MetricsOptions) {
    this.now = opts.now ?? (() => Date.now() / 1000);
    const registers = [this.registry];
    const self = this;
    if (opts.processMetrics) {
      collectDefaultMetrics({ register: this.registry, prefix: PREFIX });
      // Gauges that prom-client names like counters (`promtool check metrics` refuses them); the same counts by type
      // stay, as `…_active_handles`, `…_active_requests` and `…_active_resources`.
      for (const name of ['active_handles_total', 'active_requests_total', 'active_resources_total'])
        this.registry.removeSingleMetric(`${PREFIX}nodejs_${name}`);
    }
    new Gauge({
      name: `${PREFIX}build_info`,
      help: 'Always 1: the version of pool-export and of Node.js that serve these metrics',
      labelNames: ['version', 'node'],
      registers,
    }).set({ version: opts.version, node: process.version }, 1);
    this.runs = new Counter({
      name: `${PREFIX}runs_total`,
      help: 'Runs of each job, by how they ended: ok, failed (a task or the lake write), stopped, skipped (the data folder was locked), error (the run could not happen)',
      labelNames: ['export_job', 'outcome'],
      registers,
    });
    this.runErrors = new Counter({
      name: `${PREFIX}run_errors_total`,
      help: 'Runs that could not happen, by the class of their error',
      labelNames: ['export_job', 'class'],
      registers,
    });
    this.runSeconds = new Histogram({
      name: `${PREFIX}run_duration_seconds`,
      help: 'Wall time of each run of a job: lock, tasks, lake write and verification',
      labelNames: ['export_job'],
      buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 21600],
      registers,
    });
    this.lastRunSuccess = new Gauge({
      name: `${PREFIX}last_run_success_timestamp_seconds`,
      help: 'When a run of the job last ended ok (Unix time)',
      labelNames: ['export_job'],
      registers,
    });
    this.tasks = new Counter({
      name: `${PREFIX}tasks_total`,
      help: 'Tasks (one dataset of one chain in one run), by status: ok, failed, unavailable (the deployment lacks the entity), stopped (the run was asked to stop)',
      labelNames: [...TASK, 'status'],
      registers,
    });
    this.taskFailures = new Counter({
      name: `${PREFIX}task_failures_total`,
      help: 'Failed tasks by the class of their error (upstream-rate-limit, upstream-http, upstream-garbage, disk-full, …)',
      labelNames: [...TASK, 'class'],
      registers,
    });
    this.taskSeconds = new Histogram({
      name: `${PREFIX}task_duration_seconds`,
      help: 'Wall time of each task',
      labelNames: TASK,
      buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 1800, 3600, 7200],
      registers,
    });
    const perTask = (name: string, help: string) =>
      new Counter({ name: `${PREFIX}${name}`, help, labelNames: TASK, registers });
    this.rows = perTask(
      'rows_total',
      'Rows committed to the warehouse, rows read again (the reorg window, changed entities) counted again; failed tasks count what they committed',
    );
    this.requests = perTask('requests_total', 'Requests sent to the upstream, retries included');
    this.retries = perTask('retries_total', 'Requests sent again after a retryable failure');
    this.bytes = perTask('read_bytes_total', "Bytes of the upstream's answers read");
    this.duplicates = perTask('duplicate_rows_total', 'Rows the upstream sent again with an id it had already sent');
    this.lakeWrites = new Counter({
      name: `${PREFIX}lake_writes_total`,
      help: "Each run's lake step: written (and published to the bucket lake, if any), failed, or deferred by a stop",
      labelNames: ['outcome'],
      registers,
    });
    new Counter({
      name: `${PREFIX}http_429_total`,
      help: 'HTTP 429 (rate limited) answers of each upstream host (or host and route key)',
      labelNames: ['host'],
      registers,
      collect() {
        this.reset();
        for (const [host, n] of self.limited()) this.inc({ host }, n);
      },
    });
    new Gauge({
      name: `${PREFIX}upstream_pace_requests_per_second`,
      help: "The rate governor's pace for each upstream host: the requests per second it keeps to after a 429 (+Inf before any)",
      labelNames: ['host'],
      registers,
      collect() {
        this.reset();
        for (const [host, pace] of self.pace()) this.set({ host }, pace);
      },
    });
    this.statusGauge('stored_rows', 'Rows stored in the warehouse for the dataset and chain', (e) => e.rows);
    this.statusGauge(
      'last_success_timestamp_seconds',
      'When a task of the dataset on the chain last ended well (Unix time)',
      (e) => (e.lastSuccess === null ? null : Date.parse(e.lastSuccess) / 1000),
    );
    this.statusGauge(
      'lag_seconds',
      "Seconds from the time of the block the stored data were read at to the upstream's head (or to now, when the head could not be read)",
      (_e, f) => f.lagSeconds,
    );
    this.statusGauge(
      'lag_blocks',
      "Blocks from the block the stored data were read at to the upstream's head (absent while the head is unknown)",
      (_e, f) => f.lagBlocks,
    );
    this.statusGauge(
      'stale',
      '1 when the dataset never succeeded or lags more than the stale-after setting (pool_export_stale_after_seconds), else 0',
      (_e, f) => (f.stale ? 1 : 0),
    );
    this.statusGauge(
      'verification_gaps',
      "Groups of the last verification whose rows differ from the upstream's own counters",
      (e) => e.verification?.gaps ?? null,
    );
    this.statusGauge(
      'last_verification_timestamp_seconds',
      "When the dataset on the chain was last verified against the upstream's counters (Unix time)",
      (e) => (e.verification ? Date.parse(e.verification.at) / 1000 : null),
    );
    // A bucket lake's own freshness beside the warehouse's (`bucket/cadence.ts`): absent for a local lake.
    const bucket = () => {
      const nowSecs = self.now();
      const points = self.entries().map((e) => ({
        chainId: e.chainId,
        blockTime: e.blockTime,
        lagSeconds: freshnessOf(self.opts.config, e, {
          heads: self.heads,
          nowSecs,
          staleAfterSecs: opts.staleAfterSecs,
        }).lagSeconds,
      }));
      return bucketFreshness(self.opts.config, headClock(points, nowSecs));
    };
    new Gauge({
      name: `${PREFIX}bucket_published_timestamp_seconds`,
      help: 'When the run that last published the bucket lake from this data folder began (Unix time)',
      registers,
      collect() {
        this.reset();
        const b = bucket();
        if (b?.publishedAt != null) this.set(b.publishedAt);
      },
    });
    new Gauge({
      name: `${PREFIX}bucket_behind`,
      help: '1 while the local lake holds rows the bucket lake lacks (runs within lake.publishEvery, or a publish that failed), else 0',
      registers,
      collect() {
        this.reset();
        const b = bucket();
        if (b) this.set(b.behind ? 1 : 0);
      },
    });
    new Gauge({
      name: `${PREFIX}bucket_lag_seconds`,
      help: "Seconds from the newest block time the bucket lake's published state covers on the chain to now",
      labelNames: ['chain'],
      registers,
      collect() {
        this.reset();
        for (const [c, lag] of bucket()?.lagSeconds ?? []) this.set({ chain: chainName(c) }, lag);
      },
    });
    new Gauge({
      name: `${PREFIX}stale_after_seconds`,
      help: 'The lag beyond which a dataset is counted stale',
      registers,
    }).set(opts.staleAfterSecs);
  }

  /** Watches a run's upstream client (see `RunOnceArgs.onClient`) until its run is recorded. */
  watch(client: UpstreamClient): void {
    this.live.add(client);
  }

  /** The heads of the routes, as `readHeads` read them, for the lag. */
  setHeads(heads: Heads): void {
    this.heads = heads;
  }

  /** Records how a run of `job` ended, and how long it took. */
  recordRun(job: string, record: RunRecord, seconds: number): void {
    // A run that ended has its upstream's counts in its outcome; one that threw leaves them only in its client.
    if (!('outcome' in record))
      for (const c of this.live)
        for (const [host, g] of c.governors) {
          this.limitedBefore.set(host, (this.limitedBefore.get(host) ?? 0) + g.limited);
          this.paceBefore.set(host, g.rate);
        }
    this.live.clear();
    if ('skipped' in record) {
      this.runs.inc({ export_job: job, outcome: 'skipped' });
      return;
    }
    this.runSeconds.observe({ export_job: job }, seconds);
    if ('error' in record) {
      this.runs.inc({ export_job: job, outcome: 'error' });
      this.runErrors.inc({ export_job: job, class: errorClass(record.error) });
      return;
    }
    const o = record.outcome;
    for (const r of o.results) {
      const labels = { chain: chainName(r.task.chainId), dataset: r.task.ds.name };
      const stopped = isStopped(r);
      this.tasks.inc({ ...labels, status: stopped ? 'stopped' : r.status });
      if (r.error && !stopped) this.taskFailures.inc({ ...labels, class: r.error.cls });
      this.taskSeconds.observe(labels, Math.max(0, (r.endedAt.getTime() - r.startedAt.getTime()) / 1000));
      this.rows.inc(labels, r.stats.rows);
      this.requests.inc(labels, r.stats.requests);
      this.retries.inc(labels, r.stats.retries);
      this.bytes.inc(labels, r.stats.bytes);
      this.duplicates.inc(labels, r.stats.duplicates);
    }
    for (const u of o.upstream) {
      this.limitedBefore.set(u.host, (this.limitedBefore.get(u.host) ?? 0) + u.limited);
      this.paceBefore.set(u.host, u.requestsPerSecond ?? Number.POSITIVE_INFINITY);
    }
    this.lakeWrites.inc({ outcome: o.lake });
    const end: RunEnd = o.stopped
      ? 'stopped'
      : o.lake === 'failed' || o.results.some((r) => r.status === 'failed' && !isStopped(r))
        ? 'failed'
        : 'ok';
    this.runs.inc({ export_job: job, outcome: end });
    if (end === 'ok') this.lastRunSuccess.set({ export_job: job }, this.now());
  }

  /** The metrics in Prometheus' text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** 429s per host: of the runs that ended, and of the run under way. */
  private limited(): Map<string, number> {
    const out = new Map(this.limitedBefore);
    for (const c of this.live) for (const [host, g] of c.governors) out.set(host, (out.get(host) ?? 0) + g.limited);
    return out;
  }

  /** The pace per host: the run under way's, else the last run's. */
  private pace(): Map<string, number> {
    const out = new Map(this.paceBefore);
    for (const c of this.live) for (const [host, g] of c.governors) out.set(host, g.rate);
    return out;
  }

  /** The status file's entries, read again when older than a second. */
  private entries(): readonly StatusEntry[] {
    const t = performance.now();
    if (!this.status || t - this.status.at > STATUS_MAX_AGE_MS) this.status = { at: t, entries: this.readEntries() };
    return this.status.entries;
  }

  /** The status file's entries; none before the first run, or while the file cannot be read. */
  private readEntries(): readonly StatusEntry[] {
    try {
      return readStatusFile(this.opts.config.dataDir)?.entries ?? [];
    } catch {
      return [];
    }
  }

  /** A gauge per dataset and chain of the status file; an entry whose value is null has no sample. */
  private statusGauge(
    name: string,
    help: string,
    value: (e: StatusEntry, f: ReturnType<typeof freshnessOf>) => number | null,
  ): void {
    const self = this;
    new Gauge({
      name: `${PREFIX}${name}`,
      help,
      labelNames: TASK,
      registers: [this.registry],
      collect() {
        this.reset();
        const nowSecs = self.now();
        for (const e of self.entries()) {
          if (e.lastStatus === 'unavailable' && name !== 'stale') continue;
          const f = freshnessOf(self.opts.config, e, {
            heads: self.heads,
            nowSecs,
            staleAfterSecs: self.opts.staleAfterSecs,
          });
          const v = value(e, f);
          if (v !== null) this.set({ chain: chainName(e.chainId), dataset: e.dataset }, v);
        }
      },
    });
  }
}
