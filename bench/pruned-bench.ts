/**
 * A backfill of a deployment that keeps little history while its head moves (`make bench`, section `pruned`): the
 * corpus' graph-network schema (46 entities; the repository's every-type fixture where the corpus is not beside it) on
 * a chain of a block every 100 ms, served by the sandbox with `--prune never` (the baseline), `--prune 100` and
 * `--prune 20`, each backfilled by a plain run in pages of 100, the hint read from the deployment's manifest (and once
 * more at 20 with no IPFS endpoint: the hint unknown). Each line: the run's seconds against the baseline's,
 * the tasks that moved their pin (`pin-moved`), and the queries the sandbox refused at a pruned block (`stats.pruned`,
 * which should stay 0: a task moves before its block is pruned).
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../src/sandbox/spawn.ts';
import type { LakeBenchContext } from './lake-bench.ts';
import { cliRun } from './util.ts';

/** What the suite lends this section. */
export type PrunedBenchContext = Pick<LakeBenchContext, 'quick' | 'work' | 'log' | 'line'>;

const CORPUS = resolve(fileURLToPath(new URL('../..', import.meta.url)), 'shared', 'schemas', 'corpus');
const GN = join(CORPUS, 'graphprotocol--graph-network-subgraph--graph-network.graphql');
const SCHEMA = existsSync(GN)
  ? GN
  : fileURLToPath(new URL('../test/fixtures/subgraphs/every-type.graphql', import.meta.url));

/** Backfills of one schema on a sandbox keeping every block, 100 and 20, a block every 100 ms. */
export async function prunedBench(cx: PrunedBenchContext): Promise<void> {
  const scale = cx.quick ? 5000 : 20_000;
  let baseline = 0;
  const cases = [
    { prune: 'never', files: true },
    { prune: '100', files: true },
    { prune: '20', files: true },
    { prune: '20', files: false },
  ];
  for (const { prune, files } of cases) {
    cx.log(`pruned: a backfill at scale ${scale}, --prune ${prune}, a block every 100 ms`);
    const sb = await startSandbox([
      ...['--scale', String(scale), '--chains', '1', '--prune', prune, '--block-time', '100'],
      ...['--subgraph', `gn=${SCHEMA}`],
    ]);
    try {
      const data = join(cx.work, `pruned-${prune}-${files}`);
      mkdirSync(data, { recursive: true });
      const config = join(data, '..', `pruned-${prune}-${files}.json`);
      writeFileSync(config, JSON.stringify({ pageSize: 100, batchRows: 100 }));
      const env = {
        ...process.env,
        POOL_EXPORT_API_KEY: '',
        POOL_EXPORT_BASE_URL: sb.url,
        POOL_EXPORT_DATA_DIR: data,
        // The deployment's own files (its manifest's hint), or none: the schema by introspection, the hint unknown.
        POOL_EXPORT_IPFS_URL: files ? `${sb.url}/ipfs/` : 'http://127.0.0.1:9/ipfs/',
      };
      const url = /^subgraph gn: (\S+)$/m.exec(sb.banner)![1]!;
      cliRun(env, ['subgraph', 'add', 'gn', '--chain', 'ethereum', '--url', url]);
      await sb.control('stats', {});
      const r = cliRun(env, ['run', '--config', config, '--log-format', 'json'], `a backfill at --prune ${prune}`);
      const { pruned } = await sb.control<{ pruned: number }>('stats');
      const moved = r.stderr.split('\n').filter((l) => l.includes('"event":"pin-moved"')).length;
      const rows = /"event":"run-done".*?"rows":(\d+)/.exec(r.stderr)?.[1];
      if (prune === 'never') baseline = r.secs;
      cx.line({
        what: `backfill of a 46-entity subgraph, --prune ${prune}, a block every 100 ms${files ? '' : ', the hint unknown (no IPFS: the schema by introspection)'}`,
        rows: rows ? Number(rows) : '',
        secs: r.secs.toFixed(1),
        rate: '',
        ratio: baseline ? `${(r.secs / baseline).toFixed(2)}x the run that keeps every block` : '',
        note: `exit 0; ${moved} pins moved; ${pruned} queries refused at a pruned block`,
      });
    } finally {
      await sb.stop();
    }
  }
}
