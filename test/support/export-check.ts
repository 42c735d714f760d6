/** Compares an exported warehouse with the sandbox's own rows: counts, duplicates and a content hash per dataset and chain. */
import { createHash } from 'node:crypto';
import { Decimal } from 'decimal.js';
import { DATASETS, type Dataset } from '../../src/catalog/catalog.ts';
import { MICROS, textColumn } from '../../src/catalog/column.ts';
import { subgraphEntity } from '../../src/catalog/subgraphs.ts';
import { openLakeDb } from '../../src/reports/views.ts';
import type { SandboxEndpoint } from '../../src/sandbox/spawn.ts';
import { hasText } from '../../src/store/ddl.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { q, qt } from '../../src/util/sql.ts';
import { allRows } from './sandbox-client.ts';

/** Whether a column holds a subgraph's `Int` field (sent as a JSON number). */
const intSource = (ds: Dataset, c: Dataset['columns'][number]) =>
  subgraphEntity(ds.schema, ds.entity)?.field.get(c.field)?.type === 'Int';

/** Canonical text of a row: lists sorted, since graph-node serves entity lists in id order, not storage order. */
const canon = (v: unknown[]) => JSON.stringify(v.map((x) => (Array.isArray(x) ? [...x].sort() : (x ?? null))));

/** The upstream text of each column, as the exported table recovers it. */
function exportSelect(ds: Dataset): string {
  return ds.columns
    .map((c) =>
      hasText(c)
        ? `${q(textColumn(c))} AS ${q(`text:${c.column}`)}`
        : c.cls === 'int8'
          ? `CAST(${q(c.column)} AS VARCHAR) AS ${q(c.column)}`
          : c.cls === 'timestamp'
            ? // TIMESTAMPTZ holds microseconds exactly: back to graph-node's text by epoch_us (an Int or BigInt made a
              // time, to its seconds or milliseconds: an Int's as a number, as graph-node sends an Int).
              `CAST(epoch_us(${q(c.column)}) // ${MICROS[c.unit ?? 'us']} AS ${intSource(ds, c) ? 'INTEGER' : 'VARCHAR'}) AS ${q(c.column)}`
            : q(c.column),
    )
    .join(', ');
}

/**
 * The typed value a numeric column must hold for an upstream text, computed independently of the exporter with
 * decimal.js and the documented rule (docs/exporting.md, The warehouse): a BigDecimal or raw amount is the DOUBLE nearest to the
 * exact decimal value; a count, time or block is that integer; a subgraph's BigInt (DECIMAL(38,0)) is that integer when
 * it has at most 38 digits, else NULL. As text, the way DuckDB's JSON rows carry it.
 */
function typedOracle(c: Dataset['columns'][number], text: unknown): string {
  if (text === null || text === undefined) return 'null';
  // A list of numbers: each element by the rule of its class, as a list.
  if (Array.isArray(text)) return JSON.stringify(text.map((x) => typedOracle({ ...c, cls: c.elem ?? c.cls }, x)));
  const exact = new Decimal(String(text));
  if (c.cls === 'bigint') return exact.toFixed(0);
  if (c.cls === 'integer') return exact.abs().lt(new Decimal('1e38')) ? exact.toFixed(0) : 'null';
  return String(exact.toNumber());
}

/** The typed value of a numeric column as read back (DuckDB's JSON rows: DOUBLE as a number, BIGINT as text). */
const typedRead = (v: unknown): string =>
  v === null || v === undefined ? 'null' : Array.isArray(v) ? JSON.stringify(v.map(typedRead)) : String(v);

/** Count and hash of canonical rows. */
function digest(lines: string[]): { count: number; hash: string } {
  const h = createHash('sha256');
  for (const l of [...lines].sort()) h.update(`${l}\n`);
  return { count: lines.length, hash: h.digest('hex') };
}

/** One mismatch between the export and the sandbox. */
export interface Mismatch {
  readonly dataset: string;
  readonly chainId: number;
  readonly detail: string;
}

/**
 * Compares every subgraph dataset of the given chains with the sandbox at each task's checkpointed block. A dataset
 * whose last task found its entity unavailable upstream (and that has no checkpoint) is listed in `unavailable`.
 */
export async function compareWithSandbox(
  sb: SandboxEndpoint,
  dataDir: string,
  chains: readonly number[],
  only?: readonly string[],
  /** The sandbox's schema to compare with, where it is not the dataset's own (a subgraph moved to another). */
  upstreamSchema?: string,
): Promise<{ mismatches: Mismatch[]; checked: number; rows: number; unavailable: string[] }> {
  const w = await Warehouse.open(dataDir, { readOnly: true });
  const mismatches: Mismatch[] = [];
  const unavailable: string[] = [];
  let checked = 0;
  let rows = 0;
  try {
    // Every checkpoint in one statement; the sandbox's rows of a few datasets asked at once, ahead of their turn.
    const blocks = new Map(
      (await w.all('SELECT dataset, chain_id, block FROM _pool_export.checkpoints')).map((r) => [
        `${String(r.dataset)}@${Number(r.chain_id)}`,
        Number(r.block),
      ]),
    );
    const pairs = DATASETS.filter((d) => d.kind !== 'list' && (!only || only.includes(d.name))).flatMap((ds) =>
      chains.map((chainId) => ({ ds, chainId, block: blocks.get(`${ds.name}@${chainId}`) })),
    );
    const upstream = (p: (typeof pairs)[number]) => {
      const rows =
        p.block === undefined
          ? Promise.resolve([])
          : allRows(sb, p.chainId, upstreamSchema ?? p.ds.schema, p.ds.entity, p.block, p.ds.aggregation?.interval);
      // Awaited in its turn (a failure then fails the comparison); until then, not an unhandled rejection.
      rows.catch(() => undefined);
      return rows;
    };
    const AHEAD = 6;
    const fetched = pairs.slice(0, AHEAD).map(upstream);
    for (const [i, { ds, chainId, block: at }] of pairs.entries()) {
      if (i + AHEAD < pairs.length) fetched.push(upstream(pairs[i + AHEAD]!));
      {
        const sourceOf = fetched[i]!;
        if (at === undefined) {
          await sourceOf;
          const last = (
            await w.all(
              'SELECT arg_max(status, ended_at) AS s FROM _pool_export.run_tasks WHERE chain_id = $1 AND dataset = $2',
              [chainId, ds.name],
            )
          )[0];
          if (last?.s === 'unavailable') unavailable.push(`${ds.name}@${chainId}`);
          else mismatches.push({ dataset: ds.name, chainId, detail: 'no checkpoint' });
          continue;
        }
        const block = at;
        const numeric = ds.columns.filter(hasText);
        const typed = numeric.map((c) => `${q(c.column)} AS ${q(`typed:${c.column}`)}`);
        const exported = await w.all(
          `SELECT ${[exportSelect(ds), ...typed].join(', ')} FROM ${qt(ds.table)} WHERE chain_id = $1 ${ds.kind === 'snapshot' ? `AND _block = ${block}` : ''}`,
          [chainId],
        );
        const dup = await w.all(
          `SELECT count(*) - count(DISTINCT id) AS d FROM ${qt(ds.table)} WHERE chain_id = $1 ${ds.kind === 'snapshot' ? `AND _block = ${block}` : ''}`,
          [chainId],
        );
        if (Number(dup[0]!.d) !== 0)
          mismatches.push({ dataset: ds.name, chainId, detail: `${dup[0]!.d} duplicate ids` });
        const source = await sourceOf;
        const mine = digest(
          exported.map((r) => canon(ds.columns.map((c) => r[hasText(c) ? `text:${c.column}` : c.column]))),
        );
        const theirs = digest(source.map((r) => canon(ds.columns.map((c) => r[c.field]))));
        // Every typed column against the upstream's own text, by id.
        const upstream = new Map(source.map((r) => [String(r.id), r]));
        for (const c of numeric) {
          const wrong = exported.filter((r) => {
            const from = upstream.get(String(r.id));
            return from !== undefined && typedRead(r[`typed:${c.column}`]) !== typedOracle(c, from[c.field]);
          });
          if (wrong.length) {
            const r = wrong[0]!;
            const shown = `${typedRead(r[`typed:${c.column}`])} for ${JSON.stringify(upstream.get(String(r.id))![c.field])}`;
            mismatches.push({
              dataset: ds.name,
              chainId,
              detail: `${c.column}: ${wrong.length} typed values differ from the upstream text (id ${String(r.id)}: ${shown})`,
            });
          }
        }
        checked++;
        rows += mine.count;
        if (mine.count !== theirs.count || mine.hash !== theirs.hash)
          mismatches.push({
            dataset: ds.name,
            chainId,
            detail: `exported ${mine.count} rows (${mine.hash.slice(0, 8)}), sandbox ${theirs.count} (${theirs.hash.slice(0, 8)}) at block ${block}`,
          });
      }
    }
  } finally {
    await w.close();
  }
  return { mismatches, checked, rows, unavailable };
}

/**
 * Datasets whose lake view holds other rows than the warehouse table: another count, or other values in the columns
 * they share (the dataset's own and `chain_id`), compared by an order-free sum of row hashes. A view whose partition
 * column shadowed a column of the files would show the partition's values, and differ.
 */
export async function lakeBehindWarehouse(data: string): Promise<string[]> {
  const w = await Warehouse.open(data, { readOnly: true });
  const lake = await openLakeDb(data);
  const out: string[] = [];
  try {
    for (const ds of DATASETS) {
      const [schema, table] = ds.table.split('.') as [string, string];
      if (
        !(await w.all('SELECT 1 FROM duckdb_tables() WHERE schema_name = $1 AND table_name = $2', [schema, table]))
          .length
      )
        continue;
      const sql = `SELECT count(*) AS n, CAST(sum(hash(row(${[...ds.columns.map((c) => q(c.column)), 'chain_id'].join(', ')})) % 1000000007) AS VARCHAR) AS h FROM ${qt(ds.table)}`;
      const inWarehouse = (await w.all(sql))[0]!;
      if (Number(inWarehouse.n) === 0) continue;
      const inLake = (await lake.conn.runAndReadAll(sql)).getRowObjectsJson()[0]!;
      if (inLake.n !== inWarehouse.n) out.push(`${ds.name}: lake ${inLake.n}, warehouse ${inWarehouse.n}`);
      else if (inLake.h !== inWarehouse.h) out.push(`${ds.name}: the lake's ${inLake.n} rows hold other values`);
    }
  } finally {
    lake.close();
    await w.close();
  }
  return out;
}

/**
 * Every numeric column, in every table of the warehouse and every dataset view of the lake, that is NULL in a row
 * whose exact `_text` twin is set: a number the upstream sent that a reader summing the column would skip.
 */
export async function nullNumbers(data: string): Promise<string[]> {
  const w = await Warehouse.open(data, { readOnly: true });
  const lake = await openLakeDb(data);
  const out: string[] = [];
  try {
    for (const ds of DATASETS) {
      const cols = ds.columns.filter(hasText);
      if (!cols.length) continue;
      // The lake keeps the exact texts in the `_exact` struct (lake/layout.ts), the warehouse beside each number.
      const sql = (text: (column: string) => string) =>
        `SELECT ${cols.map((c) => `count(*) FILTER (WHERE ${q(c.column)} IS NULL AND ${text(c.column)} IS NOT NULL) AS ${q(c.column)}`).join(', ')} FROM ${qt(ds.table)}`;
      const [schema, table] = ds.table.split('.') as [string, string];
      const inWarehouse =
        (await w.all('SELECT 1 FROM duckdb_tables() WHERE schema_name = $1 AND table_name = $2', [schema, table]))
          .length > 0;
      const counts = [
        [
          'warehouse',
          inWarehouse ? (await w.all(sql((c) => q(textColumn(cols.find((x) => x.column === c)!)))))[0]! : {},
        ],
        ['lake', (await lake.conn.runAndReadAll(sql((c) => `"_exact".${q(c)}`))).getRowObjectsJson()[0]!],
      ] as const;
      for (const [where, row] of counts)
        for (const [c, n] of Object.entries(row)) if (Number(n) > 0) out.push(`${where} ${ds.name}.${c}: ${n}`);
    }
  } finally {
    lake.close();
    await w.close();
  }
  return out;
}

/**
 * An order-free digest of a set of rows, for exports too large to hold (millions of rows): their count, and the sum
 * modulo 2^64 of the first 8 bytes of each canonical row's SHA-256. Equal sets give equal digests; a row lost,
 * repeated or changed changes it.
 */
export interface RowDigest {
  readonly count: number;
  readonly sum: string;
}

function digester() {
  let count = 0;
  let sum = 0n;
  return {
    add(line: string) {
      count++;
      sum = (sum + createHash('sha256').update(line).digest().readBigUInt64BE(0)) & 0xffffffffffffffffn;
    },
    done: (): RowDigest => ({ count, sum: sum.toString(16) }),
  };
}

/** A dataset's columns a digest covers: every one, or the id alone. */
function digested(dataset: string, opts: { readonly idsOnly?: boolean }) {
  const ds = DATASETS.find((d) => d.name === dataset)!;
  return { ds, columns: opts.idsOnly ? ds.columns.filter((c) => c.field === 'id') : ds.columns };
}

/**
 * The digest of every row of a dataset at the sandbox's head, streamed from its control API (never held whole);
 * `idsOnly`: of the rows' ids alone (a set of millions of rows is checked for loss and repeats in seconds).
 */
export async function streamDigest(
  sb: SandboxEndpoint,
  chainId: number,
  dataset: string,
  opts: { readonly idsOnly?: boolean } = {},
): Promise<RowDigest> {
  const { ds, columns } = digested(dataset, opts);
  const res = await fetch(
    `${sb.url}/_sandbox/rows?chainId=${chainId}&schema=${ds.schema}&entity=${ds.entity}${opts.idsOnly ? '&fields=id' : ''}`,
  );
  if (!res.ok || !res.body) throw new Error(`the sandbox's rows of ${dataset}: HTTP ${res.status}`);
  const d = digester();
  let rest = '';
  for await (const text of res.body.pipeThrough(new TextDecoderStream())) {
    const lines = (rest + text).split('\n');
    rest = lines.pop()!;
    for (const l of lines) if (l) d.add(canon(columns.map((c) => JSON.parse(l)[c.field])));
  }
  if (rest) d.add(canon(columns.map((c) => JSON.parse(rest)[c.field])));
  return d.done();
}

/** The digest of a dataset's rows of one chain in the warehouse (or of their ids), read in pages of 100,000 by id. */
export async function warehouseDigest(
  dataDir: string,
  chainId: number,
  dataset: string,
  opts: { readonly idsOnly?: boolean } = {},
): Promise<RowDigest> {
  const { ds, columns } = digested(dataset, opts);
  const w = await Warehouse.open(dataDir, { readOnly: true });
  const d = digester();
  try {
    let after = '';
    for (;;) {
      const page = await w.all(
        `SELECT ${exportSelect(ds)}, id AS "__key" FROM ${qt(ds.table)} WHERE chain_id = $1 AND id > $2 ORDER BY id LIMIT 100000`,
        [chainId, after],
      );
      for (const r of page) d.add(canon(columns.map((c) => r[hasText(c) ? `text:${c.column}` : c.column])));
      if (page.length < 100_000) break;
      after = String(page.at(-1)!.__key);
    }
  } finally {
    await w.close();
  }
  return d.done();
}
