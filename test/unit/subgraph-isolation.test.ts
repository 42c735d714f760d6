/**
 * One subgraph or dataset that fails never blocks the others, and no state of a data folder stops `status`, `datasets`,
 * `subgraph list` or `subgraph remove`: a subgraph this version refuses (a schema graph-node cannot lay out, added by an
 * earlier version), an entry that is no subgraph, a list that is not JSON, and a table DuckDB will not ready. Each is
 * driven as a user does, the command line against the sandbox, with no DODO key.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { EXIT_STALE } from '../../src/errors.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
/** A schema graph-node cannot lay out: two types of one table. An earlier version added such a subgraph. */
const REFUSED = 'type NewTTL @entity { id: ID! a: BigInt! } type NewTtl @entity { id: ID! b: BigInt! }';

let sb: SandboxProcess;
let dir: string;
let url: string;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '2000', '--chains', '1', '--subgraph', `pools=${FIXTURE}`]);
  url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
  dir = mkdtempSync(join(tmpdir(), 'pe-isolation-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** A data folder of subgraphs alone (no DODO key) with `pools` added. */
async function folder(name: string): Promise<{ data: string; env: Record<string, string> }> {
  const data = join(dir, name);
  const env = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
  const added = await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url], env);
  expect(added.code, added.stderr).toBe(0);
  return { data, env };
}

/** Appends entries to the data folder's list as they are, the way an earlier version or a hand would leave them. */
function appendEntries(data: string, entries: unknown[]): void {
  const file = join(data, 'subgraphs.json');
  const list = JSON.parse(readFileSync(file, 'utf8')) as { subgraphs: unknown[] };
  list.subgraphs.push(...entries);
  writeFileSync(file, JSON.stringify(list));
}

describe('a subgraph that fails', () => {
  it('is set aside: the others are exported exactly, the run exits 1 naming it, and every command runs', async () => {
    const { data, env } = await folder('aside');
    appendEntries(data, [
      { name: 'ttl', deployments: [{ chainId: 1, url }], schema: REFUSED },
      { name: 'broken', schema: 42 },
      { name: 'edited', deployments: [{ chainId: 1, url }], schema: 'type A @entity { id: ID! }', names: { A: 7 } },
    ]);
    const run = await cli(['run'], env);
    expect(run.code, run.stderr.slice(-2000)).toBe(1);
    expect(run.stdout).toMatch(
      /FAILED subgraph ttl was set aside, not exported: subgraph ttl: type NewTTL and type NewTtl are both graph-node's table new_ttl/,
    );
    expect(run.stdout).toMatch(/FAILED subgraph broken was set aside, not exported: .*broken is not a subgraph/);
    expect(run.stdout).toMatch(/FAILED subgraph edited was set aside, not exported: .*edited is not a subgraph/);
    loadConfig({ env });
    const pools = DATASETS.filter((d) => d.schema === 'pools').map((d) => d.name);
    expect((await compareWithSandbox(sb, data, [1], pools)).mismatches).toEqual([]);
    // `--subgraphs pools` asks nothing of the others: it exits 0.
    expect((await cli(['run', '--subgraphs', 'pools'], env)).code).toBe(0);
    const status = await cli(['status', '--offline'], env);
    expect(status.code).toBe(EXIT_STALE);
    expect(status.stdout).toContain('pools.swaps');
    expect(status.stdout).toMatch(/subgraph ttl is set aside, not exported/);
    const datasets = await cli(['datasets'], env);
    expect(datasets.code).toBe(0);
    expect(datasets.stdout).toContain('pools.swaps');
    expect(datasets.stdout).toMatch(/subgraph broken is set aside, its datasets not listed/);
    const listed = await cli(['subgraph', 'list'], env);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(/^ttl: set aside, not exported: /m);
    expect(listed.stdout).toMatch(/^pools: \d+ entities/m);
    for (const name of ['ttl', 'broken', 'edited']) expect((await cli(['subgraph', 'remove', name], env)).code).toBe(0);
    const after = await cli(['run'], env);
    expect(after.code, after.stdout + after.stderr.slice(-1000)).toBe(0);
  });

  it('leaves every command running when its list is not JSON, and is never overwritten by an add', async () => {
    const { data, env } = await folder('torn');
    expect((await cli(['run'], env)).code).toBe(0);
    writeFileSync(join(data, 'subgraphs.json'), '{"version": 1, "subgraphs": [');
    const status = await cli(['status', '--offline'], env);
    expect(status.code).toBe(EXIT_STALE);
    const said = status.stdout.replace(/\n +/g, ' ');
    expect(said).toMatch(
      /the data folder's list of subgraphs is set aside, not exported: \S+subgraphs\.json is not valid JSON/,
    );
    // The data of the subgraphs it named is there still, and says why it is not shown.
    expect(said).toMatch(/not shown: data of pools, which this folder no longer exports/);
    for (const args of [['datasets'], ['subgraph', 'list']]) expect((await cli(args, env)).code).toBe(0);
    const run = await cli(['run'], env);
    expect(run.code).toBe(1);
    expect(run.stdout.replace(/\n +/g, ' ')).toMatch(/FAILED the data folder's list of subgraphs was set aside/);
    const add = await cli(['subgraph', 'add', 'other', '--chain', 'ethereum', '--url', url], env);
    expect(add.code).toBe(2);
    expect(add.stderr).toMatch(
      /subgraphs\.json is not valid JSON .*: restore it, or remove it and add the subgraphs again/,
    );
    expect(readFileSync(join(data, 'subgraphs.json'), 'utf8')).toBe('{"version": 1, "subgraphs": [');
  });
});

describe('a dataset whose table DuckDB will not ready', () => {
  it("fails alone: the others commit, and the run exits 1 naming it and DuckDB's reason", async () => {
    const { data, env } = await folder('view');
    // A view of the table's name (a user's own, say) where the table would be: DuckDB alters no view as a table.
    const w = await Warehouse.open(data);
    try {
      await w.exec('CREATE SCHEMA pools');
      await w.exec("CREATE VIEW pools.tokens AS SELECT 'x' AS id");
    } finally {
      await w.close();
    }
    const run = await cli(['run'], env);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(
      /pools\.tokens on ethereum: its table could not be readied, so it was not read \(the run's other datasets were\): Catalog Error: Can only modify view with ALTER VIEW/,
    );
    loadConfig({ env });
    const others = DATASETS.filter((d) => d.schema === 'pools' && d.name !== 'pools.tokens').map((d) => d.name);
    const cmp = await compareWithSandbox(sb, data, [1], others);
    expect(cmp.mismatches).toEqual([]);
    expect(cmp.checked).toBe(others.length);
  });
});
