import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { moveTree } from '../../src/lake/lake-writer.ts';

const dirs: string[] = [];
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'pool-export-move-'));
  dirs.push(root);
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('moving a partitioned write into the lake', () => {
  it('keeps every file of a partition that the writer split, under distinct names', () => {
    const tmp = tree({
      'day=2026-01-01/data_0.parquet': 'a',
      'day=2026-01-01/data_1.parquet': 'b',
      'day=2026-01-02/data_0.parquet': 'c',
    });
    const dest = tree({});
    expect(moveTree(tmp, dest, { base: 'data', replace: true })).toBe(3);
    expect(readdirSync(join(dest, 'day=2026-01-01')).sort()).toEqual(['data-1.parquet', 'data.parquet']);
    expect(readdirSync(join(dest, 'day=2026-01-02'))).toEqual(['data.parquet']);
  });

  it('removes the files of an earlier write of the same day that this write did not renew, and nothing else', () => {
    const dest = tree({
      'day=2026-01-01/data.parquet': 'old',
      'day=2026-01-01/data-1.parquet': 'old',
      'day=2026-01-01/part-x.parquet': 'other',
      'day=2026-01-03/data.parquet': 'untouched',
    });
    const tmp = tree({ 'day=2026-01-01/data_0.parquet': 'new' });
    moveTree(tmp, dest, { base: 'data', replace: true });
    expect(readdirSync(join(dest, 'day=2026-01-01')).sort()).toEqual(['data.parquet', 'part-x.parquet']);
    expect(readdirSync(join(dest, 'day=2026-01-03'))).toEqual(['data.parquet']);
  });
});
