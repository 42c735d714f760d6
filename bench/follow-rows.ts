/**
 * What a follower reads per run against what is new upstream: after a backfill, five runs each after 10 new blocks
 * (no reorganisation), in two folders read side by side from one sandbox:
 * - follow: the default, where a run walks the chain to tell its last read stands and then reads only what is new;
 * - window: `reorgCheckBlocks: 0`, every run re-reading its re-read window (`reorgWindowSecs`, an hour), as before.
 * Two cases, as the follower's bill is made of them:
 * - DODO's swaps on ethereum at about 14 a block (sandbox scale 100,000 over one day);
 * - the mutable entities of a real schema of 46 entities (the corpus' graph-network, at scale 20,000; the
 *   repository's every-type fixture where the corpus is not beside it).
 * "new upstream" is the oracle: the sandbox's own rows at the two heads, compared row by row as JSON. Rows read are the
 * ledger's (`run_tasks.rows`), requests the sandbox's count of answers served to the run. Each run is checked against
 * the target of at most 3 × new + 100 rows.
 *
 *   npx tsx bench/follow-rows.ts [--runs 5] [--blocks 10]      (the first part of make bench-follow)
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DATASETS } from '../src/catalog/catalog.ts';
import { loadConfig } from '../src/config/config.ts';
import { BIN, type SandboxProcess, startSandbox } from '../src/sandbox/spawn.ts';
import { Warehouse } from '../src/store/warehouse.ts';
import { allRows } from '../test/support/sandbox-client.ts';

const arg = (name: string, fallback: string) => {
  const i = process.argv.indexOf(name);
  return i >= 0 ? Number(process.argv[i + 1]) : Number(fallback);
};
const RUNS = arg('--runs', '5');
const BLOCKS = arg('--blocks', '10');
const ETH = 1;
const CORPUS = resolve(fileURLToPath(new URL('../..', import.meta.url)), 'shared', 'schemas', 'corpus');
const GN = join(CORPUS, 'graphprotocol--graph-network-subgraph--graph-network.graphql');
const SCHEMA = existsSync(GN)
  ? GN
  : fileURLToPath(new URL('../test/fixtures/subgraphs/every-type.graphql', import.meta.url));

interface Case {
  readonly name: string;
  readonly scale: number;
  /** The datasets compared and counted, and the `run` arguments that read them. */
  datasets(): { name: string; schema: string; entity: string }[];
  readonly run: string[];
  readonly subgraph?: boolean;
}

const CASES: Case[] = [
  {
    name: 'DODO swaps, ethereum, ~14 a block',
    scale: 100_000,
    datasets: () => [{ name: 'dodoex.swaps', schema: 'dodoex', entity: 'Swap' }],
    run: ['--chains', 'ethereum', '--datasets', 'dodoex.swaps'],
  },
  {
    name: `mutable entities of a real schema (${existsSync(GN) ? 'graph-network, 46 entities' : 'every-type fixture'})`,
    scale: 20_000,
    datasets: () =>
      DATASETS.filter((d) => d.schema === 'gn' && d.kind === 'mutable').map((d) => ({
        name: d.name,
        schema: 'gn',
        entity: d.entity,
      })),
    run: ['--subgraphs', 'gn'],
    subgraph: true,
  },
];

/** Rows new or changed upstream between two blocks, over the case's datasets. */
async function changed(sb: SandboxProcess, c: Case, from: number, to: number): Promise<number> {
  let n = 0;
  for (const d of c.datasets()) {
    const before = new Map((await allRows(sb, ETH, d.schema, d.entity, from)).map((r) => [r.id, JSON.stringify(r)]));
    for (const r of await allRows(sb, ETH, d.schema, d.entity, to)) if (before.get(r.id) !== JSON.stringify(r)) n++;
  }
  return n;
}

/** The rows the last run read over the case's datasets (the ledger). */
async function lastRunRows(data: string, names: readonly string[]): Promise<number> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows = await w.all(
      `SELECT dataset, rows::BIGINT AS rows FROM _pool_export.run_tasks
       WHERE run_id = (SELECT arg_max(run_id, started_at) FROM _pool_export.runs)`,
    );
    return rows.filter((r) => names.includes(String(r.dataset))).reduce((a, r) => a + Number(r.rows), 0);
  } finally {
    await w.close();
  }
}

const root = mkdtempSync(join(tmpdir(), 'pe-follow-rows-'));
let failed = 0;
try {
  for (const c of CASES) {
    const sb = await startSandbox([
      ...['--scale', String(c.scale), '--history-days', '1', '--chains', String(ETH)],
      ...(c.subgraph ? ['--subgraph', `gn=${SCHEMA}`] : []),
    ]);
    try {
      const folder = (name: string, config: object) => {
        const data = join(root, `${c.subgraph ? 'gn' : 'swaps'}-${name}`);
        const file = join(root, `${name}.json`);
        writeFileSync(file, JSON.stringify(config));
        const env = {
          ...process.env,
          POOL_EXPORT_API_KEY: c.subgraph ? '' : sb.apiKey,
          POOL_EXPORT_BASE_URL: sb.url,
          POOL_EXPORT_GATEWAY_URL: sb.url,
          POOL_EXPORT_DATA_DIR: data,
          POOL_EXPORT_IPFS_URL: `${sb.url}/ipfs/`,
        };
        const cli = (args: string[]) => {
          const r = spawnSync(process.execPath, [BIN, ...args], { env, encoding: 'utf8', maxBuffer: 1 << 28 });
          if (r.status !== 0) throw new Error(`${args.join(' ')}: exit ${r.status}: ${r.stderr.slice(-1500)}`);
        };
        if (c.subgraph) {
          const url = /^subgraph gn: (\S+)$/m.exec(sb.banner)![1]!;
          cli(['subgraph', 'add', 'gn', '--chain', 'ethereum', '--url', url]);
        }
        return { data, env, run: () => cli(['run', '--config', file, ...c.run]) };
      };
      const follow = folder('follow', {});
      const window = folder('window', { reorgCheckBlocks: 0 });
      follow.run();
      window.run();
      if (c.subgraph) loadConfig({ env: follow.env as Record<string, string> });
      const names = c.datasets().map((d) => d.name);
      console.log(`\n${c.name}: ${RUNS} runs after ${BLOCKS} new blocks each, no reorganisation`);
      console.log(
        'run  new upstream  follow: rows  requests   window: rows  requests   follow/window  target ≤ 3×new+100',
      );
      let sums = [0, 0, 0, 0, 0];
      for (let i = 1; i <= RUNS; i++) {
        const from = (await sb.control<{ chains: { head: number }[] }>('info')).chains[0]!.head;
        await sb.control('advance', { blocks: BLOCKS });
        const to = from + BLOCKS;
        const fresh = await changed(sb, c, from, to);
        const read = async (f: typeof follow) => {
          await sb.control('stats', {});
          f.run();
          return [await lastRunRows(f.data, names), (await sb.control<{ requests: number }>('stats')).requests];
        };
        const [fr, fq] = await read(follow);
        const [wr, wq] = await read(window);
        const ok = fr! <= 3 * fresh + 100;
        if (!ok) failed++;
        sums = [sums[0]! + fresh, sums[1]! + fr!, sums[2]! + fq!, sums[3]! + wr!, sums[4]! + wq!];
        console.log(
          `${String(i).padStart(3)}  ${String(fresh).padStart(12)}  ${String(fr).padStart(12)}  ${String(fq).padStart(8)}   ${String(wr).padStart(12)}  ${String(wq).padStart(8)}   ${(fr! / Math.max(1, wr!)).toFixed(3).padStart(13)}  ${ok ? 'met' : 'MISSED'} (${3 * fresh + 100})`,
        );
      }
      const [n, fr, fq, wr, wq] = sums;
      console.log(
        `all  ${String(n).padStart(12)}  ${String(fr).padStart(12)}  ${String(fq).padStart(8)}   ${String(wr).padStart(12)}  ${String(wq).padStart(8)}   ${(fr! / Math.max(1, wr!)).toFixed(3).padStart(13)}  rows read per new row: follow ${(fr! / Math.max(1, n!)).toFixed(2)}, window ${(wr! / Math.max(1, n!)).toFixed(2)}`,
      );
    } finally {
      await sb.stop();
    }
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
if (failed) {
  console.log(`\n${failed} runs read more than 3 × new + 100 rows`);
  process.exitCode = 1;
}
