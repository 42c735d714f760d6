/** The DuckDB warehouse file: opening, schema creation, transactions. */

import { mkdirSync, readFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import type { DuckDBConnection, DuckDBInstance, Json } from '@duckdb/node-api';
import type { Dataset } from '../catalog/catalog.ts';
import { dataFolder } from '../config/data-folder.ts';
import { cgroupMemoryLimit, type HostReader, hostReader } from '../config/memory-limit.ts';
import { MigrationNeededError, StopRequested } from '../errors.ts';
import { migrate, migrateLedger, readVersion, SCHEMA_VERSION, writeVersion } from './migrations.ts';
import type { Params, Sql } from './sql-port.ts';
import { logged } from './statement-log.ts';
import { prepareTables } from './tables.ts';

const INTERNAL_SQL = readFileSync(new URL('../../sql/internal.sql', import.meta.url), 'utf8');

/** Size of the write-ahead log at which DuckDB folds it into the database file. */
export const CHECKPOINT_THRESHOLD = '64MB';

/**
 * How DuckDB's allocator hands freed memory back, unless the user's environment says otherwise. libduckdb.so carries
 * its own jemalloc, which reads `DUCKDB_JE_MALLOC_CONF` when the library loads; DuckDB's own setting keeps freed pages
 * for a second (`dirty_decay_ms:1000,muzzy_decay_ms:1000`), so a run that inserts and checkpoints rows holds, on top of
 * what it uses, the pages its last second freed. Returning them at once lowered first backfills' peaks by 12-18%
 * (docs/benchmarks.md), which decides whether a run fits under a control group's memory limit at all, but every page
 * taken again is a page fault: on a virtual machine whose pages the host takes back (free page reporting), DuckDB's
 * work took 2.2 times as long that way. So the pages go back at once only under a control group's memory limit, where
 * the peak is what kills; elsewhere DuckDB keeps its own setting.
 */
export const ALLOCATOR_ENV = 'DUCKDB_JE_MALLOC_CONF';
export const ALLOCATOR_CONF = 'dirty_decay_ms:0,muzzy_decay_ms:0';

/** The allocator setting for a host: `ALLOCATOR_CONF` under a control group's memory limit, else none (DuckDB's). */
export function allocatorConf(read: HostReader = hostReader()): string | undefined {
  return cgroupMemoryLimit(read) === undefined ? undefined : ALLOCATOR_CONF;
}

/**
 * DuckDB's module, loaded at the first open: its native part costs start-up time that `--version` need not pay. The
 * allocator's setting goes into the environment first, for the library to read as it loads.
 */
export const duckdb = () => {
  const conf = process.env[ALLOCATOR_ENV] === undefined ? allocatorConf() : undefined;
  if (conf !== undefined) process.env[ALLOCATOR_ENV] = conf;
  return import('@duckdb/node-api');
};

/**
 * DuckDB's threads in the warehouse: one fewer than the cores this process may use, and at least one. The exporter's
 * own thread (reading the upstream's answers, mapping rows, writing batch files) and its other connections take the
 * core left: on 2 cores, one DuckDB thread made a run after 100 new blocks on the demo's 8 chains 9% faster, its
 * backfill at 5,000 rows a dataset 33.0 s against 41.0 s, and a backfill of 500,000 swaps 28 s against 30 s with a
 * peak of 1,074 MiB against 1,677 MiB (docs/benchmarks.md).
 */
export function warehouseThreads(cores: number = availableParallelism()): number {
  return Math.max(1, cores - 1);
}

/** `warehouseThreads` of this host, set when the warehouse opens (`SET threads` changes it for a while). */
export const WAREHOUSE_THREADS = warehouseThreads();

/**
 * The block size of a new warehouse file: 64 KiB, not DuckDB's 256 KiB. A commit that appends to a table whose last row
 * group was checkpointed starts a segment of one block for each of its columns, and fills its validity mask whole:
 * a run after 100 new blocks appends a few rows to 41 tables of 35-60 columns, so at 256 KiB that was about 1 s of CPU
 * (a third of it page faults), its commits 700 ms and its closing checkpoint 850 ms; at 64 KiB 240 ms and 500 ms.
 * Queries over 2,000,000 rows cost the same within this machine's noise, and the file is 5% larger; at 16 KiB they cost
 * up to 2.7 times as much and the file 60% more (`npx tsx bench/block-size.ts`, docs/benchmarks.md).
 */
export const WAREHOUSE_BLOCK_SIZE = 65_536;

/** `sql`, refusing every statement once `signal` is aborted: an entry under way stops at its next statement. */
export function stoppable(sql: Sql, signal: AbortSignal): Sql {
  const refuse = () => Promise.reject(new StopRequested());
  return {
    exec: (q, params) => (signal.aborted ? refuse() : sql.exec(q, params)),
    all: (q, params) => (signal.aborted ? refuse() : sql.all(q, params)),
  };
}

/** A second connection to a warehouse (`Warehouse.lane`). */
export interface Lane extends Sql {
  close(): Promise<void>;
  /** Interrupts the statement the lane is running, if any (see `Warehouse.interrupt`). */
  interrupt(): void;
}

/** An open warehouse. */
export class Warehouse {
  private queue: Promise<unknown> = Promise.resolve();
  /** Lanes opened so far (they are named by it in the statement log). */
  private lanes = 0;

  private constructor(
    readonly path: string,
    private readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  /** Opens (creating if needed) the warehouse of a data folder, with the exporter's tables and macros. */
  static async open(dataDir: string, opts: { readOnly?: boolean; memoryLimit?: string } = {}): Promise<Warehouse> {
    mkdirSync(dataDir, { recursive: true });
    const path = dataFolder(dataDir).warehouse;
    let instance: DuckDBInstance;
    try {
      instance = await (await duckdb()).DuckDBInstance.create(path, {
        ...(opts.readOnly ? { access_mode: 'READ_ONLY' } : {}),
        // A cap on DuckDB's buffer pool keeps an export's memory flat whatever the data size (it spills to disk).
        ...(opts.memoryLimit ? { memory_limit: opts.memoryLimit, preserve_insertion_order: 'false' } : {}),
        // The write-ahead log is folded into the file once it holds 64 MB, not DuckDB's 16 MB: an export commits a
        // batch every few thousand rows, and at 16 MB a third of its commit time went to checkpoints (docs/benchmarks.md).
        ...(opts.readOnly ? {} : { checkpoint_threshold: CHECKPOINT_THRESHOLD }),
        threads: String(WAREHOUSE_THREADS),
        // Taken by a warehouse file created now; one that exists keeps the block size it was made with.
        default_block_size: String(WAREHOUSE_BLOCK_SIZE),
      });
    } catch (e) {
      const msg = (e as Error).message;
      if (/lock/i.test(msg))
        throw new Error(
          `the warehouse ${path} is in use by another process (${msg.split('\n')[0]}); wait for it to finish or stop it`,
          { cause: e },
        );
      throw new Error(`cannot open the warehouse ${path}: ${msg}`, { cause: e });
    }
    const conn = logged(await instance.connect(), 'main');
    const w = new Warehouse(path, instance, conn);
    try {
      await w.upgrade(opts.readOnly ?? false);
    } catch (e) {
      conn.closeSync();
      instance.closeSync();
      throw e;
    }
    return w;
  }

  /**
   * Creates the exporter's own tables, and migrates a warehouse written by an earlier version (in one transaction).
   * Read-only, an older warehouse cannot be migrated: the error names the command that does it.
   */
  private async upgrade(readOnly: boolean): Promise<void> {
    if (readOnly) {
      const version = await this.transaction(readVersion);
      if (version !== undefined && version < SCHEMA_VERSION)
        throw new MigrationNeededError(this.path, { found: version, needed: SCHEMA_VERSION });
      return;
    }
    await this.exec(INTERNAL_SQL);
    await this.transaction(async (tx) => {
      const version = await readVersion(tx);
      if (version === undefined) await writeVersion(tx, SCHEMA_VERSION);
      else if (version < SCHEMA_VERSION) await migrate(tx, version);
      else if (version > SCHEMA_VERSION)
        throw new Error(
          `the warehouse ${this.path} was written by a newer pool-export (schema version ${version}; this one knows ${SCHEMA_VERSION}); use that version, or a copy of the data folder`,
        );
      await migrateLedger(tx);
    });
    // Keep schema changes out of the WAL: DuckDB can fail to replay catalog entries after a crash.
    await this.exec('CHECKPOINT');
  }

  /**
   * Readies the tables of the given datasets (`tables.ts`, `prepareTables`); the first dataset whose table cannot be
   * readied fails the whole call. A run readies each apart instead, and fails only the tasks of those that fail.
   */
  async ensureTables(datasets: readonly Dataset[]): Promise<void> {
    const failed = await prepareTables(this, datasets);
    for (const e of failed.values()) throw e;
  }

  /**
   * Another connection to the same database, with statements serialized among themselves only: work that may run
   * beside this connection's (the lake writer's second lane). Close it before the warehouse.
   */
  async lane(): Promise<Lane> {
    const conn = logged(await this.instance.connect(), `lane${++this.lanes}`);
    let queue: Promise<unknown> = Promise.resolve();
    const serial = <T>(fn: () => Promise<T>): Promise<T> => {
      const next = queue.then(fn, fn);
      queue = next.catch(() => undefined);
      return next;
    };
    return {
      exec: (sql, params) => serial(async () => (await conn.run(sql, params)).rowsChanged),
      all: (sql, params) => serial(async () => (await conn.runAndReadAll(sql, params)).getRowObjectsJson()),
      close: async () => {
        await queue;
        conn.closeSync();
      },
      interrupt: () => conn.interrupt(),
    };
  }

  /** Runs one statement (serialized with every other statement of this process). */
  async exec(sql: string, params?: Params): Promise<number> {
    return this.serial(async () => (await this.conn.run(sql, params)).rowsChanged);
  }

  /** Runs a query and returns rows as JSON-compatible objects. */
  async all(sql: string, params?: Params): Promise<Record<string, Json>[]> {
    return this.serial(async () => (await this.conn.runAndReadAll(sql, params)).getRowObjectsJson());
  }

  /** Runs `fn` in one transaction: committed when it returns, rolled back when it throws. */
  async transaction<T>(
    fn: (tx: {
      exec: (sql: string, params?: Params) => Promise<number>;
      all: (sql: string, params?: Params) => Promise<Record<string, Json>[]>;
    }) => Promise<T>,
  ): Promise<T> {
    return this.serial(async () => {
      await this.conn.run('BEGIN TRANSACTION');
      try {
        const result = await fn({
          exec: async (sql, params) => (await this.conn.run(sql, params)).rowsChanged,
          all: async (sql, params) => (await this.conn.runAndReadAll(sql, params)).getRowObjectsJson(),
        });
        await this.conn.run('COMMIT');
        return result;
      } catch (e) {
        await this.conn.run('ROLLBACK').catch(() => undefined);
        throw e;
      }
    });
  }

  /** Interrupts the statement the connection is running, if any: it fails, and its transaction can only roll back. */
  interrupt(): void {
    this.conn.interrupt();
  }

  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.queue.then(fn, fn);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /**
   * Flushes and closes the file. `checkpoint: false` (a run stopped on request) leaves the write-ahead log for the next
   * open to replay, so that closing costs no checkpoint.
   */
  /**
   * A checkpoint on a connection of its own, beside the statements of the others: DuckDB (1.5) checkpoints what is
   * committed while other connections read and commit. Never rejects: a failure, or a stop (`signal`, which interrupts
   * it), leaves the rows to the checkpoint of `close`.
   */
  async checkpointBeside(signal?: AbortSignal): Promise<void> {
    const lane = await this.lane();
    const stop = () => lane.interrupt();
    signal?.addEventListener('abort', stop);
    try {
      await lane.exec('CHECKPOINT');
    } catch {
      // What it did not write, the close's checkpoint writes.
    } finally {
      signal?.removeEventListener('abort', stop);
      await lane.close();
    }
  }

  async close(opts: { readonly checkpoint?: boolean } = {}): Promise<void> {
    await this.queue;
    try {
      if (opts.checkpoint !== false) await this.conn.run('CHECKPOINT');
      else await this.conn.run('PRAGMA disable_checkpoint_on_shutdown');
    } catch {
      // A read-only or already failed connection has nothing to flush.
    }
    this.conn.closeSync();
    this.instance.closeSync();
  }
}
