/** The export under upstream faults: exact after retries, and a clear stop with a safe checkpoint when faults persist. */
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { events } from '../../jobs/events.ts';
import { startSandbox, type SandboxProcess } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, compareWithSandbox, lakeBehindWarehouse, sandboxEnv } from '../support/export-check.ts';

let sb: SandboxProcess;
let dir: string;
let config: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '1500', '--chains', '56', '--fault-seed', '11']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-faults-'));
  // Short time-outs so that held requests cost seconds, not minutes; small pages so that there are many requests.
  config = join(dir, 'config.json');
  writeFileSync(config, JSON.stringify({ timeoutMs: 1500, pageSize: 200, maxAttempts: 10 }));
}, 60_000);
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

function filesUnder(root: string): string[] {
  return readdirSync(root).flatMap((n) => (statSync(join(root, n)).isDirectory() ? filesUnder(join(root, n)) : [join(root, n)]));
}

describe('upstream faults', () => {
  it('completes a backfill exactly through 500s, time-outs, truncated bodies, resets, GraphQL errors and 429 bursts', async () => {
    const data = join(dir, 'ok');
    await sb.control('faults', { faults: 'http500=0.05,timeout=0.02,truncate=0.01,reset=0.01,graphql=0.01,burst429=0.01' });
    await sb.control('stats', {});
    const r = await cli(['run', '--chains', 'bsc', '--jobs', 'events', '--config', config], sandboxEnv(sb, data));
    const stats = await sb.control<{ faults: Record<string, number>; requests: number }>('stats');
    await sb.control('faults', { faults: '' });
    expect(r.code, r.stdout + r.stderr).toBe(0);
    const injected = Object.values(stats.faults).reduce((a, b) => a + b, 0);
    expect(injected).toBeGreaterThan(5);
    expect(Object.keys(stats.faults).length).toBeGreaterThanOrEqual(4);
    const retries = Number(/(\d+) retries/.exec(r.stdout)![1]);
    expect(retries).toBeGreaterThanOrEqual(injected - 8);
    expect((await compareWithSandbox(sb, data, [56], events.datasets)).mismatches).toEqual([]);
    for (const f of filesUnder(data)) expect(readFileSync(f).includes(Buffer.from(sb.apiKey)), f).toBe(false);
    expect(r.stdout + r.stderr).not.toContain(sb.apiKey);
  }, 240_000);

  it('stops a task with a clear error when the upstream keeps failing, with its checkpoint at the last good batch', async () => {
    const data = join(dir, 'down');
    const env = sandboxEnv(sb, data);
    const perPage = join(dir, 'per-page.json');
    writeFileSync(perPage, JSON.stringify({ timeoutMs: 1500, pageSize: 100, batchRows: 100, maxAttempts: 3 }));
    await sb.control('faults', { latencyMs: 60 });
    const running = cli(['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', perPage], env);
    await new Promise((r) => setTimeout(r, 2500));
    await sb.control('faults', { faults: 'http500=1' });
    const r = await running;
    await sb.control('faults', { faults: '', latencyMs: 0 });
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/FAILED dodoex\.swaps on bsc: HTTP 500: Internal Server Error from http:\/\/127\.0\.0\.1:\d+\/subgraph\/graphql\?chainId=56&schemaName=dodoex&apikey=\*\*\* \(gave up after 3 attempts\)/);
    expect(r.stdout + r.stderr).not.toContain(sb.apiKey);
    const w = await Warehouse.open(data, { readOnly: true });
    const cp = JSON.parse(String((await w.all("SELECT cursor FROM _pool_export.checkpoints WHERE dataset = 'dodoex.swaps'"))[0]!.cursor)) as { seq: string; id: string };
    const rows = await w.all('SELECT timestamp_text AS ts, id FROM dodoex.swaps');
    await w.close();
    // Every committed row is at or before the checkpoint, and the checkpoint is the last committed row.
    const key = (x: Record<string, unknown>) => [BigInt(String(x.ts)), String(x.id)] as const;
    const after = rows.filter((x) => { const [t, i] = key(x); return t > BigInt(cp.seq) || (t === BigInt(cp.seq) && i > cp.id); });
    expect(rows.length).toBeGreaterThan(0);
    expect(after).toEqual([]);
    expect(rows.some((x) => String(x.id) === cp.id)).toBe(true);
    expect((await cli(['run', '--chains', 'bsc', '--datasets', 'dodoex.swaps', '--config', config], env)).code).toBe(0);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
    // The rows the failed run committed reached the lake too, with the re-run's.
    expect(await lakeBehindWarehouse(data)).toEqual([]);
  }, 240_000);
});
