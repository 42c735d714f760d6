/** `pool-export status`: per dataset and chain, the last success, rows, lag behind the upstream, the last error. */

import { existsSync } from 'node:fs';
import { type BucketFreshness, bucketFreshness, headClock } from '../bucket/cadence.ts';
import { datasetNamed, findDataset } from '../catalog/catalog.ts';
import { asideSubject, setAsideSubgraphs, subgraphOf } from '../catalog/subgraphs.ts';
import { chainName } from '../config/chains.ts';
import type { Config } from '../config/config.ts';
import { dataFolder } from '../config/data-folder.ts';
import { EXIT_GAPS, EXIT_STALE, UsageError } from '../errors.ts';
import { freshnessOf, readHeads } from '../store/freshness.ts';
import { readEntries, type StatusEntry } from '../store/status-entries.ts';
import { readStatusFile, type StatusFile } from '../store/status-file.ts';
import { Warehouse } from '../store/warehouse.ts';
import { headRoutesFor } from '../upstream/routes.ts';
import { fit, humanDuration, humanNumber, humanTime, tableLines, terminalWidth } from '../util/display.ts';
import { maxOf } from '../util/extremes.ts';
import { inert, jsonSafe } from '../util/inert.ts';
import { processAlive } from '../util/processes.ts';
import { wrap } from '../util/wrap.ts';
import type { CommandBody } from './command-body.ts';
import {
  chainsOption,
  checkReadableDataDir,
  configFor,
  type FolderArgs,
  folderOptions,
  list,
  parseChains,
  parseDuration,
} from './options.ts';

interface Args extends FolderArgs {
  json: boolean;
  'stale-after': string;
  offline: boolean;
  chains?: string;
  datasets?: string;
}

/** One line of the status report. */
export interface StatusRow {
  dataset: string;
  chain: string;
  chainId: number;
  lastSuccess: string | null;
  rows: number;
  block: number | null;
  blockTime: string | null;
  upstreamBlock: number | null;
  lagBlocks: number | null;
  lagSeconds: number | null;
  lastError: string | null;
  /** The route its last task read from, when its chain and schema has several. */
  route: string | null;
  /** The last run found no such entity at the dataset's endpoint: skipped there, never stale. */
  unavailable: boolean;
  /** Its last task was stopped on request (no failure: the next run resumes it). */
  stopped: boolean;
  stale: boolean;
  /** Its last verification against the upstream's counters, if any: when, and how many groups differed. */
  verification: { at: string; gaps: number; error: string | null } | null;
}

/**
 * Where the datasets stand: from the status file a run keeps (it needs no lock, so status answers during a run), or,
 * for a warehouse no run of this version has written yet, from the warehouse itself.
 */
async function entries(dataDir: string): Promise<{ entries: readonly StatusEntry[]; file?: StatusFile }> {
  const file = readStatusFile(dataDir);
  // A run stopped by a signal or killed left the file as it was while it ran (without the tasks it stopped, whose
  // committed batches count): the warehouse, free again, holds what it committed.
  const stale = file?.run.state === 'running' && !processAlive(file.run.pid);
  if (file && !stale) return { entries: file.entries, file };
  if (!existsSync(dataFolder(dataDir).warehouse)) return { entries: file?.entries ?? [], ...(file ? { file } : {}) };
  let w: Warehouse;
  try {
    w = await Warehouse.open(dataDir, { readOnly: true });
  } catch (e) {
    // A new run holds it and has not written its file yet: the last file is the best figure until it does.
    if (file && /in use by another process/.test((e as Error).message)) return { entries: file.entries, file };
    if (/in use by another process/.test((e as Error).message))
      throw new Error(
        `a run holds the warehouse in ${dataDir} and no status file was written there yet (runs of this version write one); try again once it has ended`,
        { cause: e },
      );
    throw e;
  }
  try {
    return { entries: await readEntries(w), ...(file ? { file } : {}) };
  } finally {
    await w.close();
  }
}

/** Whether a dataset's last verification found groups that differ from the upstream's counters. */
const gaps = (r: StatusRow) => (r.verification?.gaps ?? 0) > 0;

/**
 * The bucket lake's own freshness, beside the warehouse's: when it was last published, whether the local lake holds
 * rows it lacks (runs within `lake.publishEvery`), and its lag per chain (from the newest block its state covers).
 */
function bucketLine(b: BucketFreshness, chains: readonly number[], nowSecs: number): string {
  if (b.publishedAt === null) return `bucket lake ${b.url}: never published from this data folder`;
  const lags = [...b.lagSeconds].filter(([c]) => chains.includes(c));
  return `bucket lake ${b.url}: published ${humanDuration(Math.max(0, nowSecs - b.publishedAt))} ago, ${
    b.behind ? 'behind the warehouse until its next publish' : 'holding every row the warehouse does'
  }${lags.length ? `; its lag: ${lags.map(([c, l]) => `${chainName(c)} ${humanDuration(l)}`).join(', ')}` : ''}`;
}

/** The source of a dataset: the subgraph it belongs to, or DODO's. */
const sourceOf = (dataset: string) => {
  const schema = dataset.split('.')[0]!;
  return subgraphOf(schema) ? `subgraph ${schema}` : "DODO's";
};

/**
 * The status tables of a folder of several sources: one per subgraph (and DODO's), under a line naming it with its
 * datasets' chains, blocks and worst lag; a folder of one source, one table as ever.
 */
function grouped(rows: readonly StatusRow[], width: number): string {
  const groups = new Map<string, StatusRow[]>();
  for (const r of rows) groups.set(sourceOf(r.dataset), [...(groups.get(sourceOf(r.dataset)) ?? []), r]);
  if (groups.size < 2) return table(rows, width);
  return [...groups]
    .map(([source, rs]) => {
      const chains = [...new Set(rs.map((r) => r.chain))].join(', ');
      const lag = maxOf(rs.map((r) => r.lagSeconds ?? 0));
      const stale = rs.filter((r) => r.stale).length;
      const head = `${source}: ${rs.length} datasets on ${chains}, most behind ${humanDuration(lag)}${stale ? `, ${stale} stale` : ''}`;
      return `${fit(head, width)}\n${table(rs, width)}`;
    })
    .join('\n\n');
}

/** The status table, for an 80-column terminal: dataset, chain, rows, lag, last success, state; errors below. */
function table(rows: readonly StatusRow[], width: number): string {
  const ago = (iso: string | null) =>
    iso === null ? 'never' : `${humanDuration(Math.max(0, Date.now() / 1000 - Date.parse(iso) / 1000))} ago`;
  const cellsOf = rows.map((r) => [
    r.dataset,
    r.chain,
    humanNumber(r.rows),
    r.lagSeconds === null ? '-' : humanDuration(r.lagSeconds),
    ago(r.lastSuccess),
    r.unavailable
      ? 'unavailable'
      : [r.stale ? 'STALE' : '', gaps(r) ? 'GAPS' : ''].filter(Boolean).join('+') || (r.stopped ? 'stopped' : 'ok'),
  ]);
  const head = ['dataset', 'chain', 'rows', 'lag', 'last success', 'state'];
  const [headLine, ...rowLines] = tableLines(head, cellsOf, { right: [false, false, true, true, false, false] });
  const out = [headLine!];
  rows.forEach((r, i) => {
    out.push(rowLines[i]!);
    if (r.route) out.push(`  route: ${fit(r.route, width - 9)}`);
    if (r.lastError) out.push(`  last error: ${fit(r.lastError, width - 14)}`);
    if (gaps(r))
      out.push(
        `  gaps: ${r.verification!.gaps} groups differ from the upstream's counters (verified ${ago(r.verification!.at)}); pool-export verify names them`,
      );
  });
  const verified = rows.filter((r) => r.verification);
  if (verified.length) {
    const last = verified
      .map((r) => r.verification!.at)
      .sort()
      .at(-1)!;
    const withGaps = verified.filter(gaps).length;
    out.push(
      `verified against the upstream's counters: ${verified.length} of these, last ${ago(last)}; ${withGaps ? `${withGaps} with gaps` : 'no gaps'}`,
    );
  }
  return out.join('\n');
}

/** One route of a chain and schema that has several: its head now, and how far behind the freshest of them. */
export interface RouteLag {
  readonly chainId: number;
  readonly schema: string;
  readonly route: string;
  readonly head: number | null;
  readonly lagBlocks: number | null;
}

/** Every route of the chains and schemas shown that have several, with its head and lag (null when not read). */
function routeTable(
  config: Config,
  keys: readonly { dataset: string; chainId: number }[],
  heads: ReadonlyMap<string, { number: number }>,
): RouteLag[] {
  const out: RouteLag[] = [];
  const seen = new Set<string>();
  for (const k of keys) {
    const ds = findDataset(k.dataset)!;
    const routes = headRoutesFor(config, ds, k.chainId);
    const schema = ds.kind === 'list' ? 'dodoex' : ds.schema;
    if (routes.length < 2 || seen.has(`${k.chainId}/${schema}`)) continue;
    seen.add(`${k.chainId}/${schema}`);
    const top = maxOf(routes.map((e) => heads.get(e.url)?.number ?? -1));
    for (const e of routes) {
      const head = heads.get(e.url)?.number ?? null;
      out.push({ chainId: k.chainId, schema, route: e.label, head, lagBlocks: head === null ? null : top - head });
    }
  }
  return out;
}

/** The routes section of the status report: each route's head and lag, then its address on a line of its own. */
function routeLines(routes: readonly RouteLag[], width: number): string {
  const lines: string[] = ['routes:'];
  let at = '';
  let n = 0;
  for (const r of routes) {
    const key = `${chainName(r.chainId)}/${r.schema}`;
    n = key === at ? n + 1 : 1;
    at = key;
    const where = r.head === null ? 'head not read' : `head ${r.head}, ${r.lagBlocks} blocks behind the freshest`;
    lines.push(`  ${key} route ${n}: ${where}`, `    ${fit(r.route, width - 4)}`);
  }
  return lines.join('\n');
}

/** The yargs module of the `status` command. */
export const statusCommand: CommandBody<Args> = {
  builder: (y) =>
    chainsOption(
      folderOptions(y)
        .option('json', { type: 'boolean', default: false, describe: 'print JSON instead of a table' })
        .option('stale-after', {
          type: 'string',
          default: '2h',
          describe: 'a dataset lagging more than this (or never exported) is stale',
        })
        .option('offline', {
          type: 'boolean',
          default: false,
          describe: 'do not ask the upstream for its head; lag is measured against the clock',
        }),
      'comma list of chains',
    ).option('datasets', { type: 'string', describe: 'comma list of datasets' }),
  handler: async (a) => {
    const config = configFor(a);
    const staleAfter = parseDuration(a['stale-after']);
    const chains = parseChains(a.chains);
    const wanted = list(a.datasets)?.map((n) => datasetNamed(n).name);
    checkReadableDataDir(config.dataDir);
    // A folder that does not exist is a wrong --data-dir (exit 2, as for the other commands), not a stale export.
    if (!existsSync(config.dataDir))
      throw new UsageError(
        `the data folder ${config.dataDir} does not exist, so nothing has been exported there; run \`pool-export run\`, or point --data-dir (or POOL_EXPORT_DATA_DIR) at a data folder (data/demo after \`make demo\`)`,
      );
    const { entries: read, file } = await entries(config.dataDir);
    // Datasets this configuration does not name (a subgraph removed, or set aside) are not shown: a line says so.
    const all = read.filter((e) => findDataset(e.dataset));
    const gone = [...new Set(read.filter((e) => !findDataset(e.dataset)).map((e) => e.dataset.split('.')[0]!))];
    const aside = setAsideSubgraphs();
    // The chains judged: those named, or those the configuration selects and those of its subgraphs' deployments. A chain exported once but no longer
    // configured is not stale: it is left out, and a line says so.
    const judged = chains ?? [
      ...new Set([...config.chains, ...config.subgraphs.flatMap((s) => s.deployments.map((d) => d.chainId))]),
    ];
    const known = all.filter((e) => judged.includes(e.chainId) && (!wanted || wanted.includes(e.dataset)));
    const unconfigured = [...new Set(all.filter((e) => !judged.includes(e.chainId)).map((e) => e.chainId))];
    // Datasets named on the command line that were never exported are shown as such (and are stale).
    const missing = (wanted ?? []).flatMap((d) =>
      judged
        .filter((c) => !known.some((e) => e.dataset === d && e.chainId === c))
        .map(
          (chainId): StatusEntry => ({
            dataset: d,
            chainId,
            lastSuccess: null,
            lastStatus: null,
            lastError: null,
            rows: 0,
            block: null,
            blockTime: null,
          }),
        ),
    );
    const keys = [...known, ...missing];
    const up = a.offline
      ? { heads: new Map<string, { number: number; timestamp: number }>(), why: 'asked not to (--offline)' }
      : await readHeads(config, keys);
    const now = Date.now() / 1000;
    const rows: StatusRow[] = keys.map((c) => {
      // With several routes, lag is measured against the freshest of them.
      const routes = headRoutesFor(config, findDataset(c.dataset)!, c.chainId);
      const f = freshnessOf(config, c, { heads: up.heads, nowSecs: now, staleAfterSecs: staleAfter });
      const unavailable = c.lastStatus === 'unavailable';
      return {
        dataset: c.dataset,
        chain: chainName(c.chainId),
        chainId: c.chainId,
        lastSuccess: c.lastSuccess,
        rows: c.rows,
        block: c.block,
        blockTime: c.blockTime,
        upstreamBlock: f.upstreamBlock,
        lagBlocks: f.lagBlocks,
        lagSeconds: f.lagSeconds,
        lastError: unavailable ? null : c.lastError,
        route: routes.length > 1 ? (c.route ?? null) : null,
        unavailable,
        stopped: c.lastStatus === 'stopped',
        stale: f.stale,
        verification: c.verification ?? null,
      };
    });
    // A run that left the file in 'running' may have been killed: only a live one is in progress.
    const running = file?.run.state === 'running' && processAlive(file.run.pid) ? file.run : undefined;
    const lagAgainst = up.why ? `the clock: ${up.why}` : "the upstream's head";
    const routeLags = routeTable(config, keys, up.heads);
    const bucket = bucketFreshness(config, headClock(rows, now));
    if (a.json) {
      const out = {
        staleAfterSeconds: staleAfter,
        chains: judged.map(chainName),
        notShown: unconfigured.map(chainName),
        lagAgainst,
        running: running ?? null,
        datasets: rows,
        setAside: aside,
        notConfigured: gone,
        routes: routeLags,
        ...(bucket
          ? {
              bucket: {
                url: bucket.url,
                publishedAt: bucket.publishedAt === null ? null : new Date(bucket.publishedAt * 1000).toISOString(),
                behind: bucket.behind,
                lagSeconds: Object.fromEntries(
                  [...bucket.lagSeconds].filter(([c]) => judged.includes(c)).map(([c, l]) => [chainName(c), l]),
                ),
              },
            }
          : {}),
      };
      process.stdout.write(`${jsonSafe(JSON.stringify(out, null, 2))}\n`);
    } else {
      const width = terminalWidth().width ?? 80;
      if (running)
        process.stdout.write(
          `a run is in progress (pid ${running.pid}, since ${humanTime(running.startedAt)}); figures as of ${humanTime(file!.writtenAt)}\n`,
        );
      if (!rows.length)
        process.stdout.write(
          `nothing has been exported to ${config.dataDir} yet; run \`pool-export run\`, or point --data-dir at a data folder (data/demo after \`make demo\`)\n`,
        );
      else process.stdout.write(`${grouped(rows, width)}\nlag is measured against ${lagAgainst}\n`);
      // Named with --chains, the others were left out on purpose.
      if (unconfigured.length && !chains) {
        const names = unconfigured.map(chainName);
        const among = 'not among the configured chains ("chains" in the config file)';
        process.stdout.write(
          `${wrap(`not shown: ${names.join(', ')}: data in this folder, but ${among}; --chains ${names.join(',')} shows them`, { width, indent: 2 })}\n`,
        );
      }
      const never = [...new Set(rows.filter((r) => r.lastSuccess === null && !r.unavailable).map((r) => r.chain))];
      if (never.length && !chains)
        process.stdout.write(
          `${wrap(`never exported on ${never.join(', ')}: a chain you do not export can be left out with "chains" in the config file, or with --chains`, { width, indent: 2 })}\n`,
        );
      for (const x of aside)
        process.stdout.write(
          `${wrap(`${asideSubject(x)} is set aside, not exported: ${inert(x.error)}`, { width, indent: 2 })}\n`,
        );
      if (gone.length)
        process.stdout.write(
          `${wrap(`not shown: data of ${gone.map(inert).join(', ')}, which this folder no longer exports (its tables stay; pool-export subgraph list shows what it exports)`, { width, indent: 2 })}\n`,
        );
      if (routeLags.length) process.stdout.write(`${routeLines(routeLags, width)}\n`);
      if (bucket) process.stdout.write(`${wrap(bucketLine(bucket, judged, now), { width, indent: 2 })}\n`);
    }
    if (rows.some(gaps)) process.exitCode = EXIT_GAPS;
    else if (rows.length === 0 || rows.some((r) => r.stale) || aside.length) process.exitCode = EXIT_STALE;
  },
};
