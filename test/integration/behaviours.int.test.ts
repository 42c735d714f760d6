/**
 * Behaviours that had no test of their own: `confirmations` pins an older block, an incremental run leaves the lake's
 * older day files untouched, and the table format shows the rows the JSON format gives.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findDataset } from '../../src/catalog/catalog.ts';
import { chainDir } from '../../src/lake/layout.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { query } from '../support/sandbox-client.ts';

let sb: SandboxProcess;
let dir: string;
beforeAll(async () => {
  sb = await startSandbox(['--scale', '1500', '--chains', '56']);
  dir = mkdtempSync(join(tmpdir(), 'pool-export-behaviours-'));
});
afterAll(async () => {
  await sb?.stop();
  rmSync(dir, { recursive: true, force: true });
});

const SWAPS = findDataset('dodoex.swaps')!;

async function head(): Promise<number> {
  return (await query(sb, 56, 'dodoex', '{ _meta { block { number } } }'))._meta.block.number as number;
}

async function checkpointBlock(data: string): Promise<number> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const r = await w.all(
      "SELECT block FROM _pool_export.checkpoints WHERE chain_id = 56 AND dataset = 'dodoex.swaps'",
    );
    return Number(r[0]!.block);
  } finally {
    await w.close();
  }
}

/** Each Parquet file under a folder, with its content hash and modification time. */
function files(root: string): Map<string, { hash: string; mtimeMs: number }> {
  const out = new Map<string, { hash: string; mtimeMs: number }>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else if (n.endsWith('.parquet'))
        out.set(p.slice(root.length), {
          hash: createHash('sha256').update(readFileSync(p)).digest('hex'),
          mtimeMs: statSync(p).mtimeMs,
        });
    }
  };
  walk(root);
  return out;
}

describe('behaviours', () => {
  it('confirmations: every task reads at the head less that many blocks, and the copy is exact there', async () => {
    const data = join(dir, 'confirmations');
    const config = join(dir, 'confirmations.json');
    writeFileSync(config, JSON.stringify({ confirmations: 7 }));
    const at = await head();
    const r = await cli(['run', '--datasets', 'dodoex.swaps', '--config', config], sandboxEnv(sb, data));
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(await checkpointBlock(data)).toBe(at - 7);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
    // Without the setting, the head itself.
    const plain = join(dir, 'no-confirmations');
    expect((await cli(['run', '--datasets', 'dodoex.swaps'], sandboxEnv(sb, plain))).code).toBe(0);
    expect(await checkpointBlock(plain)).toBe(await head());
  }, 120_000);

  it("an incremental run rewrites only the files of the re-read window's months; older months stay byte for byte", async () => {
    const data = join(dir, 'days');
    const env = sandboxEnv(sb, data);
    expect((await cli(['run', '--datasets', 'dodoex.swaps'], env)).code).toBe(0);
    const root = chainDir(join(data, 'lake'), { ds: SWAPS, chainId: 56 }, 'data');
    const before = files(root);
    expect(before.size).toBeGreaterThanOrEqual(3);
    // Two hours of new blocks: the run re-reads one hour before its checkpoint (reorgWindowSecs), so only the last
    // month or two can change.
    await sb.control('advance', { blocks: 2400 });
    expect((await cli(['run', '--datasets', 'dodoex.swaps'], env)).code).toBe(0);
    const after = files(root);
    const months = [...before.keys()].sort();
    const old = months.slice(0, -2);
    expect(old.length).toBeGreaterThanOrEqual(1);
    for (const f of old) expect(after.get(f), f).toEqual(before.get(f));
    // The run did write: some file is new or rewritten.
    expect([...after].some(([f, v]) => before.get(f)?.hash !== v.hash)).toBe(true);
    expect((await compareWithSandbox(sb, data, [56], ['dodoex.swaps'])).mismatches).toEqual([]);
  }, 120_000);

  it('the table format shows the rows and columns the JSON format gives, in the same order', async () => {
    const data = join(dir, 'table');
    const env = sandboxEnv(sb, data);
    expect((await cli(['run', '--datasets', 'dodoex.swaps'], env)).code).toBe(0);
    const sql = 'SELECT id, _exact.timestamp AS timestamp_text FROM dodoex.swaps ORDER BY timestamp_text, id LIMIT 12';
    const json = await cli(['query', sql, '--format', 'json'], env);
    const table = await cli(['query', sql, '--format', 'table'], env);
    expect(json.code, json.stderr).toBe(0);
    expect(table.code, table.stderr).toBe(0);
    const rows = JSON.parse(json.stdout) as { id: string; timestamp_text: string }[];
    expect(rows).toHaveLength(12);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+timestamp_text\s*$/);
    const body = lines.filter((l) => /^0x/.test(l));
    expect(body).toHaveLength(12);
    body.forEach((l, i) => {
      const [id, ts] = l.trim().split(/\s+/) as [string, string];
      // A cell too wide for the terminal is cut, and says so with an ellipsis.
      const shown = id.endsWith('…') ? `${rows[i]!.id.slice(0, id.length - 1)}…` : rows[i]!.id;
      expect([id, ts]).toEqual([shown, rows[i]!.timestamp_text]);
      expect(id.length).toBeGreaterThan(20);
    });
  }, 60_000);
});
