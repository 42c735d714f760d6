/**
 * `pool-export reset DATASET… [--chains] [--yes]`: without `--yes` it says what it would remove and changes nothing;
 * with it, the dataset's rows, checkpoints and lake files on those chains go (the bucket's objects too, for a bucket
 * lake), the other datasets and chains stay as they were, and the next run reads it whole: the export exact again
 * against the sandbox. A misspelt dataset is one line with a suggestion, exit 2.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { bucketEnv, listAll, type S3Server, startS3rver, testClient } from '../support/s3-store.ts';
import { allRows, waitForRequests } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
let s3: S3Server;
let dir: string;

beforeAll(async () => {
  [sb, s3] = await Promise.all([startSandbox(['--scale', '400', '--chains', '56,137']), startS3rver()]);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-reset-'));
});
afterAll(async () => {
  await Promise.all([sb?.stop(), s3?.stop()]);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** Rows per dataset and chain in the warehouse, and the checkpoints. */
async function counts(data: string): Promise<{ rows: Record<string, number>; checkpoints: string[] }> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows: Record<string, number> = {};
    for (const t of ['dodoex.swaps', 'dodoex.pairs'])
      for (const r of await w.all(`SELECT chain_id, count(*) AS n FROM ${t} GROUP BY ALL`))
        rows[`${t}@${r.chain_id}`] = Number(r.n);
    const checkpoints = (
      await w.all(
        "SELECT dataset || '@' || chain_id AS k FROM _pool_export.checkpoints WHERE dataset IN ('dodoex.swaps', 'dodoex.pairs') ORDER BY 1",
      )
    ).map((r) => String(r.k));
    return { rows, checkpoints };
  } finally {
    await w.close();
  }
}

describe('pool-export reset', () => {
  it.each([['a local lake', false] as const, ['a bucket lake', true] as const])(
    'empties a dataset on a chain of %s, the rest untouched, and the next run reads it whole',
    async (_, bucket) => {
      const data = join(dir, bucket ? 'bucket' : 'local');
      const prefix = 'reset-test';
      const env = {
        ...sandboxEnv(sb, data),
        ...(bucket ? bucketEnv(s3.endpoint, `s3://${s3.bucket}/${prefix}`) : {}),
      };
      const run = ['run', '--datasets', 'dodoex.swaps,dodoex.pairs', '--chains', 'bsc,polygon'];
      expect((await cli(run, env)).code).toBe(0);
      const before = await counts(data);
      expect(before.rows['dodoex.swaps@56']).toBeGreaterThan(0);
      const swapFolder = join(data, 'lake', 'dodoex', 'swaps', 'chain=bsc');
      expect(existsSync(swapFolder)).toBe(true);
      const objects = async () =>
        bucket ? (await listAll(testClient(s3.endpoint), s3.bucket, `${prefix}/dodoex/swaps/chain=bsc/`)).length : 0;
      if (bucket) expect(await objects()).toBeGreaterThan(0);

      // Without --yes: what it would remove, and nothing changed.
      const dry = await cli(['reset', 'dodoex.swaps', '--chains', 'bsc'], env);
      expect(dry.code, dry.stderr).toBe(0);
      expect(dry.stdout).toMatch(
        new RegExp(
          `^reset would remove:\\n {2}dodoex\\.swaps on bsc: ${before.rows['dodoex.swaps@56']!.toLocaleString('en-US')} rows, its checkpoint, \\d+ lake files \\([\\d.]+ MB\\)\\nnothing was changed: give --yes`,
        ),
      );
      expect(await counts(data)).toEqual(before);
      expect(existsSync(swapFolder)).toBe(true);

      const done = await cli(['reset', 'dodoex.swaps', '--chains', 'bsc', '--yes'], env);
      expect(done.code, done.stderr).toBe(0);
      expect(done.stdout).toContain('the next run reads them whole');
      const after = await counts(data);
      const { 'dodoex.swaps@56': _gone, ...rest } = before.rows;
      expect(after.rows).toEqual(rest);
      expect(after.checkpoints).toEqual(before.checkpoints.filter((k) => k !== 'dodoex.swaps@56'));
      expect(existsSync(swapFolder)).toBe(false);
      expect(existsSync(join(data, 'lake', 'dodoex', 'swaps', 'chain=polygon'))).toBe(true);
      if (bucket) expect(await objects()).toBe(0);

      // The next run reads it whole: exact again, in the warehouse and the lake.
      expect((await cli(run, env)).code).toBe(0);
      expect((await counts(data)).rows).toEqual(before.rows);
      expect((await compareWithSandbox(sb, data, [56, 137], ['dodoex.swaps', 'dodoex.pairs'])).mismatches).toEqual([]);
      expect(await lakeBehindWarehouse(data)).toEqual([]);
      if (bucket) expect(await objects()).toBeGreaterThan(0);
    },
    240_000,
  );

  it('refuses a misspelt dataset in one line with a suggestion, exit 2, and changes nothing', async () => {
    const data = join(dir, 'local');
    const env = sandboxEnv(sb, data);
    const before = await counts(data);
    const r = await cli(['reset', 'dodoex.swap', '--yes'], env);
    expect(r.code).toBe(2);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/unknown dataset "dodoex\.swap"; did you mean dodoex\.swaps\?/);
    expect(await counts(data)).toEqual(before);
    const none = await cli(['reset', 'dodoex.swaps'], sandboxEnv(sb, join(dir, 'missing')));
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/holds no warehouse: nothing to reset/);
    expect(existsSync(join(dir, 'missing'))).toBe(false);
  });

  /**
   * How a dataset can have been read before the reset: a first backfill in shards (whole, or cut short with its shards'
   * checkpoints left), an incremental run after new blocks (events by their keyset, buckets re-reading the open one,
   * mutable entities by `_change_block`), snapshots kept per block.
   */
  const ways: [string, string, 'shards' | 'cut' | 'incremental'][] = [
    ['a backfill in shards', 'dodoex.swaps', 'shards'],
    ['a backfill in shards cut short, its shards checkpointed', 'dodoex.swaps', 'cut'],
    ['an incremental run of events', 'dodoex.swaps', 'incremental'],
    ['an incremental run of buckets', 'dodoex.pair_day_datas', 'incremental'],
    ['an incremental run of mutable entities', 'dodoex.pairs', 'incremental'],
    ['snapshots', 'dodoex.dodo_zoos', 'incremental'],
  ];
  it.each(ways)(
    'after %s, the next run reads it whole, exactly',
    async (_, dataset, how) => {
      const data = join(dir, `way-${how}-${dataset}`);
      const env = sandboxEnv(sb, data);
      const config = join(dir, `way-${how}.json`);
      writeFileSync(config, JSON.stringify({ pageSize: 25, batchRows: 25, shards: 4, maxAttempts: 2 }));
      const run = ['run', '--chains', 'bsc', '--datasets', dataset, '--config', config, '--log-format', 'json'];
      // A backfill in shards: the dataset takes pages enough for four shards of several pages each.
      if (how !== 'incremental') {
        const swaps = await allRows(sb, 56, 'dodoex', 'Swap');
        expect(swaps.length).toBeGreaterThan(8 * 25);
      }
      if (how === 'cut') {
        // The upstream fails every request once a few pages went through: the shards' checkpoints are left.
        await sb.control('faults', { latencyMs: 40 });
        await sb.control('stats', {});
        const running = cli(run, env);
        await waitForRequests(sb, 8);
        await sb.control('faults', { faults: 'http500=1' });
        const cut = await running;
        await sb.control('faults', { faults: '', latencyMs: 0 });
        expect(cut.code).toBe(1);
        const w = await Warehouse.open(data, { readOnly: true });
        const left = await w.all('SELECT * FROM _pool_export.shard_checkpoints WHERE dataset = $1', [dataset]);
        await w.close();
        expect(left.length).toBeGreaterThan(0);
      } else {
        const first = await cli(run, env);
        expect(first.code, first.stderr.slice(-1000)).toBe(0);
        if (how === 'incremental') {
          await sb.control('advance', { blocks: 60 });
          expect((await cli(run, env)).code).toBe(0);
        }
      }
      const reset = await cli(['reset', dataset, '--chains', 'bsc', '--yes'], env);
      expect(reset.code, reset.stderr).toBe(0);
      const w = await Warehouse.open(data, { readOnly: true });
      try {
        for (const t of ['checkpoints', 'shard_checkpoints'])
          expect(await w.all(`SELECT * FROM _pool_export.${t} WHERE dataset = $1`, [dataset]), t).toEqual([]);
      } finally {
        await w.close();
      }
      const again = await cli(run, env);
      expect(again.code, again.stderr.slice(-1000)).toBe(0);
      expect((await compareWithSandbox(sb, data, [56], [dataset])).mismatches).toEqual([]);
      expect(await lakeBehindWarehouse(data)).toEqual([]);
    },
    120_000,
  );
});
