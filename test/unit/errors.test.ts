/** Error classes: exit codes, ledger classes, a full disk and DuckDB's memory running out recognised and explained. */
import { DuckDBInstance } from '@duckdb/node-api';
import { describe, expect, it } from 'vitest';
import {
  ConcurrentWriterError,
  DataLockedError,
  diskFullMessage,
  errorClass,
  exitCodeOf,
  explainWriteError,
  GarbageError,
  isDiskFull,
  isOutOfMemory,
  MigrationNeededError,
  StopRequested,
  TaskError,
  UpstreamError,
  UsageError,
} from '../../src/errors.ts';

const enospc = Object.assign(new Error('write failed'), { code: 'ENOSPC' });
const duckFull = new Error('IO Error: Could not write file "x": No space left on device');

describe('errors', () => {
  it('bad usage (ours or yargs) exits 2, anything else 1', () => {
    expect(exitCodeOf(new UsageError('x'))).toBe(2);
    expect(exitCodeOf(Object.assign(new Error('y'), { name: 'YError' }))).toBe(2);
    expect(exitCodeOf(new Error('z'))).toBe(1);
    expect(exitCodeOf(undefined)).toBe(1);
    expect(exitCodeOf('text')).toBe(1);
  });

  it('a full disk is recognised by code or by message, and explained with the folder and the fix', () => {
    expect(isDiskFull(enospc)).toBe(true);
    expect(isDiskFull(duckFull)).toBe(true);
    expect(isDiskFull(new Error('enospc somewhere'))).toBe(true);
    expect(isDiskFull(new Error('disk is fine'))).toBe(false);
    expect(isDiskFull(undefined)).toBe(false);
    expect(diskFullMessage('/d', enospc)).toBe(
      'the disk holding the data folder /d is full (write failed); free space there, or point --data-dir at a folder on another disk, and run again: batches committed before are kept and the next run resumes from them',
    );
    const at = { dataDir: '/d', duckdbMemoryLimit: '256MB', duckdbMemoryLimitFrom: 'the configuration' };
    expect(explainWriteError(at, duckFull)).toBe(diskFullMessage('/d', duckFull));
    expect(explainWriteError(at, new Error('other'))).toBe('other');
  });

  it("DuckDB's own out-of-memory error becomes one line naming duckdbMemoryLimit, its figure and its source", async () => {
    // DuckDB's real error: an in-memory database cannot spill, so a list of 20,000,000 integers cannot fit in 16MB.
    const db = await DuckDBInstance.create(':memory:', { memory_limit: '16MB' });
    const conn = await db.connect();
    const oom = await conn.run('SELECT list(range) AS l FROM range(20000000)').catch((e: Error) => e);
    conn.closeSync();
    db.closeSync();
    expect(oom).toBeInstanceOf(Error);
    // What DuckDB says: its figures on the first line, then advice in SQL on the lines after.
    expect((oom as Error).message).toMatch(/^Out of Memory Error: .*\(\d+(\.\d+)? [KM]iB\/\d+(\.\d+)? MiB used\)\n/);
    expect(isOutOfMemory(oom)).toBe(true);
    expect(isOutOfMemory(new Error('DuckDB needed more memory (Out of Memory Error: x)'))).toBe(false);
    const at = {
      dataDir: '/d',
      duckdbMemoryLimit: '204MiB',
      duckdbMemoryLimitFrom: "auto: 40% of the control group's memory limit, 512 MiB",
    };
    const line = explainWriteError(at, oom);
    expect(line).not.toMatch(/[\n\r]|SET |Possible solutions/);
    expect(line).toMatch(
      /^DuckDB ran out of memory under duckdbMemoryLimit 204MiB \(auto: 40% of the control group's memory limit, 512 MiB\): failed to allocate .* MiB used\); set duckdbMemoryLimit in the config file to more \(e\.g\. "1GB"\)/,
    );
  });

  it('the ledger class: upstream kind, stopped, disk-full, else the class name; a task error by its cause', () => {
    const up = new UpstreamError('m', { kind: 'rate-limit', retryable: true, status: 429, retryAfterMs: 5 });
    expect(errorClass(up)).toBe('upstream-rate-limit');
    expect(errorClass(new StopRequested())).toBe('stopped');
    expect(errorClass(enospc)).toBe('disk-full');
    expect(errorClass(new ConcurrentWriterError('dodoex.swaps', 56))).toBe('ConcurrentWriterError');
    expect(errorClass(new TaskError(up, { stats: {}, cursorBefore: null }))).toBe('upstream-rate-limit');
    expect(errorClass(new TaskError(new TypeError('t'), { stats: {}, cursorBefore: null }))).toBe('TypeError');
    expect(errorClass(undefined)).toBe('Error');
    expect(up.extra).toEqual({ status: 429, retryAfterMs: 5 });
    expect(up.cause).toBeUndefined();
    const cause = new Error('inner');
    expect(new UpstreamError('m', { kind: 'network', retryable: true, cause }).cause).toBe(cause);
  });

  it('messages name what and where, and the fix', () => {
    const t = new TaskError('plain', { stats: { rows: 3 }, cursorBefore: '9' });
    expect([t.message, t.name, t.progress.cursorBefore]).toEqual(['plain', 'TaskError', '9']);
    expect(new TaskError(new Error('inner'), { stats: {}, cursorBefore: null }).message).toBe('inner');
    const g = new GarbageError(
      { dataset: 'dodoex.pairs', chainId: 56, chain: 'bsc', field: 'tvl' },
      'not a number',
      'Fix.',
    );
    expect(g.message).toBe(
      'upstream sent invalid data for dodoex.pairs on bsc (chain 56), field "tvl": not a number. Fix.',
    );
    expect([g.name, g.dataset, g.chainId, g.field]).toEqual(['GarbageError', 'dodoex.pairs', 56, 'tvl']);
    expect(new ConcurrentWriterError('dodoex.swaps', 56).message).toBe(
      'the checkpoint of dodoex.swaps on chain 56 was changed by another process during this run; make sure only one pool-export run uses this data folder',
    );
    expect(new DataLockedError('/d', 'pid 1').name).toBe('DataLockedError');
    const m = new MigrationNeededError('/d/w.duckdb', { found: 1, needed: 2 });
    expect(m.name).toBe('MigrationNeededError');
    expect(m.message).toContain('(schema version 1; this one needs 2); run `pool-export migrate`');
    expect(new StopRequested().message).toBe('stopped on request');
    expect(new UsageError('u').name).toBe('UsageError');
  });
});
