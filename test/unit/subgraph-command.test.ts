/**
 * `pool-export subgraph add|list|remove` as a user runs them: the command line as a child process against a sandbox
 * that serves the test schema. Adding by introspection and running takes two commands, and the export is exact
 * (`compareWithSandbox`); bad input is one line and exit code 2, and writes nothing.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));

let sb: SandboxProcess;
let dir: string;
let urls: string[];

beforeAll(async () => {
  sb = await startSandbox(['--scale', '2000', '--chains', '1,56', '--subgraph', `pools=${FIXTURE}`]);
  urls = [...sb.banner.matchAll(/^subgraph pools: (\S+)$/gm)].map((m) => m[1]!);
  dir = mkdtempSync(join(tmpdir(), 'pe-subgraph-cmd-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A data folder's environment where no IPFS endpoint answers (a closed port): a subgraph is added by introspection. */
const introspected = (env: Record<string, string>): Record<string, string> => ({
  ...env,
  POOL_EXPORT_IPFS_URL: 'http://127.0.0.1:65534/ipfs/',
});

const deployments = () => ['--chain', 'ethereum', '--url', urls[0]!, '--chain', 'bsc', '--url', urls[1]!];

describe('pool-export subgraph', () => {
  it('adds a subgraph by introspection, runs it exactly with one more command, lists it and removes it', async () => {
    const data = join(dir, 'a');
    const env = introspected(sandboxEnv(sb, data));
    const added = await cli(['subgraph', 'add', 'pools', ...deployments()], env);
    // No IPFS endpoint answers: introspection, and one line saying what it cannot see.
    expect(added.stderr).toMatch(
      /^schema by introspection: the IPFS endpoint http:\/\/127\.0\.0\.1:65534\/ipfs could not give Qm\w+ \(connect ECONNREFUSED 127\.0\.0\.1:65534\); introspection does not show which entities are immutable, timeseries or aggregations \(--ipfs URL or --schema FILE gives them\)\n$/,
    );
    expect(added.code).toBe(0);
    expect(added.stdout).toContain(
      'added subgraph pools: 7 entities (Factory, Token, Pool, Swap, Mint, PriceTick, Account)',
    );
    expect(added.stdout).toContain(`  bsc: ${urls[1]} (block `);
    const run = await cli(['run', '--subgraphs', 'pools', '--log-format', 'json'], env);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    // The test process reads the same data folder's list, so its catalog holds the subgraph's datasets too.
    loadConfig({ env });
    const names = DATASETS.filter((d) => d.schema === 'pools').map((d) => d.name);
    expect(names).toHaveLength(7);
    const cmp = await compareWithSandbox(sb, data, [1, 56], names);
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.checked).toBe(14);
    // Only the subgraph's tasks ran: no DODO dataset was read.
    expect(run.stderr).not.toMatch(/"dataset":"(dodoex|token|mine|list)\./);
    // verify needs no API key for a subgraph: it checks its row ids on its chains, and its lake.
    const { POOL_EXPORT_API_KEY: _, ...keyless } = env;
    const verified = await cli(['verify'], { ...keyless, POOL_EXPORT_API_KEY: '' });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // A folder of subgraphs alone: nothing is said of DODO, whose counters are none of its business.
    expect(verified.stderr).toBe('');
    expect(verified.stdout.match(/^(ethereum|bsc) +pools\.\w+ +row ids +\d+ +all +1 +0$/gm)).toHaveLength(14);
    const listed = await cli(['subgraph', 'list'], env);
    expect(listed.stdout).toBe(
      `pools: 7 entities, 7 datasets, from the data folder\n  ethereum: ${urls[0]}\n  bsc: ${urls[1]}\n`,
    );
    const count = 'SELECT count(*) AS n FROM pools.swaps WHERE chain_id = 1';
    const before = (await cli(['query', count, '--format', 'csv'], env)).stdout;
    const removed = await cli(['subgraph', 'remove', 'pools'], env);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain('pool-export subgraph remove pools --drop deletes them');
    expect((await cli(['subgraph', 'list'], env)).stdout).toMatch(/^no subgraph is added/);
    // It does what it says: its data stays, and query reads it as it did; status runs, and says it is not exported.
    expect(existsSync(join(data, 'lake', 'pools', 'swaps'))).toBe(true);
    const after = await cli(['query', count, '--format', 'csv'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(after.stdout).toBe(before);
    const status = await cli(['status', '--offline'], env);
    expect(status.stderr).toBe('');
    expect(status.stdout.replace(/\n +/g, ' ')).toMatch(
      /not shown: data of pools, which this folder no longer exports/,
    );
    // --drop deletes it: the warehouse's schema, the lake's folder; query no longer finds it.
    const dropped = await cli(['subgraph', 'remove', 'pools', '--drop'], env);
    expect(dropped.code, dropped.stderr).toBe(0);
    expect(existsSync(join(data, 'lake', 'pools'))).toBe(false);
    expect((await cli(['query', count], env)).stderr).toMatch(/pools/);
    expect((await cli(['subgraph', 'remove', 'dodoex', '--drop'], env)).code).toBe(2);
  });

  it('a folder of subgraphs alone needs no key: a plain run, status, jobs and verify take its subgraphs, exactly', async () => {
    const data = join(dir, 'keyless');
    const env = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
    expect((await cli(['subgraph', 'add', 'own', ...deployments()], env)).code).toBe(0);
    const jobs = await cli(['jobs'], env);
    expect(jobs.stdout.split('\n')[0]).toMatch(/^own +7 \* \* \* \* +every entity of the subgraph own \(9 datasets\)$/);
    expect(jobs.stdout).toContain(
      "DODO's jobs (liquidity, events, state, token-mining) are not this folder's: no DODO API key is set, and this folder holds no DODO data",
    );
    const run = await cli(['run', '--log-format', 'json'], env);
    expect(run.code, run.stdout + run.stderr.slice(-2000)).toBe(0);
    expect(run.stderr).not.toMatch(/"dataset":"(dodoex|token|mine|list)\./);
    expect(run.stdout).toContain(
      "not verified: the upstream keeps no counters of these datasets; `pool-export verify` compares their row ids with the deployment's",
    );
    loadConfig({ env });
    const names = DATASETS.filter((d) => d.schema === 'own').map((d) => d.name);
    expect((await compareWithSandbox(sb, data, [1, 56], names, 'pools')).mismatches).toEqual([]);
    // status reads each deployment's head with no key: lag in blocks from it, exit 0.
    const status = await cli(['status', '--json'], env);
    expect(status.code, status.stdout + status.stderr).toBe(0);
    const entries = JSON.parse(status.stdout).datasets as { upstreamBlock: number | null; block: number | null }[];
    expect(entries).toHaveLength(18);
    for (const e of entries) expect(e.upstreamBlock).toBe(e.block);
    expect((await cli(['verify'], env)).code).toBe(0);
    // The dashboard draws the subgraph's rows (its page is checked in the browser tier).
    const dash = await cli(['dashboard', '--out', join(data, 'dashboard.html')], env);
    expect(dash.code, dash.stderr).toBe(0);
    expect(dash.stdout).toMatch(/ KiB; open it in a browser, no network needed\)\n$/);
    expect(readFileSync(join(data, 'dashboard.html'), 'utf8')).toContain('<section data-part="subgraph-datasets"');
    // A run stopped by a signal leaves the file as it ran ('running', its tasks' entries so far, here none); once its
    // process is gone, status reads the warehouse instead of saying nothing was exported.
    const file = join(data, 'status.json');
    const written = JSON.parse(readFileSync(file, 'utf8'));
    const dead = Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout);
    writeFileSync(
      file,
      JSON.stringify({ ...written, run: { ...written.run, pid: dead, state: 'running' }, entries: [] }),
    );
    const after = await cli(['status', '--json'], env);
    expect(after.code, after.stderr).toBe(0);
    expect(JSON.parse(after.stdout).datasets).toHaveLength(18);
    // schedule --every reads the deployments' heads with no key: idle ticks while they stand still (no run, where
    // before every tick ran), one run once they move, and the export exact after it.
    const count = (text: string, event: string) => text.split(`"event":"${event}"`).length - 1;
    let advanced = false;
    const sched = await cli(['schedule', '--every', '1s', '--log-level', 'debug', '--log-format', 'json'], env, {
      termWhen: (stderr) => {
        if (!advanced && count(stderr, 'idle') >= 3) {
          advanced = true;
          void sb.control('advance', { blocks: 5 });
        }
        return advanced && count(stderr, 'run-done') >= 1;
      },
      termAfterMs: 40_000,
    });
    expect(sched.code, sched.stderr.slice(-2000)).toBe(0);
    expect(count(sched.stderr, 'run-start')).toBe(1);
    expect(sched.stderr).not.toMatch(/"dataset":"(dodoex|token|mine|list)\./);
    expect((await compareWithSandbox(sb, data, [1, 56], names, 'pools')).mismatches).toEqual([]);
    // DODO's reports say they have nothing to read here, and how to read the folder's tables.
    const listed = await cli(['report', '--list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      /^these reports read DODO's datasets, and this folder holds none \(its data: subgraph own\)/,
    );
    const report = await cli(['report', 'top_pools'], env);
    expect(report.code).toBe(2);
    expect(report.stderr).toMatch(
      /^pool-export: report top_pools: these reports read DODO's datasets.*pool-export query/,
    );
    // With a DODO key the folder takes DODO's jobs too.
    expect((await cli(['jobs'], { ...env, POOL_EXPORT_API_KEY: sb.apiKey })).stdout).toMatch(/^liquidity /);
  }, 120_000);

  it('keeps derived fields out and stored lists of references in, as introspection tells them apart', async () => {
    const data = join(dir, 'b');
    expect((await cli(['subgraph', 'add', 'pools', ...deployments()], introspected(sandboxEnv(sb, data)))).code).toBe(
      0,
    );
    const schema = JSON.parse(readFileSync(join(data, 'subgraphs.json'), 'utf8')).subgraphs[0].schema as string;
    expect(schema).toMatch(/^ {2}whitelistPools: \[Pool!\]!$/m);
    expect(schema).toMatch(/^ {2}swapsIn: \[Swap!\]! @derivedFrom\(field: "\?"\)$/m);
    expect(schema).toMatch(/^ {2}swaps: \[Swap!\]! @derivedFrom\(field: "\?"\)$/m);
    expect(schema).toMatch(/^type Swap implements Event @entity \{$/m);
    expect(schema).toMatch(/^enum PoolKind \{\n {2}CONSTANT_PRODUCT\n {2}CONCENTRATED\n {2}STABLE\n\}$/m);
  });

  const bad = (name: string, sdl: string) => {
    const p = join(dir, name);
    writeFileSync(p, sdl);
    return p;
  };
  it.each([
    [
      'a URL that is not a graph-node endpoint',
      () => ['--chain', 'ethereum', '--url', `${sb.url}/not/graph-node`],
      /^pool-export: http:\/\/127\.0\.0\.1:\d+\/not\/graph-node is not a graph-node endpoint \(HTTP 404: \{"message":"Not found"\}\): give the URL/,
    ],
    [
      'an entity that does not exist',
      () => [...deployments(), '--entities', 'Swap,Nope'],
      /^pool-export: subgraph pools has no entity Nope; its entities: Factory, Token, Pool, Swap, Mint, PriceTick, Account, TokenPriceStat$/,
    ],
    [
      'a schema file that does not parse',
      () => [...deployments(), '--schema', bad('broken.graphql', 'type Pool @entity {')],
      /^pool-export: --schema \S+broken\.graphql: the schema of pools does not parse at line 1, column 20: Syntax Error: Expected Name, found <EOF>\.$/,
    ],
    [
      'an unknown scalar',
      () => [...deployments(), '--schema', bad('money.graphql', 'type Pool @entity { id: ID! price: Money! }')],
      /field Pool\.price of pools has type Money, which is neither a scalar of graph-node/,
    ],
    ['a --chain without its --url', () => ['--chain', 'ethereum'], /takes one --url per --chain/],
    [
      'a --type that is not Entity.field=TYPE',
      () => [...deployments(), '--type', 'Pool.liquidity'],
      /^pool-export: --type "Pool.liquidity" must be Entity.field=TYPE, e.g. --type Pool.sqrtPrice=DOUBLE$/,
    ],
    [
      'a --type its field cannot take',
      () => [...deployments(), '--type', 'Pool.liquidity=INTEGER'],
      /^pool-export: subgraph pools: types\["Pool.liquidity"\]: "INTEGER" is not a type of a BigInt field; give one of DECIMAL\(38,0\), DOUBLE, BIGINT, VARCHAR, TIMESTAMPTZ, TIMESTAMPTZ\(S\), TIMESTAMPTZ\(MS\)$/,
    ],
    ['a name that is not one', () => deployments(), /starts with a lowercase letter .*e\.g\. uniswap_v2/, 'Uniswap-V2'],
  ])('refuses %s in one line with exit code 2, and writes nothing', async (_, args, message, name = 'pools') => {
    const data = join(dir, `bad-${name}-${Math.random()}`);
    const r = await cli(['subgraph', 'add', name, ...args()], sandboxEnv(sb, data));
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr.trim()).toMatch(message);
    expect(existsSync(join(data, 'subgraphs.json'))).toBe(false);
  });

  it('refuses to add a name twice', async () => {
    const data = join(dir, 'c');
    const env = sandboxEnv(sb, data);
    expect((await cli(['subgraph', 'add', 'pools', ...deployments()], env)).code).toBe(0);
    const again = await cli(['subgraph', 'add', 'pools', ...deployments()], env);
    expect(again.code).toBe(2);
    expect(again.stderr.trim()).toBe(
      'pool-export: subgraph pools is already added: pool-export subgraph remove pools, then add it again',
    );
  });
});
