/**
 * A subgraph's aggregation through a SIGKILL: `pool-export run --subgraphs` as a real process against a real sandbox,
 * killed once the sandbox has served a number of its requests, then hours of new blocks, so that the first pass down
 * an aggregation (newest first) is interrupted, resumed below its last committed row, and the buckets written above it
 * meanwhile are read by the run that finishes it. Checked against the sandbox's own rows.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
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
  it('ends exact after a SIGKILL inside its first pass, with more than the re-read window of new buckets after it', async () => {
    const url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
    // Pages of 50 rows, each committed: the first pass commits its progress after every page.
    const config = join(dir, 'config.json');
    writeFileSync(config, JSON.stringify({ pageSize: 50, batchRows: 50 }));
    const run = ['run', '--subgraphs', 'pools', '--datasets', HOURS, '--config', config];
    // A first pass killed once the sandbox has served n of its requests (about 7 pages after the probes), from a new
    // folder each time, n growing until a kill falls after one of the pass's commits, however busy the machine.
    let data = '';
    let env: Record<string, string> = {};
    let resumed: Record<string, unknown> | undefined;
    for (let n = 4; n <= 16 && !resumed; n++) {
      data = join(dir, `kills-${n}`);
      env = sandboxEnv(sb, data);
      const add = await cli(
        ['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url, '--schema', FIXTURE],
        env,
      );
      expect(add.code, add.stderr).toBe(0);
      await sb.control('stats', {});
      const r = await cli(run, env, { killWhen: waitForRequests(sb, n) });
      expect(r.signal === 'SIGKILL' || r.code === 0, r.stderr.slice(-1500)).toBe(true);
      const cursor = await cursorOf(data);
      if (r.signal === 'SIGKILL' && cursor?.mode === 'full') resumed = cursor;
    }
    // The checkpoint holds the row to go on below and the block the pass began at.
    expect(resumed, 'no kill fell inside the first pass after a commit').toMatchObject({
      mode: 'full',
      began: { block: expect.any(Number) },
    });
    // Two hours of ethereum's blocks: new buckets above the interrupted pass, past the hour the runs re-read.
    await sb.control('advance', { blocks: 600 });
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
