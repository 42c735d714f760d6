/**
 * A subgraph's aggregation through SIGKILLs: `pool-export run --subgraphs` as a real process against a real sandbox,
 * killed once the sandbox has served a number of its requests, with hours of new blocks between the kills, so that
 * the first pass down an aggregation (newest first) is interrupted, resumed below its last committed row, and the
 * buckets written above it meanwhile are read by the next passes. Checked against the sandbox's own rows.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, compareWithSandbox, lakeBehindWarehouse, sandboxEnv } from '../support/export-check.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
const HOURS = 'pools.token_price_stats_hour';

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  // 3 days at scale 20,000: 400 price ticks, about 5 an hour, so that the hourly aggregation has some 300 rows.
  sb = await startSandbox([
    '--scale',
    '20000',
    '--history-days',
    '3',
    '--chains',
    '1',
    '--subgraph',
    `pools=${FIXTURE}`,
  ]);
  dir = mkdtempSync(join(tmpdir(), 'pe-subgraph-kills-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

/** The checkpoint cursor of the hourly aggregation, or undefined. */
async function cursorOf(data: string): Promise<Record<string, unknown> | undefined> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows = await w.all('SELECT cursor FROM _pool_export.checkpoints WHERE dataset = $1', [HOURS]);
    return rows[0] ? (JSON.parse(String(rows[0].cursor)) as Record<string, unknown>) : undefined;
  } finally {
    await w.close();
  }
}

describe("a subgraph's aggregation through kills", () => {
  it('ends exact after SIGKILLs inside its first pass, with more than the re-read window of new buckets between them', async () => {
    const data = join(dir, 'kills');
    const env = sandboxEnv(sb, data);
    const url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
    // Pages of 50 rows, each committed: the first pass commits its progress after every page.
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ pageSize: 50, batchRows: 50 }));
    const add = await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url, '--schema', FIXTURE], env);
    expect(add.code, add.stderr).toBe(0);
    const run = ['run', '--subgraphs', 'pools', '--datasets', HOURS, '--config', config];
    const resumed: Record<string, unknown>[] = [];
    // Three runs killed early in the first pass (about 7 pages after the probes), each resuming the last.
    for (const n of [4, 5, 6]) {
      await sb.control('stats', {});
      const r = await cli(run, env, { killWhen: waitForRequests(sb, n) });
      expect(r.signal, r.stderr.slice(-1500)).toBe('SIGKILL');
      const cursor = await cursorOf(data);
      if (cursor?.mode === 'full') resumed.push(cursor);
      // Two hours of ethereum's blocks: new buckets above the interrupted pass, past the hour the runs re-read.
      await sb.control('advance', { blocks: 600 });
    }
    // The kills fell inside the first pass after its commits: the checkpoint holds the row to go on below and the block
    // the pass began at, which stays the same across the resumptions.
    expect(resumed.length, JSON.stringify(resumed)).toBeGreaterThan(0);
    expect(new Set(resumed.map((c) => JSON.stringify(c.began))).size).toBe(1);
    expect((await cursorOf(data))?.mode).toBe('full');
    // The run that finishes the resumed pass leaves the export exact at its own block, the buckets written above the
    // pass since it began included; and so does the next, incremental one.
    for (const when of ['the run that finished the pass', 'the next run']) {
      const r = await cli(run, env);
      expect(r.code, r.stderr).toBe(0);
      loadConfig({ env });
      const cmp = await compareWithSandbox(sb, data, [1], [HOURS]);
      expect(cmp.mismatches, when).toEqual([]);
      expect(cmp.rows).toBeGreaterThan(200);
      expect(await lakeBehindWarehouse(data)).toEqual([]);
      await sb.control('advance', { blocks: 600 });
    }
  }, 240_000);
});
