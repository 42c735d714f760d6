/**
 * What the tests of a whole run called in-process (test/unit/pipeline*.test.ts) share: the tier's shared sandbox,
 * the datasets a run of seconds reads, a data folder per test (removed after the file), and one export with what it
 * logged, a sandbox of a test's own, the warehouse, the lake's part files and a fingerprint of the stored swaps.
 */

import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, inject } from 'vitest';
import { JOBS } from '../../jobs/index.ts';
import { type Config, loadConfig } from '../../src/config/config.ts';
import { buildPlan } from '../../src/export/routing/plan.ts';
import type { ProgressSink } from '../../src/export/run-args.ts';
import { runOnce } from '../../src/pipeline/run.ts';
import { callControl, type SandboxEndpoint, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { sandboxEnv } from './cli-process.ts';
import { SHARED_SANDBOX_FLAGS } from './shared-sandbox.ts';

export const CHAIN = 56;
/** One dataset of each cursor kind, and those the reports read: a run of these takes seconds, not a minute. */
export const DATASETS = [
  'list.liquidity',
  'dodoex.dodo_zoos',
  'dodoex.pair_day_datas',
  'dodoex.token_day_datas',
  'dodoex.swaps',
  'dodoex.pairs',
  'dodoex.tokens',
];
/** The tier's shared sandbox (test/support/shared-sandbox.ts): read only, never advanced or reorganised here. */
export let sb: SandboxEndpoint;
export const dirs: string[] = [];

export function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'pool-export-pipeline-'));
  dirs.push(d);
  return join(d, 'data');
}

export interface Logged {
  event: string;
  fields: Record<string, unknown>;
  level: string;
}

export async function exportOnce(
  dataDir: string,
  opts: {
    overrides?: Partial<Record<keyof Config, unknown>>;
    signal?: AbortSignal;
    datasets?: string[];
    waitLockSecs?: number;
    onEvent?: (e: Logged) => void;
    /** Another sandbox than the shared one. */
    sandbox?: SandboxEndpoint;
    progress?: ProgressSink;
  } = {},
) {
  const config = loadConfig({
    env: sandboxEnv(opts.sandbox ?? sb, dataDir),
    overrides: { chains: [String(CHAIN)], ...opts.overrides },
  });
  const tasks = buildPlan(config, { jobs: JOBS, chains: [CHAIN], datasets: opts.datasets ?? DATASETS });
  const events: Logged[] = [];
  const outcome = await runOnce({
    config,
    tasks,
    jobs: ['state', 'events'],
    signal: opts.signal ?? new AbortController().signal,
    log: (event, fields, level = 'info') => {
      events.push({ event, fields, level });
      opts.onEvent?.({ event, fields, level });
    },
    waitLockSecs: opts.waitLockSecs ?? 0,
    ...(opts.progress ? { progress: opts.progress } : {}),
  });
  return { outcome, events };
}

export async function withWarehouse<T>(dataDir: string, f: (w: Warehouse) => Promise<T>): Promise<T> {
  const w = await Warehouse.open(dataDir, { readOnly: true });
  try {
    return await f(w);
  } finally {
    await w.close();
  }
}

/** Runs `f` with a sandbox of its own (for a test that changes the upstream's world), stopped after. */
export async function withOwnSandbox(
  f: (own: SandboxProcess) => Promise<void>,
  flags: string[] = SHARED_SANDBOX_FLAGS,
): Promise<void> {
  const own = await startSandbox(flags);
  try {
    await f(own);
  } finally {
    await own.stop();
  }
}

/** Part files per lake folder that holds any. */
export function partFiles(dir: string, out = new Map<string, number>()): Map<string, number> {
  const names = readdirSync(dir, { withFileTypes: true });
  const parts = names.filter((n) => n.isFile() && /^part-.*\.parquet$/.test(n.name)).length;
  if (parts) out.set(dir, parts);
  for (const n of names) if (n.isDirectory() && n.name !== '.tmp') partFiles(join(dir, n.name), out);
  return out;
}

/** A fingerprint of every stored swap (all columns), to tell whether a run rewrote stored rows. */
export const swapsFingerprint = (w: Warehouse) =>
  w.all('SELECT count(*)::VARCHAR AS n, sum(hash(CAST(s AS VARCHAR)))::VARCHAR AS h FROM dodoex.swaps s');

/** The tier's shared sandbox before the calling file's tests; their data folders removed after them. */
export function usePipelineFixture(): void {
  beforeAll(() => {
    const { url, apiKey } = inject('sharedSandbox');
    sb = { url, apiKey, control: (path, body) => callControl(url, path, body) };
  });
  afterAll(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
}
