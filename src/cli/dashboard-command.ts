/** `pool-export dashboard`: TVL, volume, APY and freshness of the lake as one self-contained HTML page. */
import { existsSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { trackedSettings } from '../config/config.ts';
import { UsageError } from '../errors.ts';
import { fetchForReading } from '../pipeline/lake-step.ts';
import { writeDashboard } from '../reports/dashboard.ts';
import type { DashboardFilter } from '../reports/dashboard-filter.ts';
import type { CommandBody } from './command-body.ts';
import {
  CHAINS_FILTER,
  chainsOption,
  checkReadableDataDir,
  configFor,
  dayRangeOptions,
  type FolderArgs,
  folderOptions,
  parseChains,
  parseDayRange,
} from './options.ts';

interface DashboardArgs extends FolderArgs {
  chains?: string;
  from?: string;
  to?: string;
  out: string;
}

/** The filter of `--chains`, `--from` and `--to`, checked. */
export function dashboardFilter(a: {
  chains?: string | undefined;
  from?: string | undefined;
  to?: string | undefined;
}): DashboardFilter {
  const chains = parseChains(a.chains);
  const { from, to } = parseDayRange(a);
  return { ...(chains?.length ? { chains } : {}), ...(from ? { from } : {}), ...(to ? { to } : {}) };
}

/** Checks where the page goes: an HTML file name in a folder that exists. */
export function checkDashboardOut(out: string, flag = '--out'): string {
  const file = resolve(out);
  const dir = dirname(file);
  if (!existsSync(dir) || !statSync(dir).isDirectory())
    throw new UsageError(
      `${flag} ${out}: the folder ${dir} does not exist; create it, or write the page somewhere else`,
    );
  if (existsSync(file) && statSync(file).isDirectory())
    throw new UsageError(`${flag} ${out} is a folder; name the HTML file to write, e.g. ${flag} dashboard.html`);
  return file;
}

/** The yargs module of the `dashboard` command. */
export const dashboardCommand: CommandBody<DashboardArgs> = {
  builder: (y) =>
    dayRangeOptions(
      chainsOption(
        folderOptions(y).option('out', {
          type: 'string',
          demandOption: true,
          describe: 'the HTML file to write (temporary name, then renamed)',
        }),
        CHAINS_FILTER,
      ),
    ),
  handler: async (a) => {
    const filter = dashboardFilter(a);
    const out = checkDashboardOut(a.out);
    const config = configFor(a);
    checkReadableDataDir(config.dataDir);
    await fetchForReading(config, (line) => process.stderr.write(`${line}\n`));
    const r = await writeDashboard(config.dataDir, out, { filter, tracked: trackedSettings(config) });
    process.stdout.write(
      r.empty
        ? `dashboard: ${r.file} (the lake of ${config.dataDir} holds no data yet; the page says so: fill it with \`pool-export run\`)\n`
        : `dashboard: ${r.file} (${Math.ceil(r.bytes / 1024)} KiB; open it in a browser, no network needed)\n`,
    );
  },
};
