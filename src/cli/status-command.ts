/** `pool-export status`: per dataset and chain, the last success, rows, lag behind the upstream, the last error. */
import type { CommandModule } from 'yargs';
import { DATASETS, findDataset } from '../catalog/catalog.ts';
import { chainName, parseChain, UsageError } from '../config/chains.ts';
import { loadConfig } from '../config/config.ts';
import { headEndpointFor } from '../export/plan.ts';
import { META_QUERY } from '../export/queries.ts';
import { lockDataDir } from '../store/data-lock.ts';
import { qt } from '../store/ddl.ts';
import { Warehouse } from '../store/warehouse.ts';
import { list } from './run-command.ts';
import { UpstreamClient } from '../upstream/client.ts';

/** Exit code when a dataset is stale (older than `--stale-after`) or has never been exported. */
export const EXIT_STALE = 3;

interface Args {
  json: boolean;
  'stale-after': string;
  offline: boolean;
  chains?: string;
  datasets?: string;
  'data-dir'?: string;
  config?: string;
  'wait-lock': number;
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
  /** The last run found no such entity at the dataset's endpoint: skipped there, never stale. */
  unavailable: boolean;
  stale: boolean;
}

/** Parses `90s`, `15m`, `2h`, `1d` into seconds. */
export function parseDuration(text: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h|d)$/.exec(text.trim());
  if (!m) throw new UsageError(`--stale-after takes a duration such as 90s, 15m, 2h or 1d, not "${text}"`);
  return Number(m[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[m[2] as 's' | 'm' | 'h' | 'd'];
}

type Meta = { _meta: { block: { number: number; timestamp: number | null } } };

/** Upstream heads per endpoint url, or nothing when offline or unreachable. */
async function heads(config: ReturnType<typeof loadConfig>, keys: { dataset: string; chainId: number }[]): Promise<Map<string, { number: number; timestamp: number }>> {
  const client = new UpstreamClient({ apiKey: config.apiKey, userAgent: `${config.userAgentPrefix}-${config.developerId}`, timeoutMs: Math.min(config.timeoutMs, 10_000) });
  const out = new Map<string, { number: number; timestamp: number }>();
  const endpoints = new Map(keys.map((k) => {
    const e = headEndpointFor(config, findDataset(k.dataset)!, k.chainId);
    return [e.url, e];
  }));
  await Promise.all([...endpoints.values()].map(async (e) => {
    try {
      const m = (await client.request<Meta>(e, META_QUERY, {})).data._meta.block;
      out.set(e.url, { number: m.number, timestamp: m.timestamp ?? 0 });
    } catch {
      // Unreachable upstream: lag is reported against the wall clock instead.
    }
  }));
  return out;
}

/** The yargs module of the `status` command. */
export const statusCommand: CommandModule<object, Args> = {
  command: 'status',
  describe: `Report per dataset and chain: last success, rows, lag behind the upstream, last error (exit ${EXIT_STALE} when stale)`,
  builder: (y) =>
    y
      .option('json', { type: 'boolean', default: false, describe: 'print JSON instead of a table' })
      .option('stale-after', { type: 'string', default: '2h', describe: 'a dataset lagging more than this (or never exported) is stale' })
      .option('offline', { type: 'boolean', default: false, describe: 'do not ask the upstream for its head; lag is measured against the clock' })
      .option('chains', { type: 'string', describe: 'comma list of chains' })
      .option('datasets', { type: 'string', describe: 'comma list of datasets' })
      .option('data-dir', { type: 'string', describe: 'data folder' })
      .option('config', { type: 'string', describe: 'JSON config file' })
      .option('wait-lock', { type: 'number', default: 30, describe: 'seconds to wait while a run holds the data folder' }),
  handler: async (a) => {
    const config = loadConfig({ ...(a.config ? { configFile: a.config } : {}), overrides: { dataDir: a['data-dir'] } });
    const staleAfter = parseDuration(a['stale-after']);
    const chains = list(a.chains)?.map(parseChain);
    const wanted = list(a.datasets)?.map((n) => findDataset(n)?.name ?? (() => { throw new UsageError(`unknown dataset "${n}"; run \`pool-export datasets\``); })());
    const lock = await lockDataDir(config.dataDir, 'status', a['wait-lock'], () => undefined);
    let rows: StatusRow[];
    try {
      const w = await Warehouse.open(config.dataDir, { readOnly: true });
      try {
        // Every dataset with a checkpoint, and those whose last task found the entity unavailable upstream.
        const cps = await w.all(`
          WITH t AS (
            SELECT chain_id, dataset, max(ended_at) FILTER (WHERE status = 'ok')::VARCHAR AS last_success,
                   arg_max(error, ended_at) AS last_error, arg_max(status, ended_at) AS last_status
            FROM _pool_export.run_tasks GROUP BY ALL
          )
          SELECT chain_id, dataset, c.block, c.block_time::VARCHAR AS block_time, t.last_success, t.last_error, t.last_status
          FROM _pool_export.checkpoints c FULL JOIN t USING (chain_id, dataset)
          WHERE NOT contains(dataset, '#') AND (c.cursor IS NOT NULL OR t.last_status = 'unavailable')
          ORDER BY dataset, chain_id`);
        const counts = new Map<string, number>();
        for (const ds of DATASETS) {
          const r = await w.all(`SELECT chain_id, count(*) AS n FROM ${qt(ds.table)} GROUP BY chain_id`).catch(() => []);
          for (const x of r) counts.set(`${ds.name}/${x.chain_id}`, Number(x.n));
        }
        const keys = cps.map((c) => ({ dataset: String(c.dataset), chainId: Number(c.chain_id) })).filter((k) => (!chains || chains.includes(k.chainId)) && (!wanted || wanted.includes(k.dataset)));
        const up = a.offline ? new Map() : await heads(config, keys);
        const now = Date.now() / 1000;
        rows = keys.map((k) => {
          const c = cps.find((x) => x.dataset === k.dataset && Number(x.chain_id) === k.chainId)!;
          const head = up.get(headEndpointFor(config, findDataset(k.dataset)!, k.chainId).url);
          const block = c.block === null ? null : Number(c.block);
          const blockTs = c.block_time ? Date.parse(String(c.block_time)) / 1000 : null;
          const lagSeconds = blockTs === null ? null : Math.max(0, Math.round((head?.timestamp ?? now) - blockTs));
          const lastError = c.last_error === null ? null : String(c.last_error);
          const unavailable = c.last_status === 'unavailable';
          return {
            dataset: k.dataset, chain: chainName(k.chainId), chainId: k.chainId, lastSuccess: c.last_success === null ? null : String(c.last_success), rows: counts.get(`${k.dataset}/${k.chainId}`) ?? 0,
            block, blockTime: blockTs === null ? null : new Date(blockTs * 1000).toISOString(), upstreamBlock: head?.number ?? null,
            lagBlocks: head && block !== null ? Math.max(0, head.number - block) : null, lagSeconds, lastError: unavailable ? null : lastError, unavailable,
            stale: !unavailable && (c.last_success === null || lagSeconds === null || lagSeconds > staleAfter),
          };
        });
      } finally {
        await w.close();
      }
    } finally {
      await lock.release();
    }
    if (a.json) process.stdout.write(`${JSON.stringify({ staleAfterSeconds: staleAfter, datasets: rows }, null, 2)}\n`);
    else {
      process.stdout.write('dataset                             chain       last success              rows   lag blocks  lag      state\n');
      for (const r of rows) {
        const lag = r.lagSeconds === null ? '-' : r.lagSeconds < 3600 ? `${Math.round(r.lagSeconds / 60)}m` : `${(r.lagSeconds / 3600).toFixed(1)}h`;
        process.stdout.write(`${r.dataset.padEnd(35)} ${r.chain.padEnd(10)} ${(r.lastSuccess ?? 'never').slice(0, 19).padEnd(20)} ${String(r.rows).padStart(9)} ${String(r.lagBlocks ?? '-').padStart(11)}  ${lag.padEnd(7)}  ${r.unavailable ? 'unavailable upstream' : r.stale ? 'STALE' : 'ok'}${r.lastError ? `  last error: ${r.lastError}` : ''}\n`);
      }
    }
    if (rows.length === 0 || rows.some((r) => r.stale)) process.exitCode = EXIT_STALE;
  },
};
