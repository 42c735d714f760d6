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
import { cli, compareWithSandbox, sandboxEnv } from '../support/export-check.ts';

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
});
