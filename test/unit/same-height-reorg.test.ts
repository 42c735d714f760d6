/**
 * A reorganisation to the same height (the last blocks replaced, no new block): every entity kind is exact after the
 * next run. An immutable entity without a time (Messari's `Account`: an id alone) is read as mutable ones are, by id;
 * its rows of the replaced blocks are gone upstream, and lingered here until a run with new blocks. Its rows never
 * change, so it keeps no history in the lake (nor does a timeseries); one an earlier version wrote is removed.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

const FIXTURE = fileURLToPath(new URL('../fixtures/subgraphs/every-type.graphql', import.meta.url));
/** Every kind, and an immutable entity with no time, as Messari's `Account`. */
const SCHEMA = `${readFileSync(FIXTURE, 'utf8')}
type Visitor @entity(immutable: true) {
  id: Bytes!
  firstPool: Pool!
}
`;

let sb: SandboxProcess;
let dir: string;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pe-same-height-'));
  const schema = join(dir, 'schema.graphql');
  writeFileSync(schema, SCHEMA);
  sb = await startSandbox(['--scale', '3000', '--chains', '1', '--subgraph', `pools=${schema}`]);
});
afterAll(async () => {
  await sb?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('a reorganisation to the same height', () => {
  it('leaves every entity kind exact after the next run, with no block added', async () => {
    const data = join(dir, 'a');
    const env = sandboxEnv(sb, data);
    const url = /^subgraph pools: (\S+)$/m.exec(sb.banner)![1]!;
    expect((await cli(['subgraph', 'add', 'pools', '--chain', 'ethereum', '--url', url], env)).code).toBe(0);
    const run = ['run', '--subgraphs', 'pools'];
    expect((await cli(run, env)).code).toBe(0);
    loadConfig({ env });
    const names = DATASETS.filter((d) => d.schema === 'pools').map((d) => d.name);
    // The history an earlier version kept of an immutable entity read by id.
    const lake = join(data, 'lake', 'pools');
    mkdirSync(join(lake, 'visitors_history', 'chain=ethereum'), { recursive: true });
    writeFileSync(join(lake, 'visitors_history', 'chain=ethereum', 'old.parquet'), '');
    // Several times, as a reorganisation may create no row of a kind: each at the same height.
    for (let i = 0; i < 2; i++) {
      const before = (await sb.control<{ chains: { head: number }[] }>('info')).chains[0]!.head;
      const reorged = await sb.control<{ chains: { head: number }[] }>('reorg', { depth: 30 });
      expect(reorged.chains[0]!.head).toBe(before);
      const r = await cli(run, env);
      expect(r.code, r.stderr.slice(-2000)).toBe(0);
      expect((await compareWithSandbox(sb, data, [1], names)).mismatches, `reorganisation ${i + 1}`).toEqual([]);
    }
    expect(names).toContain('pools.visitors');
    expect(await lakeBehindWarehouse(data)).toEqual([]);
    // The immutable entity and the timeseries have their rows in the lake and no history; a mutable entity has both.
    const paths = ['visitors', 'visitors_history', 'price_ticks', 'price_ticks_history', 'pools', 'pools_history'];
    expect(paths.filter((p) => existsSync(join(lake, p)))).toEqual([
      'visitors',
      'price_ticks',
      'pools',
      'pools_history',
    ]);
  }, 180_000);
});
