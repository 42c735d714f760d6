/** The warehouse file: transactions, serialized statements, tables made and widened, versions, and its errors. */
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { dataFolder } from '../../src/config/data-folder.ts';
import { checkpointBesideLake, LAKE_MEMORY_FAULT_ENV, writeLakeStep } from '../../src/pipeline/lake-step.ts';
import { tableColumns } from '../../src/store/ddl.ts';
import { SCHEMA_VERSION } from '../../src/store/migrations.ts';
import { ALLOCATOR_CONF, ALLOCATOR_ENV, Warehouse, warehouseThreads } from '../../src/store/warehouse.ts';
import { rewriteWarehouseBlocks } from '../../src/store/warehouse-blocks.ts';

const FIXTURES = new URL('../fixtures/hosts/', import.meta.url).pathname;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'pe-wh-'));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('the warehouse', () => {
  it('commits a transaction that returns and rolls back one that throws', async () => {
    const w = await Warehouse.open(dir);
    try {
      await w.exec('CREATE TABLE t (n INTEGER)');
      expect(await w.transaction(async (tx) => tx.exec('INSERT INTO t VALUES (1), (2)'))).toBe(2);
      await expect(
        w.transaction(async (tx) => {
          await tx.exec('INSERT INTO t VALUES (3)');
          throw new Error('half-way');
        }),
      ).rejects.toThrow('half-way');
      expect(await w.all('SELECT n FROM t ORDER BY n')).toEqual([{ n: 1 }, { n: 2 }]);
      // Statements queue one after another, even when one fails.
      const results = await Promise.allSettled([
        w.exec('INSERT INTO t VALUES (4)'),
        w.exec('INSERT INTO nowhere VALUES (5)'),
        w.all('SELECT count(*)::INTEGER AS c FROM t'),
      ]);
      expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
      expect((results[2] as PromiseFulfilledResult<unknown>).value).toEqual([{ c: 3 }]);
    } finally {
      await w.close();
    }
  });

  it('records its schema version, and refuses one written by a newer version', async () => {
    let w = await Warehouse.open(dir);
    expect(await w.all("SELECT value FROM _pool_export.meta WHERE key = 'schema_version'")).toEqual([
      { value: String(SCHEMA_VERSION) },
    ]);
    await w.exec("UPDATE _pool_export.meta SET value = '99' WHERE key = 'schema_version'");
    await w.close();
    await expect(Warehouse.open(dir)).rejects.toThrow(
      `was written by a newer pool-export (schema version 99; this one knows ${SCHEMA_VERSION})`,
    );
    // Read-only opens of a current or newer warehouse read it as it is.
    w = await Warehouse.open(dir, { readOnly: true });
    await w.close();
  });

  it('makes the tables of datasets, and adds the columns a table made earlier lacks', async () => {
    const ds = findDataset('dodoex.pairs')!;
    const w = await Warehouse.open(dir);
    try {
      await w.ensureTables([ds]);
      const columns = async () =>
        (
          await w.all(
            "SELECT column_name AS c FROM duckdb_columns() WHERE schema_name = 'dodoex' AND table_name = 'pairs' ORDER BY column_index",
          )
        ).map((r) => r.c);
      const made = await columns();
      expect(made).toEqual(expect.arrayContaining(tableColumns(ds).map(([n]) => n)));
      const [last] = tableColumns(ds).slice(-1);
      await w.exec(`ALTER TABLE dodoex.pairs DROP COLUMN "${last![0]}"`);
      expect(await columns()).not.toContain(last![0]);
      await w.ensureTables([ds]);
      expect((await columns()).sort()).toEqual([...made].sort());
    } finally {
      await w.close();
    }
  });

  it('gives DuckDB one thread fewer than the cores, at least one, and keeps that count after a lake write under a small memory limit', async () => {
    expect([1, 2, 3, 8].map((cores) => warehouseThreads(cores))).toEqual([1, 1, 2, 7]);
    const cores = availableParallelism();
    const w = await Warehouse.open(dir, { memoryLimit: '256MB' });
    const threads = async () => Number((await w.all("SELECT current_setting('threads') AS t"))[0]!.t);
    try {
      expect(await threads()).toBe(Math.max(1, cores - 1));
      // The lake step writes on one thread under 512 MiB, then gives the warehouse its own count back (not DuckDB's).
      await w.exec('SET threads = 2');
      const config = loadConfig({ env: {}, overrides: { dataDir: dir, duckdbMemoryLimit: '256MB' } });
      await writeLakeStep(w, config, { bucket: null, runId: 'r', log: () => undefined });
      expect(await threads()).toBe(Math.max(1, cores - 1));
    } finally {
      await w.close();
    }
  });

  it('checkpoints beside another connection whose transaction is open: what is committed leaves the log, the rest stays', async () => {
    const wal = `${dataFolder(dir).warehouse}.wal`;
    const logged = () => (existsSync(wal) ? statSync(wal).size : 0);
    const w = await Warehouse.open(dir);
    try {
      await w.exec('CREATE TABLE t (n INTEGER)');
      await w.exec('CHECKPOINT');
      await w.exec('INSERT INTO t SELECT range FROM range(1000)');
      expect(logged()).toBeGreaterThan(0);
      // Another connection reads and writes in a transaction it has not ended while the checkpoint runs.
      const other = await w.lane();
      await other.exec('BEGIN TRANSACTION');
      await other.exec('INSERT INTO t VALUES (-1)');
      expect(await other.all('SELECT count(*)::INTEGER AS c FROM t')).toEqual([{ c: 1001 }]);
      await w.checkpointBeside();
      expect(logged()).toBe(0);
      await other.exec('COMMIT');
      await other.close();
      expect(logged()).toBeGreaterThan(0);
      // A checkpoint interrupted by a stop is no failure: the close's own checkpoint writes what it did not.
      const stop = new AbortController();
      stop.abort();
      await w.checkpointBeside(stop.signal);
    } finally {
      // Closed without its checkpoint: the committed row read again from the log on the next open.
      await w.close({ checkpoint: false });
    }
    const again = await Warehouse.open(dir);
    try {
      expect(await again.all('SELECT count(*)::INTEGER AS c, min(n) AS lo FROM t')).toEqual([{ c: 1001, lo: -1 }]);
    } finally {
      await again.close();
    }
  });

  it('checkpoints a run beside its lake write where the lake write may take lanes, and not under its memory fault', async () => {
    const w = await Warehouse.open(dir);
    const running = new AbortController();
    const at = (limit: string) =>
      checkpointBesideLake(
        w,
        loadConfig({ env: {}, overrides: { dataDir: dir, duckdbMemoryLimit: limit } }),
        running.signal,
      );
    try {
      // `lakeLanes`: one lane under 1 GiB, so no checkpoint beside it; two lanes from 1 GiB on, and with no limit.
      expect(at('512MB')).toBeUndefined();
      const beside = at('2GB');
      expect(beside).toBeInstanceOf(Promise);
      await beside;
      process.env[LAKE_MEMORY_FAULT_ENV] = '64MB';
      try {
        expect(at('2GB')).toBeUndefined();
      } finally {
        delete process.env[LAKE_MEMORY_FAULT_ENV];
      }
      running.abort();
      expect(at('2GB')).toBeUndefined();
    } finally {
      await w.close();
    }
  });

  it('makes a new file in blocks of 64 KiB, and opens one made in DuckDB\u2019s 256 KiB as it is, its rows intact', async () => {
    const blockSize = async (w: Warehouse) =>
      Number((await w.all('SELECT block_size AS b FROM pragma_database_size()'))[0]!.b);
    const fresh = await Warehouse.open(dir);
    try {
      expect(await blockSize(fresh)).toBe(65_536);
    } finally {
      await fresh.close();
    }
    // A warehouse an earlier version made, with DuckDB's default block size and a row in it.
    const older = mkdtempSync(join(tmpdir(), 'pe-wh-'));
    try {
      const { DuckDBInstance } = await import('@duckdb/node-api');
      const db = await DuckDBInstance.create(dataFolder(older).warehouse);
      const c = await db.connect();
      await c.run("CREATE TABLE kept AS SELECT 'row' AS v");
      c.closeSync();
      db.closeSync();
      const w = await Warehouse.open(older);
      try {
        expect(await blockSize(w)).toBe(262_144);
        expect(await w.all('SELECT v FROM kept')).toEqual([{ v: 'row' }]);
      } finally {
        await w.close();
      }
    } finally {
      rmSync(older, { recursive: true, force: true });
    }
  });

  it('rewrites a warehouse made in 256 KiB blocks in 64 KiB, every row and table kept, and leaves one in 64 KiB alone', async () => {
    const { DuckDBInstance } = await import('@duckdb/node-api');
    const path = dataFolder(dir).warehouse;
    // A warehouse an earlier version made: DuckDB's default block size, the exporter's tables, a dataset's rows.
    const db = await DuckDBInstance.create(path);
    db.closeSync();
    const swaps = findDataset('dodoex.swaps')!;
    let w = await Warehouse.open(dir);
    await w.ensureTables([swaps]);
    await w.exec(
      `INSERT INTO dodoex.swaps (id, "timestamp", amount_in, amount_in_text, chain_id, _run_id) SELECT 's' || r, r, r / 3, '0.' || r, 56, 'r1' FROM range(5000) t(r)`,
    );
    await w.exec(
      "INSERT INTO _pool_export.checkpoints (chain_id, dataset, cursor, block) VALUES (56, 'dodoex.swaps', '{\"t\":4999}', 7)",
    );
    const read = async () => ({
      swaps: await w.all('SELECT id, "timestamp", amount_in, amount_in_text FROM dodoex.swaps ORDER BY id'),
      checkpoints: await w.all('SELECT chain_id, dataset, cursor, block FROM _pool_export.checkpoints'),
      tables: await w.all('SELECT schema_name, table_name FROM duckdb_tables() ORDER BY ALL'),
      // Keys too: the exporter's upserts (ON CONFLICT) need them.
      keys: await w.all(
        "SELECT schema_name, table_name, constraint_type, CAST(constraint_column_names AS VARCHAR) AS c FROM duckdb_constraints() WHERE constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY ALL",
      ),
      block: Number((await w.all('SELECT block_size AS b FROM pragma_database_size()'))[0]!.b),
    });
    const before = await read();
    await w.close();
    expect(before.block).toBe(262_144);
    expect(before.swaps).toHaveLength(5000);
    const r = await rewriteWarehouseBlocks(dir);
    expect(r).toEqual({ from: 262_144, to: 65_536, rows: expect.any(Number) });
    expect(r!.rows).toBeGreaterThanOrEqual(5001);
    expect(existsSync(`${path}.rewrite`)).toBe(false);
    w = await Warehouse.open(dir);
    try {
      expect(await read()).toEqual({ ...before, block: 65_536 });
    } finally {
      await w.close();
    }
    expect(await rewriteWarehouseBlocks(dir)).toBeNull();
  });

  it('names the file when it cannot be opened', async () => {
    writeFileSync(dataFolder(dir).warehouse, 'not a database');
    await expect(Warehouse.open(dir)).rejects.toThrow(`cannot open the warehouse ${dataFolder(dir).warehouse}: `);
  });
});

describe('the warehouse and other processes', () => {
  it('caps DuckDB memory when asked, and names the holder when another process has the file open', async () => {
    const w = await Warehouse.open(dir, { memoryLimit: '256MB' });
    try {
      const [limit] = await w.all("SELECT current_setting('memory_limit') AS m");
      expect(String(limit!.m)).toMatch(/^(244\.1 MiB|256\.0 MB)$/);
      // A writer folds its log into the file at 64 MB, not DuckDB's 16 MB (the export's commit cost; see bench/).
      const [threshold] = await w.all("SELECT current_setting('checkpoint_threshold') AS t");
      expect(String(threshold!.t)).toMatch(/^(61\.0 MiB|64\.0 MB)$/);
    } finally {
      await w.close();
    }
    // A second process holds the file open for writing until told to stop.
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { DuckDBInstance } = await import('@duckdb/node-api');
         const i = await DuckDBInstance.create(${JSON.stringify(dataFolder(dir).warehouse)});
         await i.connect();
         process.stdout.write('open\\n');
         process.stdin.on('data', () => process.exit(0));`,
      ],
      { cwd: process.cwd(), stdio: ['pipe', 'pipe', 'inherit'] },
    );
    try {
      await new Promise<void>((r) => holder.stdout!.once('data', () => r()));
      await expect(Warehouse.open(dir)).rejects.toThrow(
        new RegExp(
          `^the warehouse ${dataFolder(dir).warehouse.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} is in use by another process \\(.*lock.*\\); wait for it to finish or stop it$`,
          'i',
        ),
      );
    } finally {
      const exited = new Promise((r) => holder.once('exit', r));
      holder.stdin!.write('x');
      await exited;
    }
  });

  it("returns the memory DuckDB frees at once under a control group's limit, keeps DuckDB's own setting elsewhere, and the user's always", () => {
    // A fresh process opens a warehouse, runs a query whose hash table takes some 200 MB, and reports its resident
    // memory before, at the peak (the kernel's high-water mark) and after. The oracle is the kernel's count of the
    // process's pages: with DuckDB's own allocator setting (freed pages kept for a second) the query's pages stay
    // resident after it ends. The host is one of the fixtures (POOL_EXPORT_HOST_FILES): a 512 MiB control group's, or
    // an 8 GiB machine's with no limit.
    const probe = (env: NodeJS.ProcessEnv, name: string) => {
      const warehouse = new URL('../../src/store/warehouse.ts', import.meta.url).href;
      const script = `const { Warehouse } = await import(${JSON.stringify(warehouse)});
        const mb = () => process.memoryUsage.rss() / 2 ** 20;
        const w = await Warehouse.open(${JSON.stringify(join(dir, name))});
        const before = mb();
        const [r] = await w.all('SELECT count(DISTINCT range) AS n FROM range(5000000)');
        const after = mb();
        const peak = process.resourceUsage().maxRSS / 1024;
        const conf = process.env.${ALLOCATOR_ENV} ?? null;
        process.stdout.write(JSON.stringify({ n: Number(r.n), before, peak, after, conf }));`;
      const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        env,
        encoding: 'utf8',
      });
      return JSON.parse(out) as { n: number; before: number; peak: number; after: number; conf: string | null };
    };
    const { [ALLOCATOR_ENV]: _, ...unset } = process.env;
    const host = (name: string) => ({ ...unset, POOL_EXPORT_HOST_FILES: join(FIXTURES, name) });
    const limited = probe(host('limit-512mib'), 'limited');
    expect(limited.n).toBe(5_000_000);
    expect(limited.conf).toBe(ALLOCATOR_CONF);
    expect(limited.peak - limited.before).toBeGreaterThan(100);
    expect(limited.after - limited.before).toBeLessThan(40);
    // No limit: DuckDB's own setting, and the pages stay; the probe can see what the limited host's setting saves.
    const free = probe(host('no-limit-8gib'), 'free');
    expect(free.conf).toBe(null);
    expect(free.after - free.before).toBeGreaterThan(100);
    // A setting in the user's environment is kept, on any host.
    const mine = probe({ ...host('no-limit-8gib'), [ALLOCATOR_ENV]: ALLOCATOR_CONF }, 'mine');
    expect(mine.conf).toBe(ALLOCATOR_CONF);
    expect(mine.after - mine.before).toBeLessThan(40);
  });
});
