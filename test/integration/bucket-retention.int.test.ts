/**
 * Retention on a bucket lake, against s3rver: four calendar months of list snapshots and of a mutable entity's
 * history (the last four, up to now), published month by month; then a lake step with `lake.keepSnapshotMonths` 2.
 * The bucket, read with the tests' own S3 client, then holds the two most recent months of each, and nothing else of
 * theirs: the older objects are deleted and each table's manifest names exactly the objects listed.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { openBucket, writeLakeStep } from '../../src/pipeline/lake-step.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { bucketEnv, getBytes, listAll, type S3Server, startS3rver, testClient } from '../support/s3-store.ts';

const PREFIX = 'kept';

let s3: S3Server;
let dir: string;

beforeAll(async () => {
  s3 = await startS3rver();
  dir = mkdtempSync(join(tmpdir(), 'pool-export-retention-'));
  // The exporter's bucket takes its endpoint and key from the environment, as it does in a run.
  Object.assign(process.env, bucketEnv(s3.endpoint, `s3://${s3.bucket}/${PREFIX}`));
});
afterAll(async () => {
  await s3?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The last four calendar months, oldest first (`YYYY-MM`, UTC), and a moment on the first day of each. */
function lastFourMonths(): { month: string; at: string }[] {
  const now = new Date();
  return [3, 2, 1, 0].map((back) => {
    const d = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() - back, 1, 0, 0, 10));
    return { month: d.toISOString().slice(0, 7), at: d.toISOString() };
  });
}

describe('retention on a bucket lake', () => {
  it('deletes the objects of the months it no longer keeps, and the manifests name only what is left', async () => {
    const data = join(dir, 'data');
    const w = await Warehouse.open(data);
    const months = lastFourMonths();
    const client = testClient(s3.endpoint);
    try {
      await w.ensureTables([findDataset('list.liquidity')!, findDataset('dodoex.pairs')!]);
      const step = async (keepSnapshotMonths: number | null, runId: string) => {
        const config = loadConfig({
          env: {},
          overrides: { dataDir: data, lake: { url: `s3://${s3.bucket}/${PREFIX}`, keepSnapshotMonths } },
        });
        const bucket = await openBucket(config);
        const events: Record<string, unknown>[] = [];
        try {
          await writeLakeStep(w, config, { bucket, runId, log: (event, f) => events.push({ event, ...f }) });
        } finally {
          bucket?.close();
        }
        return events;
      };
      for (const { month, at } of months) {
        const run = `r${month}`;
        for (const id of ['a', 'b'])
          await w.exec(
            `INSERT INTO list.liquidity (id, chain_id, _run_id, _taken_at) VALUES ($1, 56, $2, $3::TIMESTAMPTZ)`,
            [id, run, at],
          );
        await w.exec(`DELETE FROM dodoex.pairs WHERE id = 'p1'`);
        await w.exec(
          `INSERT INTO dodoex.pairs (id, chain_id, _run_id, _taken_at) VALUES ('p1', 56, $1, $2::TIMESTAMPTZ)`,
          [run, at],
        );
        for (const ds of ['list.liquidity', 'dodoex.pairs'])
          await w.exec(
            `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild) VALUES (56, $1, NULL, $2::VARCHAR[], false)`,
            [ds, `[${run}]`],
          );
        await step(null, run);
      }
      const monthsOf = async (table: string) =>
        (await listAll(client, s3.bucket, `${PREFIX}/${table}/`))
          .map((o) => /month=(\d{4}-\d{2})\//.exec(o.key)?.[1])
          .filter(Boolean)
          .sort();
      const all = months.map((m) => m.month);
      expect(await monthsOf('list/liquidity')).toEqual(all);
      expect(await monthsOf('dodoex/pairs_history')).toEqual(all);

      const events = await step(2, 'r-retention');
      expect(events.find((e) => e.event === 'retention')).toMatchObject({ from: all[2], rows: 4, months: 4 });
      expect(events.find((e) => e.event === 'lake-published')).toMatchObject({ deleted: 4, state: true });
      expect(await monthsOf('list/liquidity')).toEqual(all.slice(2));
      expect(await monthsOf('dodoex/pairs_history')).toEqual(all.slice(2));
      for (const table of ['list/liquidity', 'dodoex/pairs_history']) {
        const listed = (await listAll(client, s3.bucket, `${PREFIX}/${table}/`))
          .filter((o) => o.key.endsWith('.parquet'))
          .map((o) => [o.key.slice(PREFIX.length + 1), o.etag]);
        const manifest = JSON.parse(
          Buffer.from(await getBytes(client, s3.bucket, `${PREFIX}/${table}/_manifest.json`)).toString(),
        ) as { objects: { key: string; etag: string }[] };
        expect(Object.fromEntries(manifest.objects.map((o) => [o.key, o.etag])), table).toEqual(
          Object.fromEntries(listed),
        );
      }
    } finally {
      await w.close();
    }
  }, 120_000);

  it('applies on a local lake too, in the lake step of every run', async () => {
    const data = join(dir, 'local');
    const w = await Warehouse.open(data);
    const months = lastFourMonths();
    try {
      await w.ensureTables([findDataset('list.liquidity')!]);
      for (const { month, at } of months) {
        await w.exec(
          `INSERT INTO list.liquidity (id, chain_id, _run_id, _taken_at) VALUES ('a', 56, $1, $2::TIMESTAMPTZ)`,
          [`r${month}`, at],
        );
      }
      await w.exec(
        `INSERT INTO _pool_export.lake_pending (chain_id, dataset, from_seq, runs, rebuild) VALUES (56, 'list.liquidity', NULL, $1::VARCHAR[], false)`,
        [`[${months.map((m) => `r${m.month}`).join(',')}]`],
      );
      const config = loadConfig({ env: {}, overrides: { dataDir: data, lake: { keepSnapshotMonths: 3 } } });
      const events: Record<string, unknown>[] = [];
      await writeLakeStep(w, config, { bucket: null, runId: 'r', log: (event, f) => events.push({ event, ...f }) });
      expect(events).toEqual([{ event: 'retention', runId: 'r', from: months[1]!.month, rows: 1, months: 1 }]);
      expect(readdirSync(join(data, 'lake', 'list', 'liquidity', 'chain=bsc')).sort()).toEqual(
        months.slice(1).map((m) => `month=${m.month}`),
      );
    } finally {
      await w.close();
    }
  });
});
