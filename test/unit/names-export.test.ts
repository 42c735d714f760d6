/**
 * Each naming rule (`src/catalog/names.ts`) on a schema written here, exported as a user does: the sandbox serves it,
 * `subgraph add` takes it from the deployment's own files (no schema file), a plain run exports it, and every row is
 * compared with the sandbox's (`compareWithSandbox`) and every lake view with the warehouse, values included
 * (`lakeBehindWarehouse`), after the backfill and after new blocks and a reorganisation. Before the rule, each of these
 * failed its whole run (a column collision), lost an entity, or showed a partition's value in a field's place.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

const LONG = `${'VeryLong'.repeat(37)}Thing`;

/** The schemas, one per rule. */
const SCHEMAS: Record<string, string> = {
  // graph-node's own SQL names: digits apart, a run of capitals whole, an entity whose name starts with `_`.
  gn: `type ERC20Transfer @entity(immutable: true) { id: ID! timestamp: BigInt! value: BigInt! token0Price: BigDecimal }
    type _ActivityHelper @entity { id: ID! count: Int! }`,
  // Fields that meet pool-export's own columns, in a mutable entity and in an event (whose lake is partitioned by month).
  own: `type Stream @entity { id: ID! chainId: BigInt! chain: String! month: Int! time: BigInt! fileRowNumber: Int
      _exact: String filename: String }
    type Move @entity(immutable: true) { id: ID! timestamp: BigInt! month: String! chain: String! time: Int! }`,
  // A reference beside its `Id` field, exact texts beside fields of their names.
  pairs: `type Operator @entity { id: ID! name: String! }
    type Stream @entity { id: ID! operator: Operator! operatorId: String! amount: BigInt! amountText: String!
      price: BigDecimal! priceText: String }`,
  // Two entities of one plural table, root fields of one name (Stat's plural, Stats' single), a name past 63, and
  // two entities whose tables the rule before this one confused (NewTtL's table was NewTTL's earlier name).
  tables: `type Stat @entity { id: ID! n: BigInt! } type Stats @entity { id: ID! m: BigInt! }
    type ${LONG} @entity { id: ID! v: Int! }
    type NewTTL @entity { id: ID! a: BigInt! } type NewTtL @entity { id: ID! b: BigInt! }`,
};

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-names-'));
  const served = Object.entries(SCHEMAS).flatMap(([name, sdl]) => {
    writeFileSync(join(dir, `${name}.graphql`), sdl);
    return ['--subgraph', `${name}=${join(dir, `${name}.graphql`)}`];
  });
  sb = await startSandbox(['--scale', '2000', '--chains', '1', ...served]);
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** The columns of each table of a subgraph's schema in the warehouse. */
async function columnsOf(data: string, schema: string): Promise<Record<string, string[]>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows = await w.all(
      'SELECT table_name AS t, list(column_name ORDER BY column_index) AS c FROM duckdb_columns() WHERE schema_name = $1 GROUP BY ALL',
      [schema],
    );
    return Object.fromEntries(rows.map((r) => [String(r.t), (r.c as string[]).map(String)]));
  } finally {
    await w.close();
  }
}

/**
 * Adds the subgraph `name` from its deployment, runs it, and checks it exact against the sandbox, after the backfill
 * and after new blocks and a reorganisation; returns its data folder and what `add` printed.
 */
async function exportsExactly(name: string): Promise<{ data: string; added: string }> {
  const data = join(dir, name);
  // A folder of subgraphs alone, as a subgraph's user has it: no DODO key, so no DODO job.
  const env = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
  const url = new RegExp(`^subgraph ${name}: (\\S+)$`, 'm').exec(sb.banner)![1]!;
  const added = await cli(['subgraph', 'add', name, '--chain', 'ethereum', '--url', url], env);
  expect(added.code, added.stderr).toBe(0);
  loadConfig({ env });
  const datasets = DATASETS.filter((d) => d.schema === name).map((d) => d.name);
  const exact = async (when: string) => {
    const run = await cli(['run'], env);
    expect(run.code, `${when}: ${run.stdout}${run.stderr.slice(-2000)}`).toBe(0);
    const cmp = await compareWithSandbox(sb, data, [1], datasets);
    expect(cmp.mismatches, when).toEqual([]);
    expect(cmp.checked, when).toBe(datasets.length);
    expect(await lakeBehindWarehouse(data), when).toEqual([]);
  };
  await exact('the backfill');
  await sb.control('advance', { blocks: 40 });
  await sb.control('reorg', { depth: 30 });
  await exact('after new blocks and a reorganisation');
  return { data, added: added.stdout };
}

describe('the naming rule, exported', () => {
  it("gives graph-node's own names, digits apart and a run of capitals whole, and finds an entity named with _", async () => {
    const { data } = await exportsExactly('gn');
    const cols = await columnsOf(data, 'gn');
    expect(Object.keys(cols).sort()).toEqual(['activity_helpers', 'erc20_transfers']);
    expect(cols.erc20_transfers).toEqual(expect.arrayContaining(['token_0_price', 'token_0_price_text']));
  });

  it("keeps fields apart from pool-export's own columns, in the warehouse and in every lake view", async () => {
    const { data, added } = await exportsExactly('own');
    expect(added).toContain("Stream.chainId's column: chain_id_, not chain_id (chain_id is pool-export's own)");
    const cols = await columnsOf(data, 'own');
    expect(cols.streams).toEqual(
      expect.arrayContaining(['chain_id_', 'chain_', 'month_', 'time_', 'file_row_number_', 'exact', 'filename']),
    );
    expect(cols.moves).toEqual(expect.arrayContaining(['month_', 'chain_', 'time_', 'chain_id']));
  });

  it("keeps a reference's column apart from its Id field, and an exact text apart from a field of its name", async () => {
    const { data } = await exportsExactly('pairs');
    expect((await columnsOf(data, 'pairs')).streams).toEqual(
      expect.arrayContaining([
        'operator_id',
        'operator_id_',
        'amount_text',
        'amount_text_',
        'price_text',
        'price_text_',
      ]),
    );
  });

  it('gives two entities of one plural table a table each, and cuts a name past 63 characters', async () => {
    const { data, added } = await exportsExactly('tables');
    const tables = Object.keys(await columnsOf(data, 'tables')).sort();
    expect(tables).toHaveLength(5);
    expect(tables.filter((t) => t.startsWith('new_'))).toEqual(['new_tt_ls', 'new_ttls']);
    // Every table path of the lake is there after two runs (neither run took another's for an earlier name), and
    // verify, which checks the lake against the warehouse, finds it whole.
    const env = { ...sandboxEnv(sb, data), POOL_EXPORT_API_KEY: '' };
    const verified = await cli(['verify'], env);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // The history of both runs is in the lake, for both entities.
    for (const t of ['new_ttls', 'new_tt_ls']) {
      const runs = await cli(
        ['query', `SELECT count(DISTINCT _run_id) AS n FROM tables.${t}_history`, '--format', 'csv'],
        env,
      );
      expect(runs.stdout, `${t}: ${runs.stderr}`).toBe('n\n2\n');
    }
    expect(tables.filter((t) => t.startsWith('stats'))).toEqual(['stats', 'stats_']);
    expect(tables.find((t) => t.startsWith('very_long'))).toHaveLength(63);
    expect(added).toContain('Stats: stats_, not stats (another entity of the subgraph has that table)');
  });
});

describe('what graph-node cannot lay out', () => {
  it.each([
    [
      'two entities of one table',
      'type NewTTL @entity { id: ID! } type NewTtl @entity { id: ID! }',
      "type NewTTL and type NewTtl are both graph-node's table new_ttl",
    ],
    [
      'two of one table by case',
      'type ABC @entity { id: ID! } type Abc @entity { id: ID! }',
      "type ABC and type Abc are both graph-node's table abc",
    ],
    [
      'two fields of one column',
      'type P @entity { id: ID! ttl: Int Ttl: Int }',
      "P.ttl and P.Ttl are both graph-node's column ttl",
    ],
  ])('is refused at add in one line with exit code 2, nothing written: %s', async (_, sdl, message) => {
    const data = join(dir, `refused-${Math.random()}`);
    const file = join(dir, `refused-${Math.random()}.graphql`);
    writeFileSync(file, sdl);
    const url = /^subgraph gn: (\S+)$/m.exec(sb.banner)![1]!;
    const r = await cli(
      ['subgraph', 'add', 'x', '--chain', 'ethereum', '--url', url, '--schema', file],
      sandboxEnv(sb, data),
    );
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe(`pool-export: --schema ${file}: ${message}: graph-node cannot deploy the schema`);
    expect(existsSync(data)).toBe(false);
  });
});
