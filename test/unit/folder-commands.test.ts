/**
 * Every command right in a folder of subgraphs, driven as a new user does: the command line against the sandbox, a
 * folder of one subgraph of the test schema, no DODO key. `reset` takes any dataset of the folder (and says which one
 * a typo meant), a value that is not one of an option's choices is one line with the one it meant, and `query --format
 * csv` writes a value's terminal escapes inert to a terminal and byte for byte to a pipe.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN, type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { inTerminal } from '../support/terminal.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));

let sb: SandboxProcess;
let dir: string;
let env: Record<string, string>;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '2000', '--chains', '1', '--subgraph', `pools=${FIXTURE}`]);
  dir = mkdtempSync(join(tmpdir(), 'pe-folder-cmds-'));
  env = { ...sandboxEnv(sb, join(dir, 'data')), POOL_EXPORT_API_KEY: '' };
  const url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
  expect((await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url], env)).code).toBe(0);
  const run = await cli(['run'], env);
  expect(run.code, run.stderr.slice(-2000)).toBe(0);
}, 120_000);
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe('in a folder of subgraphs', () => {
  it('reset empties any dataset of the folder, and names the one a typo meant', async () => {
    const typo = await cli(['reset', 'pools.swap', '--yes'], env);
    expect(typo.code).toBe(2);
    expect(typo.stderr.trim()).toMatch(/^pool-export: unknown dataset "pools\.swap"; did you mean pools\.swaps\?/);
    const shown = await cli(['reset', 'pools.swaps'], env);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(/^ {2}pools\.swaps on ethereum: \d[\d,]* rows, its checkpoint, \d+ lake files/m);
    const done = await cli(['reset', 'pools.swaps', '--yes'], env);
    expect(done.code, done.stderr).toBe(0);
    // The next run reads it whole again.
    const run = await cli(['run', '--log-format', 'json'], env);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      /"event":"task-done","dataset":"pools\.swaps","chain":"ethereum","chainId":1,"rows":[1-9]/,
    );
  });

  it('verify and verify --values speak only of the chain the deployment covers, and nothing of DODO', async () => {
    for (const args of [['verify'], ['verify', '--values']]) {
      const r = await cli(args, env);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stderr).toBe('');
      const lines = r.stdout.split('\n').filter((l) => /^\w+ +pools\./.test(l));
      expect(lines.length).toBeGreaterThan(0);
      expect(lines.filter((l) => !l.startsWith('ethereum '))).toEqual([]);
      expect(r.stdout).not.toMatch(/not checked|bsc|polygon|arbitrum/);
    }
  });

  it('a run stopped on request is no failure: run-done counts its stopped tasks apart, status shows no error, and the next run clears it', async () => {
    await sb.control('advance', { blocks: 50 });
    await sb.control('faults', { latencyMs: 400 });
    let stoppedRun: Awaited<ReturnType<typeof cli>>;
    try {
      stoppedRun = await cli(['run', '--log-format', 'json'], env, {
        termWhen: (stderr) => stderr.includes('"event":"task-done"'),
      });
    } finally {
      await sb.control('faults', { latencyMs: 0 });
    }
    const done = stoppedRun.stderr.split('\n').find((l) => l.includes('"event":"run-done"'))!;
    expect(JSON.parse(done)).toMatchObject({ failed: 0, stopped: true, stoppedTasks: expect.any(Number) });
    expect((JSON.parse(done) as { stoppedTasks: number }).stoppedTasks).toBeGreaterThan(0);
    const status = JSON.parse((await cli(['status', '--offline', '--json'], env)).stdout) as {
      datasets: { stopped: boolean; lastError: string | null }[];
    };
    expect(status.datasets.filter((d) => d.stopped).length).toBeGreaterThan(0);
    expect(status.datasets.filter((d) => d.lastError !== null)).toEqual([]);
    const text = await cli(['status', '--offline'], env);
    expect(text.stdout).not.toContain('last error');
    expect((await cli(['run'], env)).code).toBe(0);
    const after = JSON.parse((await cli(['status', '--offline', '--json'], env)).stdout) as typeof status;
    expect(after.datasets.filter((d) => d.stopped || d.lastError !== null)).toEqual([]);
  });

  it("add names an entity of the schema its deployment does not serve, once, and no run reads it; refuses a schema that is not the deployment's", async () => {
    const url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
    const extra = join(dir, 'extra.graphql');
    writeFileSync(extra, `${readFileSync(FIXTURE, 'utf8')}\ntype Extra @entity { id: ID! n: Int! }\n`);
    const data = join(dir, 'extra');
    const keyless = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
    const added = await cli(
      ['subgraph', 'add', 'ext', '--chain', 'ethereum', '--url', url, '--schema', extra],
      keyless,
    );
    expect(added.code, added.stderr).toBe(0);
    expect(added.stdout).toMatch(
      /^ {2}ethereum: not served there, so not read there: Extra \(\S+ has no collection of it; pool-export subgraph refresh ext reads it once it has\)$/m,
    );
    const run = await cli(['run', '--log-format', 'json'], keyless);
    expect(run.code, run.stderr.slice(-1000)).toBe(0);
    expect(run.stderr).not.toMatch(/unavailable|ext\.extras/);
    // A schema file of another subgraph: the deployment serves none of it.
    const other = join(dir, 'other.graphql');
    writeFileSync(
      other,
      'type Vault @entity { id: ID! } type Deposit @entity(immutable: true) { id: ID! timestamp: BigInt! }',
    );
    const wrong = await cli(
      ['subgraph', 'add', 'wrong', '--chain', 'ethereum', '--url', url, '--schema', other],
      keyless,
    );
    expect(wrong.code).toBe(2);
    expect(wrong.stderr.trim()).toBe(
      `pool-export: --schema ${other} is not the schema of ${url}: it serves none of its entities (Vault, Deposit); leave out --schema to take the deployment's own`,
    );
  });

  it('verify --values names a changed field of every kind alone: a scalar, a number, a list of scalars, a reference, a list of references', async () => {
    const w = await Warehouse.open(join(dir, 'data'));
    const edits: [string, string, string][] = [];
    try {
      const ids = async (table: string, where = 'true') =>
        (await w.all(`SELECT CAST(id AS VARCHAR) AS id FROM pools.${table} WHERE ${where} ORDER BY id LIMIT 5`)).map(
          (r) => String(r.id),
        );
      const [t1, t2, t3] = await ids('tokens', 'tags IS NOT NULL');
      const [p1, p2] = await ids('pools');
      // One field of each kind changed alone, each in a row of its own.
      for (const [table, id, set, field] of [
        ['tokens', t1, "symbol = symbol || 'x'", 'symbol'],
        ['tokens', t2, "tags = list_append(tags, 'x')", 'tags'],
        ['tokens', t3, "whitelist_pools = list_append(whitelist_pools, 'x')", 'whitelistPools'],
        ['pools', p1, "factory_id = 'x'", 'factory'],
        ['pools', p2, "liquidity_text = '12345', liquidity = 12345", 'liquidity'],
      ] as const) {
        await w.exec(`UPDATE pools.${table} SET ${set} WHERE CAST(id AS VARCHAR) = $1`, [id!]);
        edits.push([`pools.${table}`, id!, field]);
      }
    } finally {
      await w.close();
    }
    const r = await cli(['verify', '--values', '--format', 'json'], env);
    const report = JSON.parse(r.stdout) as {
      mismatches: { dataset: string; identity: string; key: string | null; detail?: string }[];
    };
    // The lake, left as it was, differs from the warehouse too: its check names the days, not the fields.
    const named = report.mismatches.filter((m) => m.identity === 'row values').map((m) => [m.dataset, m.key, m.detail]);
    expect(named.sort()).toEqual(edits.map(([d, id, f]) => [d, id, `values of ${f}`]).sort());
    expect((await cli(['verify', '--values', '--repair'], env)).code).toBe(0);
  });

  it('names in one line a value that is not one of its choices, and the one it meant', async () => {
    const r = await cli(['subgraph', 'lst'], env);
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'pool-export: action "lst" is not one of add, list, remove, refresh; did you mean list?\nRun `pool-export --help` for usage.\n',
    );
  });

  it('query --format csv: a terminal escape is shown inert on a terminal, and written as it is to a pipe', async () => {
    // A value with an escape that would turn a terminal's text red (upstream strings can hold them: the sandbox's do).
    const sql = "SELECT id, chr(27) || '[31mred' AS name FROM pools.tokens LIMIT 1";
    const piped = await cli(['query', sql, '--format', 'csv'], env);
    expect(piped.code, piped.stderr).toBe(0);
    expect(piped.stdout).toContain('\u001b[31m');
    const term = await inTerminal([process.execPath, BIN, 'query', sql, '--format', 'csv'], {
      env: { ...process.env, ...env },
    });
    expect(term.code).toBe(0);
    expect(term.raw).not.toContain('\u001b[31m');
    expect(term.raw).toContain('\\x1b[31mred');
  });
});
