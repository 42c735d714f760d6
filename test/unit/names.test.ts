/**
 * The naming rule of a subgraph's tables and columns (`src/catalog/names.ts`, docs/any-subgraph.md "Names"), rule by rule,
 * on schemas written here. graph-node's own SQL names are checked against the output of the crate graph-node calls
 * (Inflector 0.11.4, compiled and run on the names of test/fixtures/graph-node-snake.tsv); the other names against the
 * rule as the guide writes it. The rows of these schemas, exported through the sandbox, are checked in
 * names-export.test.ts.
 */
import { readFileSync } from 'node:fs';
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import { decideNames, fitName, layoutConflicts, pluralTable, sqlName } from '../../src/catalog/names.ts';
import { checkSubgraphName, SQL_RESERVED } from '../../src/catalog/subgraphs.ts';
import { UsageError } from '../../src/errors.ts';
import { parseSchemaModel } from '../../src/schemas/entity-model.ts';

const model = (sdl: string) => parseSchemaModel('t', sdl);
const names = (sdl: string) => decideNames(model(sdl)).names;

describe("graph-node's SQL names", () => {
  const pairs = readFileSync(new URL('../fixtures/graph-node-snake.tsv', import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => l && !l.startsWith('#'))
    .map((l) => l.split('\t') as [string, string]);

  it('are those of the crate graph-node calls, on every name of the fixture', () => {
    expect(pairs.length).toBeGreaterThan(300);
    expect(pairs.filter(([name, sql]) => sqlName(name) !== sql)).toEqual([]);
  });

  it('give tables their plural and keep digits and runs of capitals as graph-node does', () => {
    expect(pluralTable('ERC20Transfer')).toBe('erc20_transfers');
    expect(pluralTable('GMXV2LeverageTradingPosition')).toBe('gmxv2_leverage_trading_positions');
    expect(pluralTable('_ActivityHelper')).toBe('activity_helpers');
    expect(pluralTable('Bounty')).toBe('bounties');
    expect(pluralTable('NewTTL')).toBe('new_ttls');
    expect(pluralTable('MaintainerEarnings')).toBe('maintainer_earnings');
    expect(names('type Pool @entity { id: ID! token0Price: BigDecimal! }').Pool!.columns.token0Price).toBe(
      'token_0_price',
    );
  });
});

describe('names that meet', () => {
  it("pool-export's own columns get a _ appended: the chain, the lake's partitions and time, DuckDB's row number", () => {
    const n = names(`type S @entity { id: ID! chainId: BigInt! chain: String! month: Int! time: BigInt!
      fileRowNumber: Int _exact: String filename: String }`).S!;
    expect(n.columns).toEqual({
      id: 'id',
      chainId: 'chain_id_',
      chain: 'chain_',
      month: 'month_',
      time: 'time_',
      fileRowNumber: 'file_row_number_',
      // graph-node's own name drops the leading _, so it never meets pool-export's _-names.
      _exact: 'exact',
      filename: 'filename',
    });
    expect(n.texts).toEqual({ chainId: 'chain_id__text', time: 'time__text' });
  });

  it("a reference's _id column yields to a field of that name, and an exact text to a field of its name", () => {
    const { changes, names: n } = decideNames(
      model(`type Operator @entity { id: ID! }
        type S @entity { id: ID! operator: Operator! operatorId: String! amount: BigInt! amountText: String!
          price: BigDecimal! priceText: String }`),
    );
    expect(n.S!.columns).toMatchObject({
      operator: 'operator_id_',
      operatorId: 'operator_id',
      amountText: 'amount_text',
    });
    expect(n.S!.texts).toEqual({ amount: 'amount_text_', price: 'price_text_' });
    expect(changes.map((c) => `${c.what}: ${c.given} (${c.why})`)).toEqual([
      "S.operator's column: operator_id_ (operator_id is S.operatorId's column)",
      "the exact text of S.amount: amount_text_ (amount_text is S.amountText's column)",
      "the exact text of S.price: price_text_ (price_text is S.priceText's column)",
    ]);
  });

  it('two entities of one plural table: the second gets a _, and each table path of the lake stays its own', () => {
    const n = names('type Stat @entity { id: ID! } type Stats @entity { id: ID! } type Earning @entity { id: ID! }');
    expect([n.Stat!.table, n.Stats!.table, n.Earning!.table]).toEqual(['stats', 'stats_', 'earnings']);
  });

  it('a table name past 63 characters is cut, with a hash of the whole name, so that names sharing 63 stay apart', () => {
    const [a, b] = [`${'Long'.repeat(20)}A`, `${'Long'.repeat(20)}B`];
    const n = names(`type ${a} @entity { id: ID! } type ${b} @entity { id: ID! }`);
    expect(n[a]!.table).toHaveLength(63);
    expect(n[a]!.table).not.toBe(n[b]!.table);
    expect(n[a]!.table.startsWith(pluralTable(a).slice(0, 54))).toBe(true);
    expect(fitName('short', 63)).toBe('short');
    // An aggregation's stem leaves room for its interval: every table stays within 63.
    const agg = names(`type T @entity(timeseries: true) { id: Int8! timestamp: Timestamp! v: BigInt! }
      type ${a} @aggregation(intervals: ["hour", "day"], source: "T") { id: Int8! timestamp: Timestamp! s: BigInt! @aggregate(fn: "sum", arg: "v") }`);
    expect(`${agg[a]!.table}_hour`.length).toBeLessThanOrEqual(63);
  });
});

describe('names are kept', () => {
  it("a later version's field or entity never takes over a name given, even one whose field or entity is gone", () => {
    const v1 = names('type Operator @entity { id: ID! } type Pool @entity { id: ID! operator: Operator! old: Int }');
    const v2 = decideNames(
      model(`type Operator @entity { id: ID! } type Pool @entity { id: ID! operator: Operator! operatorId: String! Old: Int }
        type Pools @entity { id: ID! }`),
      v1,
    );
    expect(v2.names.Pool!.columns).toEqual({
      id: 'id',
      operator: 'operator_id',
      old: 'old',
      operatorId: 'operator_id_',
      Old: 'old_',
    });
    // The rule alone would have given the new field the reference's name.
    expect(
      names('type Operator @entity { id: ID! } type Pool @entity { id: ID! operator: Operator! operatorId: String! }')
        .Pool!.columns.operatorId,
    ).toBe('operator_id');
    expect(v2.names.Pools!.table).toBe('pools_');
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
      'two fields of one column',
      'type P @entity { id: ID! ttl: Int Ttl: Int }',
      "P.ttl and P.Ttl are both graph-node's column ttl",
    ],
    [
      "a field of graph-node's own column",
      'type P @entity { id: ID! vid: Int }',
      "graph-node's own column vid and P.vid are both graph-node's column vid",
    ],
    ['a name graph-node keeps', 'type Query @entity { id: ID! }', "the type name Query is graph-node's own"],
    [
      'an interval of an aggregation and a type',
      `type T @entity(timeseries: true) { id: Int8! timestamp: Timestamp! v: BigInt! }
      type Stat @aggregation(intervals: ["hour"], source: "T") { id: Int8! timestamp: Timestamp! s: BigInt! @aggregate(fn: "sum", arg: "v") }
      type StatHour @entity { id: ID! }`,
      "type StatHour and aggregation Stat (hour) are both graph-node's table stat_hour",
    ],
  ])('is named: %s', (_, sdl, message) => {
    expect(layoutConflicts(model(sdl)).join('; ')).toContain(message);
  });

  it('is nothing else: a mutable field blockRange is, an immutable one is not; names apart by case in SQL are apart', () => {
    expect(layoutConflicts(model('type P @entity(immutable: true) { id: ID! blockRange: Int }'))).toEqual([]);
    expect(layoutConflicts(model('type P @entity { id: ID! blockRange: Int }'))).toHaveLength(1);
    expect(layoutConflicts(model('type Stat @entity { id: ID! } type Stats @entity { id: ID! }'))).toEqual([]);
  });
});

describe('subgraph names', () => {
  it.each([
    ['temp', "DuckDB's own schema or catalog"],
    ['pg_catalog', "DuckDB's own schema or catalog"],
    ['reports', "pool-export's report views"],
    ['dodoex', "DODO's data"],
    ['warehouse', 'a database file pool-export opens'],
    ['order', 'a reserved word of SQL'],
  ])('refuses %s, naming whose it is and a name it can take', (name, whose) => {
    expect(() => checkSubgraphName(name)).toThrow(UsageError);
    expect(() => checkSubgraphName(name)).toThrow(
      new RegExp(`"${name}" is taken: .*${whose}.*; choose another, such as ${name}_sg`),
    );
  });

  it("keeps SQL's reserved words as the DuckDB installed has them", async () => {
    const conn = await (await DuckDBInstance.create(':memory:')).connect();
    const rows = (
      await conn.runAndReadAll("SELECT keyword_name AS k FROM duckdb_keywords() WHERE keyword_category = 'reserved'")
    ).getRowObjectsJson();
    expect(new Set(rows.map((r) => String(r.k)))).toEqual(SQL_RESERVED);
    conn.closeSync();
  });
});
