/**
 * Lists of references of any length, as graph-node answers them: a nested collection of the rows a list names, by
 * id, its default `first` 100. The sandbox serves rows whose lists hold 0 to 3, 100, 101 and 260 references; the
 * export holds every list whole, in graph-node's order (the referenced rows' ids, ascending), and says nothing cut.
 * The oracle is the sandbox's stored lists (`/_sandbox/rows`), sorted here.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox } from '../support/export-check.ts';
import { allRows } from '../support/sandbox-client.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  sb = await startSandbox(['--scale', '10000', '--chains', '1', '--subgraph', `pools=${FIXTURE}`]);
  dir = mkdtempSync(join(tmpdir(), 'pe-long-lists-'));
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('lists of references of any length', () => {
  it('exports every list whole, in the order graph-node answers it', async () => {
    const data = join(dir, 'a');
    const env = sandboxEnv(sb, data);
    const url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
    expect((await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url], env)).code).toBe(0);
    const run = await cli(['run', '--subgraphs', 'pools'], env);
    expect(run.code, run.stderr.slice(-2000)).toBe(0);
    loadConfig({ env });
    const cmp = await compareWithSandbox(
      sb,
      data,
      [1],
      DATASETS.filter((d) => d.schema === 'pools').map((d) => d.name),
    );
    expect(cmp.mismatches).toEqual([]);
    const w = await Warehouse.open(data, { readOnly: true });
    try {
      const rows = await w.all('SELECT id, recent_events, _block FROM pools.pools');
      const upstream = new Map((await allRows(sb, 1, 'pools', 'Pool', Number(rows[0]!._block))).map((r) => [r.id, r]));
      const lengths = new Set<number>();
      for (const r of rows) {
        const mine = (r.recent_events as string[] | null) ?? null;
        const theirs = upstream.get(String(r.id))!.recentEvents as string[] | null;
        expect(mine, String(r.id)).toEqual(theirs === null ? null : [...theirs].sort());
        if (theirs) lengths.add(theirs.length);
      }
      for (const n of [0, 1, 100, 101, 260]) expect(lengths.has(n), `a list of ${n}`).toBe(true);
    } finally {
      await w.close();
    }
  }, 240_000);
});
