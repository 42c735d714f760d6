/** `pool-export verify`: the stored rows against the upstream's own counters (see `src/verify/`). */
import { randomUUID } from 'node:crypto';
import { DATASETS, datasetNamed, findDataset } from '../catalog/catalog.ts';
import { subgraphOf, subgraphs } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { EXIT_GAPS, UsageError } from '../errors.ts';
import { updateLakeFor } from '../pipeline/lake-step.ts';
import { folderSources } from '../pipeline/sources.ts';
import { readStatusFile, refreshStatusFile } from '../store/status-file.ts';
import { Warehouse } from '../store/warehouse.ts';
import { UpstreamClient } from '../upstream/client.ts';
import { cells, fit, tableLines, terminalWidth } from '../util/display.ts';
import { maxOf } from '../util/extremes.ts';
import { inert, jsonSafe } from '../util/inert.ts';
import { wrap } from '../util/wrap.ts';
import type { Check } from '../verify/check.ts';
import { VERIFIED_DATASETS } from '../verify/identities.ts';
import { LAKE_IDENTITY } from '../verify/lake-match.ts';
import type { Mismatch } from '../verify/reconcile.ts';
import { recordChecks } from '../verify/record.ts';
import { type Repaired, repair, repairTargets } from '../verify/repair.ts';
import { type VerifyReport, type VerifyRequest, verify } from '../verify/verify.ts';
import type { CommandBody } from './command-body.ts';
import { chainsOption, checkReadableDataDir, configFor, day, list, parseChains } from './options.ts';
import { type MaintenanceArgs, maintenanceOptions, withDataLock } from './write-options.ts';

interface Args extends MaintenanceArgs {
  repair: boolean;
  values: boolean;
  chains?: string;
  datasets?: string;
  from?: string;
  to?: string;
  format: 'table' | 'json';
}

const dayText = (t: number | null) => (t === null ? '-' : new Date(t * 1000).toISOString().slice(0, 10));
/** A run of days: one day, or its first and last. */
const daysText = (first: number, last: number) =>
  first === last ? dayText(first) : `${dayText(first)}…${dayText(last)}`;
const dayStart = (d: string | undefined) => (d === undefined ? undefined : Date.parse(`${d}T00:00:00Z`) / 1000);

/**
 * The checks, one line each (the lake's, one line per chain): what was compared, at which block, how many differ. Where
 * the table is wider than `width`, the identity column goes (each dataset has one identity, which the README lists and
 * `--format json` gives), and a line below says so.
 */
function checkLines(checks: readonly Check[], width = Number.POSITIVE_INFINITY): string[] {
  const done = checks.filter((c) => !c.skipped && !c.error && c.identity !== LAKE_IDENTITY);
  const rows = done.map((c) => [
    chainName(c.chainId),
    c.dataset,
    c.identity,
    String(c.block),
    c.days ? (c.days.first === 0 ? `to ${dayText(c.days.last)}` : daysText(c.days.first, c.days.last)) : 'all',
    String(c.groups),
    String(c.mismatches.length),
  ]);
  const head = ['chain', 'dataset', 'identity', 'block', 'days', 'groups', 'differ'];
  const right = [false, false, false, true, false, true, true];
  let out = rows.length ? tableLines(head, rows, { right }) : [];
  if (out.some((l) => cells(l) > width)) {
    const without = <T>(xs: readonly T[]) => xs.filter((_, i) => i !== 2);
    out = [
      ...tableLines(without(head), rows.map(without), { right: without(right) }),
      `(each dataset's identity: \`verify --format json\`, or a terminal of ${maxOf(out.map(cells))} columns)`,
    ];
  }
  for (const chainId of new Set(checks.filter((c) => c.identity === LAKE_IDENTITY).map((c) => c.chainId))) {
    const lake = checks.filter((c) => c.identity === LAKE_IDENTITY && c.chainId === chainId && !c.skipped);
    const groups = lake.reduce((n, c) => n + c.groups, 0);
    const differ = lake.reduce((n, c) => n + c.mismatches.length, 0);
    out.push(
      `${chainName(chainId)}: the lake against the warehouse, ${lake.length} datasets, ${groups} days (or tables) compared, ${differ} differ`,
    );
  }
  for (const c of checks.filter((x) => x.skipped))
    out.push(`not checked: ${c.dataset} on ${chainName(c.chainId)} (${c.identity}): ${c.skipped}`);
  for (const c of checks.filter((x) => x.error))
    out.push(`could not check ${c.dataset} on ${chainName(c.chainId)} (${c.identity}): ${inert(c.error!)}`);
  return out;
}

/** Every mismatch: chain, dataset, day, pool (or token, crowd pool), expected and found. */
function mismatchLines(ms: readonly Mismatch[], width: number): string[] {
  const rows = ms.map((m) => [
    chainName(m.chainId),
    m.dataset,
    dayText(m.day),
    m.key === null ? '-' : `${m.keyKind} ${fit(inert(m.key), Math.max(12, width - 80))}`,
    String(m.expected),
    String(m.found),
    `${m.identity === LAKE_IDENTITY ? 'lake rows (expected: the warehouse’s)' : m.identity}${m.detail ? `: ${inert(m.detail)}` : ''}`,
  ]);
  return tableLines(['chain', 'dataset', 'day', 'pool / token', 'expected', 'found', 'identity'], rows, {
    right: [false, false, false, false, true, true, false],
  });
}

/** The report as JSON: every check and every mismatch, days as YYYY-MM-DD. */
function json(r: VerifyReport): object {
  const mismatch = (m: Mismatch) => ({
    ...m,
    chain: chainName(m.chainId),
    day: m.day === null ? null : dayText(m.day),
  });
  return {
    ok: r.mismatches.length === 0 && !r.checks.some((c) => c.error),
    requests: r.requests,
    checks: r.checks.map((c) => ({
      ...c,
      chain: chainName(c.chainId),
      days: c.days ? { first: dayText(c.days.first), last: dayText(c.days.last) } : null,
      mismatches: c.mismatches.length,
    })),
    mismatches: r.mismatches.map(mismatch),
  };
}

/** The report as text: the checks, then every mismatch. */
function text(r: VerifyReport): string {
  const width = terminalWidth().width;
  const prose = (line: string) => (width && !line.includes('  ') ? wrap(line, { width, indent: 2 }) : line);
  const out = [...checkLines(r.checks, width).map(prose), `${r.requests} requests to the upstream`];
  out.push(
    r.mismatches.length
      ? `\n${r.mismatches.length} groups differ from the upstream's counters:\n${mismatchLines(r.mismatches, width ?? 80).join('\n')}`
      : r.checks.some((c) => c.error)
        ? 'some identities could not be checked (above)'
        : 'every identity checked holds',
  );
  return out.join('\n');
}

/** What a repair did, a line per dataset and chain. */
function repairLines(done: readonly Repaired[]): string {
  return done
    .map((d) => {
      if (d.ranges === 'lake')
        return `rewrote the lake's files of ${d.dataset} on ${chainName(d.chainId)} from the warehouse`;
      const what =
        d.ranges === 'all'
          ? 'every row'
          : d.ranges === 'ids'
            ? 'every row, those gone upstream taken out'
            : d.ranges.map((r) => daysText(r.from, r.to - 86_400)).join(', ');
      return `repaired ${d.dataset} on ${chainName(d.chainId)} (${what}): ${d.rows} rows re-read in ${d.requests} requests`;
    })
    .join('\n');
}

/**
 * The answer while a run holds the warehouse: each dataset's last verification, as the run's status file keeps it
 * (the run verifies what it touched), with its gaps; exit 4 when one found gaps.
 */
function lastVerified(a: Args, config: Config, chains: readonly number[]): void {
  const file = readStatusFile(config.dataDir);
  const entries = (file?.entries ?? []).filter((e) => chains.includes(e.chainId) && e.verification);
  const note = `a run holds the warehouse in ${config.dataDir} (DuckDB lets no other process read it): these are the last verifications the runs recorded, as of ${file?.writtenAt ?? 'never'}; verify again once the run has ended to check now`;
  if (a.format === 'json')
    process.stdout.write(
      `${jsonSafe(JSON.stringify({ running: true, note, verifications: entries.map((e) => ({ dataset: e.dataset, chain: chainName(e.chainId), ...e.verification })) }, null, 2))}\n`,
    );
  else {
    const rows = entries.map((e) => [
      chainName(e.chainId),
      e.dataset,
      e.verification!.at,
      String(e.verification!.gaps),
    ]);
    process.stdout.write(
      `${note}\n${tableLines(['chain', 'dataset', 'verified', 'gaps'], rows, { right: [false, false, false, true] }).join('\n')}\n`,
    );
  }
  if (entries.some((e) => e.verification!.gaps > 0)) process.exitCode = EXIT_GAPS;
}

/** Verifies; with `repair`, re-reads what is missing under the data folder's lock, then verifies again. */
async function run(
  a: Args,
  config: Config,
  req: Omit<VerifyRequest, 'warehouse' | 'client' | 'config'>,
): Promise<void> {
  const client = UpstreamClient.forConfig(config);
  const print = (r: VerifyReport) => (a.format === 'json' ? undefined : process.stdout.write(`${text(r)}\n`));
  if (!a.repair) {
    let warehouse: Warehouse;
    try {
      warehouse = await Warehouse.open(config.dataDir, { readOnly: true });
    } catch (e) {
      if (!/in use by another process/.test((e as Error).message)) throw e;
      // A run holds the warehouse, and DuckDB lets no other process read it: answer from the status file instead.
      return lastVerified(a, config, req.chains);
    }
    let report: VerifyReport;
    try {
      report = await verify({ ...req, config, warehouse, client });
    } finally {
      await warehouse.close();
    }
    if (a.format === 'json') process.stdout.write(`${jsonSafe(JSON.stringify(json(report), null, 2))}\n`);
    else print(report);
    if (report.mismatches.length) {
      process.exitCode = EXIT_GAPS;
      if (a.format !== 'json') process.stdout.write('(pool-export verify --repair re-reads them)\n');
    } else if (report.checks.some((c) => c.error)) process.exitCode = 1;
    return;
  }
  await withDataLock(a, 'verify --repair', async () => {
    const warehouse = await Warehouse.open(config.dataDir);
    try {
      const before = await verify({ ...req, config, warehouse, client });
      print(before);
      const log = () => undefined;
      const repaired = await repair(
        { config, warehouse, client, signal: new AbortController().signal, log },
        repairTargets(before.checks),
      );
      if (repaired.length) {
        if (a.format !== 'json') process.stdout.write(`\n${repairLines(repaired)}\n`);
        await updateLakeFor(warehouse, config, { runId: `repair-${randomUUID()}` });
      }
      const after = repaired.length ? await verify({ ...req, config, warehouse, client }) : before;
      // The ledger keeps the verification that stands now (status shows it).
      await recordChecks(warehouse, `verify-${randomUUID()}`, after.checks);
      await refreshStatusFile(warehouse, config.dataDir).catch(() => undefined);
      if (a.format === 'json')
        process.stdout.write(
          `${jsonSafe(JSON.stringify({ before: json(before), repaired, after: json(after) }, null, 2))}\n`,
        );
      else if (repaired.length) process.stdout.write(`\nafter the repair:\n${text(after)}\n`);
      if (after.mismatches.length) process.exitCode = EXIT_GAPS;
      else if (after.checks.some((c) => c.error)) process.exitCode = 1;
    } finally {
      await warehouse.close();
    }
  });
}

/** The yargs module of the `verify` command. */
export const verifyCommand: CommandBody<Args> = {
  builder: (y) =>
    chainsOption(maintenanceOptions(y), 'comma list of chains (default: the configured chains)')
      .option('repair', {
        type: 'boolean',
        default: false,
        describe: 're-read what is missing (at the block it was checked at, checkpoints untouched), then verify again',
      })
      .option('values', {
        type: 'boolean',
        default: false,
        describe:
          "compare every stored row's values with the upstream's at the checked block, and the lake's with the warehouse's (a full re-read's requests; docs/verifying.md)",
      })
      .option('datasets', {
        type: 'string',
        describe: `comma list of datasets (default: every one an identity checks; with --values, every one exported)`,
      })
      .option('from', { type: 'string', describe: 'first day to check, YYYY-MM-DD (UTC; default: the first)' })
      .option('to', {
        type: 'string',
        describe: 'last day to check, YYYY-MM-DD (UTC; default: the last whose rows are all stored)',
      })
      .option('format', { choices: ['table', 'json'] as const, default: 'table' as const, describe: 'table, or JSON' }),
  handler: async (a) => {
    const config = configFor(a);
    // The configured chains, and those of the subgraphs added by name; in a folder of subgraphs alone, theirs alone.
    const dodo = folderSources(config, []).dodo;
    const chains = parseChains(a.chains) ?? [
      ...new Set([...(dodo ? config.chains : []), ...subgraphs().flatMap((s) => s.deployments.map((d) => d.chainId))]),
    ];
    const ofSubgraph = (name: string) => subgraphOf(findDataset(name)!.schema) !== undefined;
    let datasets = list(a.datasets)?.map((n) => {
      const ds = datasetNamed(n);
      if (!a.values && !VERIFIED_DATASETS.has(ds.name) && !ofSubgraph(ds.name))
        throw new UsageError(
          `no identity checks ${ds.name}; verify checks ${[...VERIFIED_DATASETS].join(', ')} and the subgraphs' datasets (see docs/verifying.md); verify --values compares every exported dataset's rows`,
        );
      return ds.name;
    });
    // A subgraph's endpoints need no key: without one, the subgraphs alone are verified, when that is what is asked.
    if (!config.apiKey && !datasets && subgraphs().length) {
      datasets = DATASETS.filter((d) => ofSubgraph(d.name)).map((d) => d.name);
      if (dodo) process.stderr.write("no API key: DODO's counters are not read; the subgraphs' rows are verified\n");
    }
    const from = dayStart(day('from', a.from));
    const to = dayStart(day('to', a.to));
    if (from !== undefined && to !== undefined && to < from)
      throw new UsageError(`--to ${a.to} is before --from ${a.from}; give the first day first`);
    if (!config.apiKey && !datasets?.every(ofSubgraph))
      throw new UsageError("verify reads the upstream's counters: set POOL_EXPORT_API_KEY");
    checkReadableDataDir(config.dataDir);
    await run(a, config, {
      chains,
      ...(datasets ? { datasets: new Set(datasets) } : {}),
      ...(from !== undefined ? { from } : {}),
      ...(to !== undefined ? { to } : {}),
      ...(a.values ? { values: true } : {}),
    });
  },
};
