/**
 * A follower reads what is new. After new blocks and no reorganisation, a run reads the rows added or changed upstream
 * since its last read, not its re-read window again: the oracle is the sandbox's own rows at the two heads, compared
 * row by row. After a reorganisation its walk down the chain finds the last read's block gone, and it reads the window
 * again, exact. A reorganisation deeper than the window leaves the rows before the window as they were read: `verify
 * --values` names them, and `--repair` mends them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { allRows, waitForRequests } from '../support/sandbox-client.ts';

const ETH = 1;
const DATASETS = ['dodoex.swaps', 'dodoex.pairs'];
const ENTITY: Record<string, string> = { 'dodoex.swaps': 'Swap', 'dodoex.pairs': 'Pair' };

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-follow-'));
  // About 3 swaps a block on ethereum (20,000 over a day of 7,200 blocks): an hour's window is some 800 swaps.
  sb = await startSandbox(['--scale', '20000', '--chains', String(ETH), '--history-days', '1']);
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const head = async () => (await sb.control<{ chains: { head: number }[] }>('info')).chains[0]!.head;

/** Rows new or changed upstream between two blocks, per dataset: the sandbox's rows at each, compared as JSON. */
async function changed(from: number, to: number): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const ds of DATASETS) {
    const before = new Map((await allRows(sb, ETH, 'dodoex', ENTITY[ds]!, from)).map((r) => [r.id, JSON.stringify(r)]));
    const after = await allRows(sb, ETH, 'dodoex', ENTITY[ds]!, to);
    out[ds] = after.filter((r) => before.get(r.id) !== JSON.stringify(r)).length;
  }
  return out;
}

/** The rows each dataset's task read in the folder's last run (the ledger's count). */
async function lastRunRows(data: string): Promise<Record<string, number>> {
  const w = await Warehouse.open(data, { readOnly: true });
  try {
    const rows = await w.all(
      `SELECT dataset, rows::INTEGER AS rows FROM _pool_export.run_tasks
       WHERE run_id = (SELECT arg_max(run_id, started_at) FROM _pool_export.runs) ORDER BY dataset`,
    );
    return Object.fromEntries(rows.map((r) => [String(r.dataset), Number(r.rows)]));
  } finally {
    await w.close();
  }
}

/** A data folder with its own config file; `run` exports the two datasets there. */
function folder(name: string, config: Record<string, unknown> = {}) {
  const data = join(dir, name);
  const file = join(dir, `${name}.json`);
  writeFileSync(file, JSON.stringify(config));
  const env = sandboxEnv(sb, data);
  const run = async (...extra: string[]) => {
    const r = await cli(
      ['run', '--config', file, '--chains', 'ethereum', '--datasets', DATASETS.join(','), ...extra],
      env,
    );
    expect(r.code, r.stderr.slice(-2000)).toBe(0);
    return r;
  };
  const exact = async () => (await compareWithSandbox(sb, data, [ETH], DATASETS)).mismatches;
  return { data, file, env, run, exact };
}

describe('a follower', () => {
  it('reads what changed since its last read, and after a reorganisation the window again, exact', async () => {
    const follower = folder('follower');
    // The same runs where no walk is made: the window every time, as every run read before.
    const windowed = folder('windowed', { reorgCheckBlocks: 0 });
    await follower.run();
    await windowed.run();
    for (let i = 0; i < 2; i++) {
      const from = await head();
      await sb.control('advance', { blocks: 10 });
      const fresh = await changed(from, await head());
      expect(fresh['dodoex.swaps'], 'swaps came in the 10 blocks').toBeGreaterThan(0);
      await follower.run();
      await windowed.run();
      const read = await lastRunRows(follower.data);
      const before = await lastRunRows(windowed.data);
      for (const ds of DATASETS) {
        expect(read[ds], `${ds}: every new row is read`).toBeGreaterThanOrEqual(fresh[ds]!);
        expect(read[ds], `${ds}: ${read[ds]} read for ${fresh[ds]} new`).toBeLessThanOrEqual(3 * fresh[ds]! + 100);
      }
      expect(before['dodoex.swaps'], 'the window alone holds more').toBeGreaterThan(3 * fresh['dodoex.swaps']! + 100);
      expect(await follower.exact()).toEqual([]);
    }
    // A reorganisation below the last read's block: the walk finds it gone, and the window is read again.
    await sb.control('advance', { blocks: 5 });
    await sb.control('reorg', { depth: 12 });
    const r = await follower.run('--log-format', 'json');
    expect(await follower.exact()).toEqual([]);
    expect(r.stderr).toMatch(/"event":"reorg-check".*"reverted":[1-9]/);
    expect((await lastRunRows(follower.data))['dodoex.swaps']).toBeGreaterThan(100);
  }, 240_000);

  it('after a first full pass cut short and finished by a later run, reads what changed since the pass began', async () => {
    // Pages of 5 pairs, each committed: a run cut short leaves the pass's checkpoint part way.
    const f = folder('resumed', { pageSize: 5, batchRows: 5, shards: 1, maxAttempts: 1 });
    const args = ['run', '--config', f.file, '--chains', 'ethereum', '--datasets', 'dodoex.pairs'];
    const pairs = await allRows(sb, ETH, 'dodoex', 'Pair');
    expect(pairs.length, 'pages enough to cut the pass').toBeGreaterThan(30);
    await sb.control('faults', { latencyMs: 40 });
    await sb.control('stats', {});
    const running = cli(args, f.env);
    await waitForRequests(sb, 6);
    await sb.control('faults', { faults: 'http500=1' });
    const cut = await running;
    await sb.control('faults', { faults: '', latencyMs: 0 });
    expect(cut.code, 'the first run is cut short').not.toBe(0);
    // Pairs read by the cut run change while the pass waits; the run after finishes it at a new head.
    const began = await head();
    await sb.control('advance', { blocks: 400 });
    expect((await changed(began, await head()))['dodoex.pairs']).toBeGreaterThan(0);
    expect((await cli(args, f.env)).code).toBe(0);
    await sb.control('advance', { blocks: 3 });
    const next = await cli(args, f.env);
    expect(next.code, next.stderr.slice(-2000)).toBe(0);
    expect((await compareWithSandbox(sb, f.data, [ETH], ['dodoex.pairs'])).mismatches).toEqual([]);
  }, 240_000);

  it('after a reorganisation deeper than its window, has the rows before the window as read: verify --values names them and --repair mends them', async () => {
    // A window of one minute: 5 blocks on ethereum.
    const f = folder('shallow', { reorgWindowSecs: 60 });
    await f.run();
    await sb.control('advance', { blocks: 20 });
    await f.run();
    // 40 blocks rewritten, 35 of them before the window.
    await sb.control('reorg', { depth: 40 });
    await f.run();
    const stale = await f.exact();
    expect(stale.map((m) => m.dataset)).toContain('dodoex.swaps');
    const verify = await cli(['verify', '--values', '--chains', 'ethereum', '--datasets', 'dodoex.swaps'], f.env);
    expect(verify.code, verify.stdout + verify.stderr).not.toBe(0);
    expect(verify.stdout + verify.stderr).toMatch(/dodoex\.swaps/);
    const repair = await cli(
      ['verify', '--values', '--repair', '--chains', 'ethereum', '--datasets', 'dodoex.swaps'],
      f.env,
    );
    expect(repair.code, repair.stdout + repair.stderr).toBe(0);
    expect((await f.exact()).filter((m) => m.dataset === 'dodoex.swaps')).toEqual([]);
  }, 240_000);
});
