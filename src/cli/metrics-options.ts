/** The metrics options of `schedule` (`--metrics-port`, `--metrics-host`, `--stale-after`) and `run` (`--metrics-file`). */
import type { Argv } from 'yargs';
import type { Config } from '../config/config.ts';
import { UsageError } from '../errors.ts';
import { ExportMetrics } from '../metrics/metrics.ts';
import { parseDuration } from './options.ts';
import { VERSION } from './version.ts';

/** The default of `--stale-after`, as `status` has it. */
export const STALE_AFTER = '2h';

/** Adds the options that judge staleness for the metrics (`pool_export_stale`). */
export function staleAfterOption<T>(y: Argv<T>) {
  return y.option('stale-after', {
    type: 'string',
    default: STALE_AFTER,
    describe:
      'metrics: a dataset lagging more than this (or never exported) is stale (pool_export_stale), as in `status`',
  });
}

/** A TCP port for `--metrics-port`: an integer from 0 (any free port) to 65535. */
export function parsePort(v: unknown, flag: string): number {
  const n = typeof v === 'number' ? v : Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535 || String(v).trim() === '')
    throw new UsageError(`${flag} takes a TCP port from 1 to 65535 (0 picks a free one), not ${JSON.stringify(v)}`);
  return n;
}

/** The metrics of a process, judging staleness by `--stale-after`. */
export function metricsFor(
  config: Config,
  staleAfter: string,
  opts: { readonly processMetrics: boolean },
): ExportMetrics {
  return new ExportMetrics({
    config,
    staleAfterSecs: parseDuration(staleAfter),
    processMetrics: opts.processMetrics,
    version: VERSION,
  });
}
