/**
 * Each run verifies what it touched: on every chain, the datasets whose tasks ended well, over the days from the first
 * one their tasks rewrote (`rewriteFrom`) to their block, with the tables counted whole where their task ran. The
 * lake's check is left to `verify`. What it found goes to the ledger and the log; gaps never fail the run (`status`
 * shows them, and exits non-zero).
 */
import type { Config } from '../config/config.ts';
import type { TaskResult } from '../export/task.ts';
import type { Sql } from '../store/sql-port.ts';
import type { UpstreamClient } from '../upstream/client.ts';
import type { EndpointInfo } from '../upstream/endpoint-probe.ts';
import type { EventLog } from '../util/logger.ts';
import { redact } from '../util/redact.ts';
import { VERIFIED_DATASETS } from './identities.ts';
import { recordChecks } from './record.ts';
import { verify } from './verify.ts';

const DAY = 86_400;

/** What a run's verification found. */
export interface RunVerification {
  /** Chains verified: none when every task the run verifies read nothing new. */
  readonly chains: number;
  readonly groups: number;
  readonly gaps: number;
  readonly errors: number;
  readonly requests: number;
}

/** Verifies what a run's tasks touched; records and logs it. */
export async function verifyRun(args: {
  readonly config: Config;
  /** The warehouse, or a lane of it (a run verifies on a connection of its own, beside the lake write). */
  readonly warehouse: Sql;
  readonly client: UpstreamClient;
  readonly runId: string;
  readonly results: readonly TaskResult[];
  readonly log: EventLog;
  /** What the run's probes found of its routes (see `VerifyRequest.probed`). */
  readonly probed?: ReadonlyMap<string, EndpointInfo>;
}): Promise<RunVerification> {
  const byChain = new Map<number, { datasets: Set<string>; from: number | undefined }>();
  for (const r of args.results) {
    // A task that read nothing (its block had not moved) touched nothing: the run that read it verified it.
    if (r.status !== 'ok' || r.unchanged || !VERIFIED_DATASETS.has(r.task.ds.name)) continue;
    const c = byChain.get(r.task.chainId) ?? { datasets: new Set<string>(), from: undefined };
    c.datasets.add(r.task.ds.name);
    const from = r.stats.rewriteFrom;
    if (from !== undefined) c.from = Math.min(c.from ?? Infinity, Math.floor(from / DAY) * DAY);
    byChain.set(r.task.chainId, c);
  }
  // Chains with the same datasets and first day are verified together: one statement per identity for all of them,
  // where each chain on its own cost one per identity and chain (120 after 100 new blocks on the demo's 8 chains).
  const together = new Map<string, { datasets: ReadonlySet<string>; from: number | undefined; chains: number[] }>();
  for (const [chainId, c] of byChain) {
    const key = JSON.stringify([[...c.datasets].sort(), c.from ?? null]);
    const g = together.get(key) ?? { datasets: c.datasets, from: c.from, chains: [] };
    g.chains.push(chainId);
    together.set(key, g);
  }
  const total = { groups: 0, gaps: 0, errors: 0, requests: 0 };
  for (const c of together.values()) {
    const report = await verify({
      config: args.config,
      warehouse: args.warehouse,
      client: args.client,
      chains: c.chains,
      datasets: c.datasets,
      lake: false,
      ...(c.from !== undefined ? { from: c.from } : {}),
      ...(args.probed ? { probed: args.probed } : {}),
    });
    await recordChecks(args.warehouse, args.runId, report.checks);
    total.groups += report.checks.reduce((n, x) => n + x.groups, 0);
    total.gaps += report.mismatches.length;
    total.errors += report.checks.filter((x) => x.error).length;
    total.requests += report.requests;
    for (const x of report.checks.filter((k) => k.mismatches.length))
      args.log(
        'verify-gaps',
        {
          dataset: x.dataset,
          chainId: x.chainId,
          identity: x.identity,
          gaps: x.mismatches.length,
          first: x.mismatches
            .slice(0, 3)
            .map((m) => ({ day: m.day, key: m.key, expected: m.expected, found: m.found })),
        },
        'warn',
      );
    for (const x of report.checks.filter((k) => k.error))
      args.log(
        'verify-failed',
        { dataset: x.dataset, chainId: x.chainId, identity: x.identity, error: redact(x.error!, args.config.secrets) },
        'warn',
      );
  }
  args.log('verified', { runId: args.runId, chains: byChain.size, ...total });
  return { chains: byChain.size, ...total };
}
