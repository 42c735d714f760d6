/**
 * `verify --repair`: re-reads exactly what a verification found missing, at the block it was checked at, and replaces
 * those rows, with the checkpoints left where they stand. Events and buckets: the chain's rows of each run of
 * consecutive days named (one transaction each); tables counted whole (tokens, users, bid positions): every row, by
 * id. The lake's partitions of those days are rewritten after, as after a run.
 */
import { randomUUID } from 'node:crypto';
import type { Dataset } from '../catalog/catalog.ts';
import { findDataset } from '../catalog/catalog.ts';
import type { Config } from '../config/config.ts';
import { InlinePageChecker } from '../export/check/page-check-runner.ts';
import { pageAggregationWhole } from '../export/paginate/aggregation.ts';
import { pageById } from '../export/paginate/by-id.ts';
import { runPass } from '../export/paginate/pass.ts';
import { firstId } from '../export/queries.ts';
import type { TaskDeps } from '../export/seams.ts';
import { keyValue, TaskRun } from '../export/task-run.ts';
import { CheckpointStore } from '../store/checkpoint-store.ts';
import { DuckDBSink } from '../store/sink.ts';
import type { Warehouse } from '../store/warehouse.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import { type EndpointInfo, endpointInfo, PROBE_QUERY, type ProbeAnswer } from '../upstream/endpoint-probe.ts';
import { headRoutesFor } from '../upstream/routes.ts';
import type { EventLog } from '../util/logger.ts';
import { qt } from '../util/sql.ts';
import type { Check } from './check.ts';
import { LAKE_IDENTITY } from './lake-match.ts';
import { VALUES_IDENTITY } from './row-values.ts';
import { IDS_IDENTITY } from './subgraph-ids.ts';

const DAY = 86_400;

/**
 * What one dataset on one chain needs: day ranges [from, to) of its keyset column re-read, or every row; or (`lake`)
 * its lake files rewritten from the warehouse.
 */
export interface RepairTarget {
  readonly chainId: number;
  readonly ds: Dataset;
  readonly block: number;
  readonly ranges: readonly { readonly from: number; readonly to: number }[] | 'all' | 'ids' | 'lake';
}

/** The repairs a verification calls for: one per dataset and chain with mismatches. */
export function repairTargets(checks: readonly Check[]): RepairTarget[] {
  const byDataset = new Map<
    string,
    { chainId: number; ds: Dataset; block: number; days: Set<number>; all: boolean; ids?: boolean }
  >();
  const lake: RepairTarget[] = [];
  for (const c of checks) {
    if (!c.mismatches.length) continue;
    if (c.identity === LAKE_IDENTITY) {
      lake.push({ chainId: c.chainId, ds: findDataset(c.dataset)!, block: 0, ranges: 'lake' });
      continue;
    }
    if (c.block === null) continue;
    const key = `${c.chainId}/${c.dataset}`;
    const t = byDataset.get(key) ?? {
      chainId: c.chainId,
      ds: findDataset(c.dataset)!,
      block: c.block,
      days: new Set(),
      all: false,
    };
    for (const m of c.mismatches)
      if (m.day === null) t.all = true;
      else t.days.add(m.day);
    // A subgraph's row ids, or rows whose values differ: every row read again, and the rows the upstream no longer has
    // taken out.
    if (c.identity === IDS_IDENTITY || c.identity === VALUES_IDENTITY) t.ids = true;
    byDataset.set(key, t);
  }
  const rows = [...byDataset.values()].map(
    (t): RepairTarget => ({
      chainId: t.chainId,
      ds: t.ds,
      block: t.block,
      ranges: t.ids ? 'ids' : t.all ? 'all' : dayRanges([...t.days]),
    }),
  );
  // The lake's files are rewritten after the rows they hold are repaired.
  return [...rows, ...lake];
}

/** Runs of consecutive days, as [from, to) in seconds. */
export function dayRanges(days: readonly number[]): { from: number; to: number }[] {
  const out: { from: number; to: number }[] = [];
  for (const d of [...days].sort((a, b) => a - b)) {
    const last = out[out.length - 1];
    if (last && last.to === d) last.to = d + DAY;
    else out.push({ from: d, to: d + DAY });
  }
  return out;
}

/** What a repair needs. */
export interface RepairArgs {
  readonly config: Config;
  readonly warehouse: Warehouse;
  readonly client: UpstreamClient;
  readonly signal: AbortSignal;
  readonly log: EventLog;
}

/** What one target's repair did. */
export interface Repaired {
  readonly chainId: number;
  readonly dataset: string;
  readonly ranges: RepairTarget['ranges'];
  readonly rows: number;
  readonly requests: number;
}

/** Has a dataset's lake files of a chain rewritten whole from the warehouse by the next lake write. */
async function relake(args: RepairArgs, t: RepairTarget): Promise<Repaired> {
  await args.warehouse.exec(
    `INSERT OR REPLACE INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild) VALUES ($1, $2, NULL, [], true)`,
    [t.chainId, t.ds.name],
  );
  return { chainId: t.chainId, dataset: t.ds.name, ranges: 'lake', rows: 0, requests: 0 };
}

/**
 * A subgraph's dataset whose ids differ from the upstream's: every row read again at the block checked (by id, or an
 * aggregation newest first), then the stored rows the upstream did not answer with taken out, in one commit.
 */
async function rereadIds(run: TaskRun, warehouse: Pick<Warehouse, 'all'>): Promise<void> {
  const ds = run.task.ds;
  run.watchIds();
  if (ds.aggregation) await pageAggregationWhole(run, {});
  else await pageById(run, { pass: { shape: 'id' }, startId: firstId(ds), replace: { kind: 'ids' }, finish: {} });
  const stored = await warehouse.all(`SELECT id FROM ${qt(ds.table)} WHERE chain_id = $1`, [run.task.chainId]);
  const gone = stored.map((r) => String(r.id)).filter((id) => !run.wasRead(id));
  if (gone.length) await run.flush({ next: {}, replace: { kind: 'gone', ids: gone } });
}

/** Re-reads one target and replaces its rows under the unmoved checkpoint. */
async function repairOne(args: RepairArgs, t: RepairTarget): Promise<Repaired> {
  if (t.ranges === 'lake') return relake(args, t);
  const { config, warehouse } = args;
  const checkpoints = new CheckpointStore(warehouse);
  const cp = await checkpoints.get(t.chainId, t.ds.name);
  if (!cp) throw new Error(`${t.ds.name} on chain ${t.chainId} has no checkpoint: export it before repairing it`);
  const time = await warehouse.all(
    'SELECT epoch(block_time) AS t FROM _pool_export.checkpoints WHERE chain_id = $1 AND dataset = $2',
    [t.chainId, t.ds.name],
  );
  // The first route that has indexed the block checked (a route behind it cannot answer for it).
  let endpoint = headRoutesFor(config, t.ds, t.chainId)[0]!;
  let info: EndpointInfo | undefined;
  for (const r of headRoutesFor(config, t.ds, t.chainId)) {
    const i = endpointInfo((await args.client.request<ProbeAnswer>(r, PROBE_QUERY, {})).data);
    info ??= i;
    if (i.head.number >= t.block) {
      [endpoint, info] = [r, i];
      break;
    }
  }
  if (!info) throw new Error(`no route of ${t.ds.name} on chain ${t.chainId}`);
  const root = info.roots.get(t.ds.entity);
  if (root === undefined) throw new Error(`the route ${endpoint.label} has no ${t.ds.entity} entity`);
  const deps: TaskDeps = {
    config,
    source: args.client,
    checker: new InlinePageChecker(),
    sink: new DuckDBSink(warehouse, config.dataDir, { signal: args.signal }),
    checkpoints,
    runId: `repair-${randomUUID()}`,
    signal: args.signal,
    log: args.log,
  };
  const task = { chainId: t.chainId, ds: t.ds, endpoint, routes: [endpoint] };
  const pin = { block: { number: t.block, timestamp: Number(time[0]?.t ?? 0) }, root, changeBlock: info.changeBlock };
  let rows = 0;
  let requests = 0;
  const passes = t.ranges === 'all' || t.ranges === 'ids' ? [undefined] : t.ranges;
  for (const range of passes) {
    const run = new TaskRun({ task, deps, pin, keepCheckpoint: true }, cp.cursor);
    const block = t.block;
    if (t.ranges === 'ids') await rereadIds(run, warehouse);
    else if (range === undefined)
      await pageById(run, { pass: { shape: 'id' }, startId: firstId(t.ds), replace: { kind: 'ids' }, finish: {} });
    else {
      const ds = t.ds;
      const to = keyValue(ds, range.to);
      await runPass(run, {
        first: { shape: 'range-first', vars: { block, from: keyValue(ds, range.from), to } },
        next: (last) => ({
          shape: 'range-next',
          vars: { block, seq: keyValue(ds, String(last[ds.seq!])), id: last.id, to },
        }),
        replace: {
          first: { kind: 'range', column: run.seqColumn, from: keyValue(ds, range.from), to },
          later: { kind: 'none' },
        },
        // One batch: the range's rows are replaced in one transaction.
        batchRows: Number.POSITIVE_INFINITY,
        cursor: () => ({}),
      });
    }
    rows += run.stats.rows;
    requests += run.stats.requests;
  }
  args.log('repaired', { dataset: t.ds.name, chainId: t.chainId, block: t.block, rows, requests });
  return { chainId: t.chainId, dataset: t.ds.name, ranges: t.ranges, rows, requests: requests + 1 };
}

/** Repairs every target, one after the other. */
export async function repair(args: RepairArgs, targets: readonly RepairTarget[]): Promise<Repaired[]> {
  const out: Repaired[] = [];
  for (const t of targets) out.push(await repairOne(args, t));
  return out;
}
