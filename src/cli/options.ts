/**
 * Command-line options of every command on a data folder: where it is and where the settings are. The options of the
 * commands that write the folder (its lock, the plan, the log) are in `write-options.ts`, so that a command that only
 * reads loads none of that.
 */
import { existsSync, statSync } from 'node:fs';
import type { Argv } from 'yargs';
import { parseChain } from '../config/chains.ts';
import { type Config, loadConfig } from '../config/config.ts';
import { UsageError } from '../errors.ts';

/** Where a command finds its data and its settings: `--data-dir` and `--config`, which every command on a data folder takes. */
export interface FolderArgs {
  'data-dir'?: string | undefined;
  config?: string | undefined;
}

/** The `--data-dir` and `--config` options. */
export function folderOptions<T>(y: Argv<T>) {
  return y
    .option('data-dir', { type: 'string', describe: 'data folder (default: POOL_EXPORT_DATA_DIR or ./data)' })
    .option('config', { type: 'string', describe: 'JSON config file (default: ./pool-export.config.json if present)' });
}

/** The config of a command line: defaults, the config file, the environment, then `--data-dir`. */
export function configFor(a: FolderArgs): Config {
  return loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
}

/** A data folder to read: one that is a file is a mistake in the command line (a missing one simply holds nothing). */
export function checkReadableDataDir(dir: string): void {
  if (existsSync(dir) && !statSync(dir).isDirectory())
    throw new UsageError(
      `the data folder ${dir} is a file; point --data-dir (or POOL_EXPORT_DATA_DIR) at the folder a run wrote`,
    );
}

/** A comma list from a flag, trimmed; undefined when the flag is absent. */
export const list = (s: string | undefined) =>
  s
    ? s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean)
    : undefined;

/**
 * `--chains` of every command that selects chains: names or ids, comma-separated; `--chain` is the same option, so
 * that either spelling works everywhere.
 */
export function chainsOption<T>(y: Argv<T>, describe: string) {
  return y.option('chains', { type: 'string', alias: 'chain', describe: `${describe} (--chain works too)` });
}

/** The chains of `--chains`, each checked (a name or an id); undefined when the flag is absent. */
export const parseChains = (s: string | undefined): number[] | undefined => list(s)?.map(parseChain);

/** The same `--chains` everywhere a command filters its output by chain. */
export const CHAINS_FILTER = 'only these chains: names or ids, comma-separated';

/** `--from` and `--to` of the commands that filter by UTC day. */
export function dayRangeOptions<T>(y: Argv<T>) {
  return y
    .option('from', { type: 'string', describe: 'first UTC day, YYYY-MM-DD' })
    .option('to', { type: 'string', describe: 'last UTC day, YYYY-MM-DD (inclusive)' });
}

const DAY_RE = /^\d{4}-\d{2}-\d{2}$/;

/**
 * A `--from`/`--to` day, checked: YYYY-MM-DD and a day of the calendar (JavaScript's parser takes 2026-11-31 for
 * December 1st, so the day must come back as written).
 */
export function day(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  if (!DAY_RE.test(v)) throw new UsageError(`--${flag} takes a UTC day as YYYY-MM-DD, not "${v}"`);
  const t = Date.parse(`${v}T00:00:00Z`);
  if (Number.isNaN(t) || new Date(t).toISOString().slice(0, 10) !== v)
    throw new UsageError(`--${flag} ${v} is not a day of the calendar; give a real UTC day as YYYY-MM-DD`);
  return v;
}

/** `--from` and `--to`, each checked, and the range not empty. */
export function parseDayRange(a: { from?: string | undefined; to?: string | undefined }): {
  from: string | undefined;
  to: string | undefined;
} {
  const from = day('from', a.from);
  const to = day('to', a.to);
  if (from && to && from > to) throw new UsageError(`--from ${from} is after --to ${to}; the range would be empty`);
  return { from, to };
}

export { parseDuration } from '../util/duration.ts';
