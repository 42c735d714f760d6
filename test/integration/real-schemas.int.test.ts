/**
 * Real public subgraph schemas, exported exactly from the sandbox: every `.graphql` file of the folder that
 * `POOL_EXPORT_SCHEMAS_DIR` names (`make test-schemas SCHEMAS=dir`), each served by the sandbox (`--subgraph`), added
 * with `subgraph add --schema`, run, and compared with the sandbox's own rows (count, digest, every typed column); then
 * again after 100 new blocks and a reorganisation of 250 blocks. The schemas are not part of this repository: fetch the
 * ones to check (for example Uniswap/v2-subgraph `src/v2/schema.graphql`, Uniswap/v3-subgraph `src/v3/schema.graphql`).
 * Without the variable, the tier says so and checks nothing here.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, compareWithSandbox, lakeBehindWarehouse, sandboxEnv } from '../support/export-check.ts';

const DIR = process.env.POOL_EXPORT_SCHEMAS_DIR;
const FILES = DIR
  ? readdirSync(DIR)
      .filter((f) => f.endsWith('.graphql'))
      .sort()
  : [];
/** A subgraph name from a file name: `v2.graphql` → `real_v2`. */
const nameOf = (f: string) =>
  `real_${basename(f, '.graphql')
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')}`;

let sb: SandboxProcess;
let dir: string;

describe.skipIf(FILES.length === 0)('real public schemas, from POOL_EXPORT_SCHEMAS_DIR', () => {
  beforeAll(async () => {
    const served = FILES.flatMap((f) => ['--subgraph', `${nameOf(f)}=${join(DIR!, f)}`]);
    sb = await startSandbox(['--scale', '10000', '--history-days', '3', '--chains', '1', ...served]);
    dir = mkdtempSync(join(tmpdir(), 'pe-real-schemas-'));
  });
  afterAll(async () => {
    await sb?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it.each(FILES)(
    '%s exports exactly, and stays exact after 100 new blocks and a reorganisation',
    async (file) => {
      const name = nameOf(file);
      const data = join(dir, name);
      const env = sandboxEnv(sb, data);
      const url = new RegExp(`^subgraph ${name}: (\\S+)$`, 'm').exec(sb.banner)![1]!;
      const add = await cli(
        ['subgraph', 'add', name, '--chain', 'ethereum', '--url', url, '--schema', join(DIR!, file)],
        env,
      );
      expect(add.code, add.stderr).toBe(0);
      loadConfig({ env });
      const datasets = DATASETS.filter((d) => d.schema === name).map((d) => d.name);
      for (const when of ['after the backfill', 'after new blocks and a reorganisation']) {
        const run = await cli(['run', '--subgraphs', name], env);
        expect(run.code, `${when}: ${run.stderr.slice(-2000)}`).toBe(0);
        const cmp = await compareWithSandbox(sb, data, [1], datasets);
        expect(cmp.mismatches, when).toEqual([]);
        expect(cmp.checked, when).toBe(datasets.length);
        expect(await lakeBehindWarehouse(data)).toEqual([]);
        await sb.control('advance', { blocks: 100 });
        await sb.control('reorg', { depth: 250 });
      }
    },
    300_000,
  );
});
