/**
 * The free-space check before a run with a DuckDB memory limit: the rule, its message, and the free space it reads
 * (checked against `df`, another reader of the same file system).
 */
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { describe, expect, it } from 'vitest';
import { freeBytes, MIN_SPILL_BYTES, spillSpaceProblem } from '../../src/store/spill-space.ts';

const GiB = 1024 ** 3;

describe('the room a run needs to spill', () => {
  it('asks for 1 GiB free when a memory limit is set, and nothing without one', () => {
    expect(MIN_SPILL_BYTES).toBe(GiB);
    const at = { dataDir: '/data/pe', memoryLimit: '256MB' };
    expect(spillSpaceProblem(at, GiB)).toBeUndefined();
    expect(spillSpaceProblem(at, 5 * GiB)).toBeUndefined();
    expect(spillSpaceProblem({ ...at, memoryLimit: '' }, 0)).toBeUndefined();
    expect(spillSpaceProblem(at, GiB - 1)).toBe(
      'the data folder /data/pe has 1,073,741,823 bytes free; a run needs at least 1024 MiB there, since DuckDB writes ' +
        'what does not fit in duckdbMemoryLimit (256MB) to that disk. Free space there, point --data-dir at a folder on ' +
        'a larger disk, or set duckdbMemoryLimit to "" (DuckDB then holds the data in memory, up to 80% of RAM)',
    );
    expect(spillSpaceProblem(at, 300 * 1024 ** 2)).toContain('has 300 MiB free');
  });

  it('reads the free space df reports for the same folder', () => {
    const df = Number(execFileSync('df', ['-B1', '--output=avail', tmpdir()], { encoding: 'utf8' }).split('\n')[1]);
    // Other processes write to the disk meanwhile: within 64 MiB.
    expect(Math.abs(freeBytes(tmpdir()) - df)).toBeLessThan(64 * 1024 ** 2);
  });
});
