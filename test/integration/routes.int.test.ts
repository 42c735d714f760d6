/**
 * Several routes for one chain through the command line: two sandbox processes serving the same world, the first
 * lagging 500 blocks. `run` reads from the second and says why in its summary; `status` shows the route of each
 * dataset and the head and lag of each route; the export is exact against the route that served it; neither key
 * shows anywhere.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

const FLAGS = ['--scale', '300', '--history-days', '3', '--chains', '56'];
const B_KEY = 'c'.repeat(32);
let a: SandboxProcess;
let b: SandboxProcess;
let dir: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startSandbox([...FLAGS, '--lag-blocks', '500']), startSandbox(FLAGS, B_KEY)]);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-routes-'));
});
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop()]);
  rmSync(dir, { recursive: true, force: true });
});

/** A config file with the two routes of chain 56's exchange subgraph, `first` then `second` (with its own key). */
function routesConfig(name: string, first: SandboxProcess, second: SandboxProcess, more: Record<string, unknown> = {}) {
  const file = join(dir, `${name}.json`);
  const routes = {
    '56/dodoex': [
      { kind: 'self', baseUrl: first.url },
      { kind: 'self', baseUrl: second.url, apiKey: B_KEY },
    ],
  };
  writeFileSync(file, JSON.stringify({ routes, ...more }));
  return file;
}

const labelOf = (s: SandboxProcess) => `${s.url}/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=***`;

/** The route and failovers the ledger recorded for each task of a folder's last run. */
async function lastRun(data: string) {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    return await w.all(
      `SELECT dataset, status, route, failovers FROM _pool_export.run_tasks
       WHERE run_id = (SELECT arg_max(run_id, started_at) FROM _pool_export.runs) ORDER BY dataset`,
    );
  } finally {
    await w.close();
  }
}

describe('several routes from the command line', () => {
  it('run reads from the fresher route and says why; status shows each route and its lag', async () => {
    const data = join(dir, 'data');
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ routes: { '56/dodoex': [{ kind: 'self' }, { kind: 'self', baseUrl: b.url, apiKey: B_KEY }] } }),
    );
    const env = sandboxEnv(a, data);
    const datasets = 'dodoex.swaps,dodoex.pairs';
    const run = await cli(['run', '--config', config, '--chains', 'bsc', '--datasets', datasets], env);
    expect(run.code).toBe(0);
    // The run's verification reads the counters from the route that has indexed its block, not the one behind it.
    expect(run.stdout).toMatch(
      /verified against the upstream's counters: \d+ groups of the days this run touched, no gaps \(\d+ requests\)\n/,
    );
    const labelA = `${a.url}/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=***`;
    const labelB = `${b.url}/subgraph/graphql?chainId=56&schemaName=dodoex&apikey=***`;
    expect(run.stdout).toContain(
      `route on bsc/dodoex: read from ${labelB}; passed over ${labelA} behind (500 blocks behind the freshest route (maxLagBlocks 50))`,
    );
    expect((await compareWithSandbox(b, data, [56], datasets.split(','))).mismatches).toEqual([]);

    const status = await cli(['status', '--config', config, '--json'], env);
    const s = JSON.parse(status.stdout) as {
      datasets: { dataset: string; route: string | null; lagBlocks: number | null }[];
      routes: { chainId: number; schema: string; route: string; head: number; lagBlocks: number }[];
    };
    const info = (await b.control('info')) as { chains: { chainId: number; head: number }[] };
    const head = info.chains.find((c) => c.chainId === 56)!.head;
    expect(s.routes).toEqual([
      { chainId: 56, schema: 'dodoex', route: labelA, head: head - 500, lagBlocks: 500 },
      { chainId: 56, schema: 'dodoex', route: labelB, head, lagBlocks: 0 },
    ]);
    expect(s.datasets.map((d) => [d.dataset, d.route, d.lagBlocks])).toEqual([
      ['dodoex.pairs', labelB, 0],
      ['dodoex.swaps', labelB, 0],
    ]);
    const table = await cli(['status', '--config', config], env);
    // 80 columns: the address is cut, its start kept.
    expect(table.stdout).toContain(`  route: ${labelB.slice(0, 60)}`);
    expect(table.stdout).toContain(
      `routes:\n  bsc/dodoex route 1: head ${head - 500}, 500 blocks behind the freshest\n    ${labelA.slice(0, 60)}`,
    );
    expect(table.stdout).toContain(
      `  bsc/dodoex route 2: head ${head}, 0 blocks behind the freshest\n    ${labelB.slice(0, 60)}`,
    );
    expect(Math.max(...table.stdout.split('\n').map((l) => l.length))).toBeLessThanOrEqual(80);
    for (const out of [run.stdout, run.stderr, status.stdout, table.stdout]) {
      expect(out).not.toContain(B_KEY);
      expect(out).not.toContain(a.apiKey);
    }
  });

  it('a run whose first route is killed mid-backfill moves to the second and stays exact', async () => {
    const flags = ['--scale', '5000', '--history-days', '3', '--chains', '56'];
    const [first, second] = await Promise.all([startSandbox(flags), startSandbox(flags, B_KEY)]);
    try {
      const data = join(dir, 'killed');
      const config = routesConfig('killed', first, second, { pageSize: 200, maxAttempts: 2 });
      const running = cli(
        ['run', '--config', config, '--chains', 'bsc', '--datasets', 'dodoex.swaps'],
        sandboxEnv(first, data),
      );
      // The probe, then a dozen pages of the backfill's shards: then the first route dies.
      await waitForRequests(first, 12);
      first.child.kill('SIGKILL');
      const run = await running;
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(
        `failover: dodoex.swaps on bsc moved from ${labelOf(first)} to ${labelOf(second)} at block`,
      );
      expect(run.stderr).toContain('"event":"failover"');
      expect((await compareWithSandbox(second, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
      const [task] = await lastRun(data);
      expect(task!.route).toBe(labelOf(second));
      expect((JSON.parse(String(task!.failovers)) as unknown[]).length).toBeGreaterThan(0);
      expect(run.stdout + run.stderr).not.toContain(B_KEY);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  it('a first route with indexing errors is passed over, and taken again by the next run once it recovers', async () => {
    await a.control('faults', { lagBlocks: 0 });
    await a.control('garbage', { mode: 'indexing-errors' });
    const data = join(dir, 'recovers');
    const config = routesConfig('recovers', a, b);
    const env = sandboxEnv(a, data);
    const args = ['run', '--config', config, '--chains', 'bsc', '--datasets', 'dodoex.swaps,dodoex.pairs'];
    const one = await cli(args, env);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`route on bsc/dodoex: read from ${labelOf(b)}; passed over ${labelOf(a)} unhealthy`);
    expect((await lastRun(data)).map((t) => t.route)).toEqual([labelOf(b), labelOf(b)]);
    await a.control('garbage', {});
    await a.control('advance', { blocks: 100 });
    await b.control('advance', { blocks: 100 });
    const two = await cli(args, env);
    expect(two.code).toBe(0);
    expect(two.stdout).not.toContain('route on bsc/dodoex');
    expect((await lastRun(data)).map((t) => [t.dataset, t.status, t.route])).toEqual([
      ['dodoex.pairs', 'ok', labelOf(a)],
      ['dodoex.swaps', 'ok', labelOf(a)],
    ]);
    expect((await compareWithSandbox(a, data, [56], ['dodoex.swaps', 'dodoex.pairs'])).mismatches).toEqual([]);
  });
});
