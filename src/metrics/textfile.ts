/**
 * `run --metrics-file F`: the metrics of `schedule --metrics-port` written to a file in the text format that
 * node-exporter's textfile collector reads (name the file `*.prom` in its folder).
 *
 * A cron job is one process per run, yet counters must keep counting across runs, or `increase()` undercounts. So the
 * counters and histograms written last time are kept beside the file (`F.counters.json`, which the collector ignores)
 * and added to this run's with prom-client's own aggregation (the one its cluster mode uses); gauges are this run's.
 * Both files are replaced atomically.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { AggregatorRegistry, type MetricObjectWithValues, type MetricValue } from 'prom-client';
import { UsageError } from '../errors.ts';
import { writeFileAtomic } from '../util/atomic-file.ts';
import type { ExportMetrics } from './metrics.ts';

type Metrics = MetricObjectWithValues<MetricValue<string>>[];

/** Counters and histograms add up over runs; gauges are the last run's. (prom-client's types call `type` an enum of
 * numbers; at run time it is the string.) */
const cumulative = (m: { readonly type: unknown }) => m.type === 'counter' || m.type === 'histogram';

/** The file beside `file` that keeps the counters between runs. */
export const countersFileOf = (file: string): string => `${file}.counters.json`;

/** Checks that `file` can be written (its folder exists, and it is no folder), before a run starts. */
export function checkMetricsFile(file: string): string {
  if (file.trim() === '')
    throw new UsageError('--metrics-file needs a file name, such as /var/lib/node_exporter/pool-export.prom');
  const dir = dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(`--metrics-file ${file}: the folder ${dir} does not exist; create it, or choose another file`);
  if (existsSync(file) && statSync(file).isDirectory())
    throw new UsageError(
      `--metrics-file ${file} is a folder; give a file name inside it, such as ${file}/pool-export.prom`,
    );
  if (!basename(file).endsWith('.prom'))
    process.stderr.write(
      `note: node-exporter's textfile collector reads only files named *.prom, not ${basename(file)}\n`,
    );
  return file;
}

/** The counters and histograms kept from earlier runs; none when the file is absent or unreadable (counting restarts). */
function previous(file: string): Metrics {
  try {
    const all = JSON.parse(readFileSync(countersFileOf(file), 'utf8')) as Metrics;
    return Array.isArray(all) ? all.filter(cumulative) : [];
  } catch {
    return [];
  }
}

/** Writes the metrics of this run, its counters added to those of earlier runs, to `file`. */
export async function writeMetricsFile(file: string, metrics: ExportMetrics): Promise<void> {
  const merged = AggregatorRegistry.aggregate([previous(file), await metrics.registry.getMetricsAsJSON()] as Metrics[]);
  const kept = (await merged.getMetricsAsJSON()).filter(cumulative);
  writeFileAtomic(countersFileOf(file), JSON.stringify(kept));
  writeFileAtomic(file, await merged.metrics());
}
