/**
 * How a subgraph's GraphQL names become its tables and columns: one rule, owned here (docs/any-subgraph.md, "Names").
 *
 * 1. The start is graph-node's own SQL name of each type and field (`sqlName`: `ERC20Transfer` → `erc20_transfer`,
 *    `token0Price` → `token_0_price`, `_ActivityHelper` → `activity_helper`). A table is that name with its last word in
 *    the plural (`erc20_transfers`), an aggregation's one table per interval (`token_stats_hour`); a reference's column
 *    ends in `_id`; a BigInt's or BigDecimal's exact text is its column's name and `_text`.
 * 2. A name that meets one pool-export keeps for itself (`OWN_COLUMNS`, and every name that starts with `_`), or one
 *    already given, gets a `_` appended until it is free: graph-node's own names first in the order of the schema,
 *    then references' `_id` columns, then the exact texts, so that a field named `operatorId` keeps `operator_id` and a
 *    reference `operator` beside it gets `operator_id_`. A table takes its name and `<name>_history` (the rows each run
 *    read of it in the lake), both free.
 * 3. A table name longer than `MAX_TABLE` is cut, with 8 hex digits of the SHA-256 of the whole name, so that every
 *    path of the lake fits any file system.
 * 4. The names are decided when a subgraph is added or refreshed and kept from then on (`SubgraphSpec.names`): a new
 *    version's entity or field is named around the names given, even those of entities and fields gone.
 *
 * What graph-node itself cannot lay out (two types, or two fields of one type, with one SQL name) is refused
 * (`layoutConflicts`), naming both.
 */
import { createHash } from 'node:crypto';
import type { EntityModel, FieldModel, SchemaModel } from '../schemas/entity-model.ts';
import { lowerCamel, pluralize } from '../schemas/entity-model.ts';

/**
 * graph-node's SQL name of a GraphQL name: `SqlName::from` is Inflector 0.11.4's `to_snake_case`
 * (graphprotocol/graph-node f27eb5f, `store/postgres/src/relational.rs`; whatisinternet/Inflector a4a95ea,
 * `src/cases/case/mod.rs` `to_case_snake_like`). Characters other than letters and digits separate words and are
 * dropped at either end; a capital or a digit starts a word where the character before or after it is lower case.
 */
export function sqlName(name: string): string {
  const text = name.replace(/[^A-Za-z0-9]+$/, '');
  const lower = (c: string | undefined) => c !== undefined && c >= 'a' && c <= 'z';
  let first = true;
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (!/[A-Za-z0-9]/.test(c)) {
      if (!first) out += '_';
      first = true;
      continue;
    }
    // Inflector's `char_is_uppercase` is `c == c.to_ascii_uppercase()`: true of digits too.
    if (!first && c === c.toUpperCase() && (lower(name[i + 1]) || lower(name[i - 1]))) out += '_';
    first = false;
    out += c.toLowerCase();
  }
  return out;
}

/** Postgres keeps 63 bytes of a name (graph-node's tables and columns are cut there), and so does this rule's tables. */
export const MAX_TABLE = 63;

/**
 * Column names pool-export keeps for itself in a subgraph's tables, its lake files and its views, besides every name
 * that starts with `_` (`_block`, `_run_id`, `_taken_at`, `_exact`…): the chain of each row, the lake's partitions,
 * the time of an event or bucket in the lake, and DuckDB's own `file_row_number`, which the lake writer reads.
 */
export const OWN_COLUMNS: ReadonlySet<string> = new Set(['chain_id', 'chain', 'month', 'time', 'file_row_number']);

/** The names given to one entity's (or aggregation's) table and columns. */
export interface EntityNames {
  /** Its table below the subgraph's schema; an aggregation's tables are this and `_<interval>`. */
  readonly table: string;
  /** The column of each stored field (a reference's holds the id). */
  readonly columns: Readonly<Record<string, string>>;
  /** The column of each BigInt or BigDecimal field's exact text (a list's too). */
  readonly texts: Readonly<Record<string, string>>;
}

/** The names of a subgraph's entities and aggregations, by GraphQL type name. */
export type SubgraphNames = Readonly<Record<string, EntityNames>>;

/** A name the rule had to change: what it names, the name it would have had, the one it has, and why. */
export interface NameChange {
  readonly what: string;
  readonly wanted: string;
  readonly given: string;
  readonly why: string;
}

const stored = (e: EntityModel): FieldModel[] => e.fields.filter((f) => !f.derivedFrom);
const hasText = (f: FieldModel) => !f.ref && !f.enum && (f.type === 'BigInt' || f.type === 'BigDecimal');
const hash8 = (s: string) => createHash('sha256').update(s).digest('hex').slice(0, 8);

/** A table name of at most `max` characters: cut, with 8 hex digits of its whole name's SHA-256, when longer. */
export function fitName(name: string, max: number): string {
  return name.length <= max ? name : `${name.slice(0, max - 9)}_${hash8(name)}`;
}

/**
 * The table of an entity by the rule (before any collision): graph-node's SQL name with its ending pluralized as the
 * entity's GraphQL collection is (`Bounty` → `bounties`, `NewTTL` → `new_ttls`).
 */
export function pluralTable(entity: string): string {
  const one = lowerCamel(entity);
  const many = pluralize(one);
  let stem = one;
  while (!many.startsWith(stem)) stem = stem.slice(0, -1);
  const [dropped, added] = [one.slice(stem.length).toLowerCase(), many.slice(stem.length).toLowerCase()];
  const snake = sqlName(entity);
  return snake.endsWith(dropped) ? `${snake.slice(0, snake.length - dropped.length)}${added}` : sqlName(many);
}

/** The longest interval name of the schema's aggregations (an aggregation's table stem leaves room for it). */
const intervalRoom = (model: SchemaModel) =>
  Math.max(0, ...(model.aggregations ?? []).flatMap((a) => a.aggregation!.intervals.map((i) => i.length + 1)));

/** The tables a name takes for one entity or aggregation: its own (one per interval) and their histories. */
function tablesOf(e: EntityModel, table: string): string[] {
  const own = e.aggregation ? e.aggregation.intervals.map((i) => `${table}_${i}`) : [table];
  return own.flatMap((t) => [t, `${t}_history`]);
}

/** Appends `_` to `wanted` until `free` takes it. */
function firstFree(wanted: string, free: (name: string) => boolean): string {
  let name = wanted;
  while (!free(name)) name += '_';
  return name;
}

/**
 * The names of a schema's entities and aggregations: those `kept` gives (decided before, for this subgraph), and for
 * the others those of the rule, each clear of every name kept or given. Returns them with the names the rule changed.
 */
export function decideNames(
  model: SchemaModel,
  kept: SubgraphNames = {},
): { names: SubgraphNames; changes: NameChange[] } {
  const types = [...model.entities, ...(model.aggregations ?? [])];
  const changes: NameChange[] = [];
  // Every table a kept name takes (an entity gone from the schema keeps its table too).
  const taken = new Set<string>();
  for (const [type, k] of Object.entries(kept)) {
    const e = types.find((t) => t.name === type);
    for (const t of e ? tablesOf(e, k.table) : [k.table, `${k.table}_history`]) taken.add(t);
  }
  const names: Record<string, EntityNames> = {};
  for (const e of types) {
    const table = kept[e.name]?.table ?? newTable(e, { taken, room: intervalRoom(model), changes });
    names[e.name] = { table, ...entityColumns(e, kept[e.name], changes) };
  }
  for (const [type, k] of Object.entries(kept)) names[type] ??= k;
  return { names, changes };
}

/** The table of an entity the names kept do not name: the rule's, clear of every table taken (which it joins). */
function newTable(e: EntityModel, at: { taken: Set<string>; room: number; changes: NameChange[] }): string {
  const max = e.aggregation ? MAX_TABLE - at.room : MAX_TABLE;
  const wanted = pluralTable(e.name);
  const fit = fitName(wanted, max);
  const table = firstFree(fit, (t) => tablesOf(e, t).every((x) => !at.taken.has(x)));
  for (const t of tablesOf(e, table)) at.taken.add(t);
  if (table !== wanted)
    at.changes.push({
      what: e.name,
      wanted,
      given: table,
      why: fit !== wanted ? `longer than ${max} characters` : 'another entity of the subgraph has that table',
    });
  return table;
}

/** The columns of one entity: those kept, then the rule's for the others (see the module's comment, step 2). */
function entityColumns(
  e: EntityModel,
  was: EntityNames | undefined,
  changes: NameChange[],
): Pick<EntityNames, 'columns' | 'texts'> {
  const columns: Record<string, string> = { ...was?.columns };
  const texts: Record<string, string> = { ...was?.texts };
  const owner = new Map<string, string>();
  for (const [f, c] of Object.entries(columns)) owner.set(c, `${e.name}.${f}'s column`);
  for (const [f, c] of Object.entries(texts)) owner.set(c, `the exact text of ${e.name}.${f}`);
  const take = (what: string, wanted: string) => {
    const name = firstFree(wanted, (n) => !n.startsWith('_') && !OWN_COLUMNS.has(n) && !owner.has(n));
    if (name !== wanted)
      changes.push({ what, wanted, given: name, why: `${wanted} is ${owner.get(wanted) ?? "pool-export's own"}` });
    owner.set(name, what);
    return name;
  };
  const fields = stored(e);
  // graph-node's own names first, then references' `_id` columns, then exact texts.
  for (const f of fields.filter((x) => !x.ref || x.list))
    columns[f.name] ??= take(`${e.name}.${f.name}'s column`, sqlName(f.name));
  for (const f of fields.filter((x) => x.ref && !x.list))
    columns[f.name] ??= take(`${e.name}.${f.name}'s column`, `${sqlName(f.name)}_id`);
  for (const f of fields.filter(hasText))
    texts[f.name] ??= take(`the exact text of ${e.name}.${f.name}`, `${columns[f.name]}_text`);
  return { columns, texts };
}

/**
 * snake_case of a camelCase name, the rule of DODO's tables and columns (`DIP3MaintainerFeeUSD` →
 * `dip3_maintainer_fee_usd`), and of a subgraph's before this rule (`token0Price` → `token0_price`).
 */
export function snake(name: string): string {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1_$2')
    .toLowerCase();
}

/** DODO's column of a reference field: its snake case and `_id` (`baseToken` → `base_token_id`). */
export function refColumn(field: string): string {
  return `${snake(field)}_id`;
}

/**
 * DODO's table of an entity: snake case of its plural (`MaintainerEarnings` → `maintainer_earnings`), the plural's
 * ending added after the snake case of the name, so that a run of capitals stays whole (`NewTTL` → `new_ttls`).
 */
export function tableOf(entity: string): string {
  const one = lowerCamel(entity);
  const many = pluralize(one);
  let stem = one;
  while (!many.startsWith(stem)) stem = stem.slice(0, -1);
  return `${snake(stem)}${many.slice(stem.length).toLowerCase()}`;
}

/**
 * The tables versions before this rule gave a subgraph's entity (`tableOf`, and before it the snake case of the whole
 * plural, `NewTTL` → `new_tt_ls`); its columns were named by `snake` (a reference's with `_id`), as DODO's are. A
 * folder they wrote is renamed to this rule's names by its next run (`store/warehouse.ts`).
 */
export function formerTables(entity: string): string[] {
  return [...new Set([tableOf(entity), snake(pluralize(lowerCamel(entity)))])];
}

/** graph-node's own columns in an entity's table: `vid`, and `block_range` in a mutable entity's (`relational/ddl.rs`). */
const GRAPH_NODE_COLUMNS = (e: EntityModel): string[] => (e.immutable ? ['vid'] : ['vid', 'block_range']);

/** Type names graph-node keeps for itself (`validate_reserved_types_usage`, `graph/src/schema/input/mod.rs`). */
const RESERVED_TYPES = new Set([
  'Boolean',
  'ID',
  'Int',
  'BigDecimal',
  'String',
  'Bytes',
  'BigInt',
  'Query',
  'Subscription',
]);

/** A name as Postgres keeps it: its first 63 bytes (graph-node's names are ASCII). */
const pg = (name: string) => name.slice(0, MAX_TABLE);

/**
 * What graph-node cannot lay out, each in one line naming both names: two entity types (or an aggregation's interval
 * and a type) whose tables have one SQL name, two fields of one type whose columns have one, a field whose column is
 * one of graph-node's own, in Postgres' 63 bytes (graph-node f27eb5f, `store/postgres/src/relational.rs`: "if users have
 * GraphQL type names that do not differ in the first 63 characters after snakecasing, schema creation will fail").
 */
export function layoutConflicts(model: SchemaModel): string[] {
  const out: string[] = [];
  const tables = new Map<string, string>();
  const claim = (map: Map<string, string>, at: { name: string; owner: string; what: string }) => {
    const other = map.get(pg(at.name));
    if (other === undefined) map.set(pg(at.name), at.owner);
    else
      out.push(
        `${other} and ${at.owner} are both graph-node's ${at.what} ${pg(at.name)}: graph-node cannot deploy the schema`,
      );
  };
  for (const e of model.entities) claim(tables, { name: sqlName(e.name), owner: `type ${e.name}`, what: 'table' });
  for (const a of model.aggregations ?? [])
    for (const i of a.aggregation!.intervals)
      claim(tables, { name: `${sqlName(a.name)}_${i}`, owner: `aggregation ${a.name} (${i})`, what: 'table' });
  const types = [...model.entities, ...(model.aggregations ?? []), ...(model.interfaces?.values() ?? [])];
  const all = new Set([...types.map((t) => t.name), ...(model.enums?.keys() ?? [])]);
  for (const n of all)
    if (RESERVED_TYPES.has(n) || ['_filter', '_orderBy'].some((x) => n.endsWith(x) && all.has(n.slice(0, -x.length))))
      out.push(`the type name ${n} is graph-node's own, so graph-node cannot deploy the schema`);
  for (const e of [...model.entities, ...(model.aggregations ?? [])]) {
    const columns = new Map(GRAPH_NODE_COLUMNS(e).map((c) => [c, `graph-node's own column ${c}`]));
    for (const f of stored(e)) claim(columns, { name: sqlName(f.name), owner: `${e.name}.${f.name}`, what: 'column' });
  }
  return out;
}

const isNameMap = (v: unknown): v is Record<string, string> =>
  typeof v === 'object' && v !== null && !Array.isArray(v) && Object.values(v).every((x) => typeof x === 'string');

/** Whether a value read from a data folder's list is names as `decideNames` gives them (a hand may have edited it). */
export function isSubgraphNames(v: unknown): v is SubgraphNames {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) return false;
  return Object.values(v).every((e: unknown) => {
    const n = e as Partial<Record<keyof EntityNames, unknown>> | null;
    return (
      typeof n === 'object' && n !== null && typeof n.table === 'string' && isNameMap(n.columns) && isNameMap(n.texts)
    );
  });
}
