/**
 * Real public subgraph schemas, exported exactly from the sandbox: every `.graphql` file of `../shared/schemas/` beside
 * the repository (Uniswap v3's, Messari's dex-amm, graph-tooling's aggregations example), or of the folder that
 * `POOL_EXPORT_SCHEMAS_DIR` names (`make test-schemas SCHEMAS=dir`), each served by the sandbox (`--subgraph`), added
 * by `subgraph add` from its deployment's own files (no schema file), each into a data folder of its own, run, and
 * compared with the sandbox's own rows (count, digest, every typed column, every
 * value): after the backfill; after 100 new blocks and a reorganisation within the re-read window; after a
 * reorganisation at the same height (no block added), when `verify --values` must find nothing; and after a
 * reorganisation deeper than the window, which the runs cannot see, so `verify --values` must name what the sandbox's
 * rows say differs, and `verify --values --repair` mend it. The schemas are not part of this repository; where neither
 * folder is there, the tier says so and checks nothing here.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { EXIT_GAPS } from '../../src/errors.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

/** The shared schemas beside the repository (`<repo>/../shared/schemas`). */
const SHARED = resolve(fileURLToPath(new URL('../../..', import.meta.url)), 'shared', 'schemas');
const DIR = process.env.POOL_EXPORT_SCHEMAS_DIR ?? (existsSync(SHARED) ? SHARED : undefined);
if (!DIR)
  process.stderr.write(
    `real-schemas: no ${SHARED} and no POOL_EXPORT_SCHEMAS_DIR: the real public schemas are not checked\n`,
  );
const FILES = DIR
  ? readdirSync(DIR)
      .filter((f) => f.endsWith('.graphql'))
      .sort()
  : [];
/** A subgraph name from a file name: `v2.graphql` → `real_v2`. */
const nameOf = (f: string) =>
  `real_${basename(f, '.graphql')
    .split('--')
    .at(-1)!
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_')}`.slice(0, 63);

let sb: SandboxProcess;
let dir: string;

describe.skipIf(FILES.length === 0)(
  `real public schemas, from ${DIR ?? 'nowhere (../shared/schemas is absent)'}`,
  () => {
    beforeAll(async () => {
      const served = FILES.flatMap((f) => ['--subgraph', `${nameOf(f)}=${join(DIR!, f)}`]);
      sb = await startSandbox(['--scale', '3000', '--history-days', '3', '--chains', '1', ...served]);
      dir = mkdtempSync(join(tmpdir(), 'pe-real-schemas-'));
    });
    afterAll(async () => {
      await sb?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it.each(FILES)(
      '%s exports exactly, through new blocks, reorganisations at the same height and deeper than the window, and verify --values --repair',
      async (file) => {
        const name = nameOf(file);
        const data = join(dir, name);
        const env = sandboxEnv(sb, data);
        const url = new RegExp(`^subgraph ${name}: (\\S+)$`, 'm').exec(sb.banner)![1]!;
        const add = await cli(['subgraph', 'add', name, '--chain', 'ethereum', '--url', url], env);
        expect(add.code, add.stderr).toBe(0);
        loadConfig({ env });
        const datasets = DATASETS.filter((d) => d.schema === name).map((d) => d.name);
        const exact = async (when: string) => {
          const cmp = await compareWithSandbox(sb, data, [1], datasets);
          expect(cmp.mismatches, when).toEqual([]);
          expect(cmp.checked, when).toBe(datasets.length);
          expect(await lakeBehindWarehouse(data), when).toEqual([]);
        };
        const runOnce = async (when: string) => {
          const run = await cli(['run', '--subgraphs', name], env);
          expect(run.code, `${when}: ${run.stderr.slice(-2000)}`).toBe(0);
        };
        await runOnce('the backfill');
        await exact('after the backfill');
        // New blocks, and a reorganisation within the re-read window (300 blocks).
        await sb.control('advance', { blocks: 100 });
        await sb.control('reorg', { depth: 250 });
        await runOnce('new blocks and a reorganisation');
        await exact('after new blocks and a reorganisation');
        // A reorganisation at the same height: no block added.
        await sb.control('reorg', { depth: 20 });
        await runOnce('a reorganisation at the same height');
        await exact('after a reorganisation at the same height');
        const clean = await cli(['verify', '--values', '--format', 'json'], env);
        expect(clean.code, clean.stdout.slice(0, 3000) + clean.stderr).toBe(0);
        const report = JSON.parse(clean.stdout) as { checks: { identity: string; skipped?: string; error?: string }[] };
        const compared = report.checks.filter((c) => c.identity === 'row values');
        expect(compared.filter((c) => c.skipped || c.error)).toEqual([]);
        expect(compared).toHaveLength(datasets.length);
        // A reorganisation deeper than the re-read window: a run cannot see it, `verify --values` does.
        await sb.control('advance', { blocks: 10 });
        await sb.control('reorg', { depth: 1200 });
        await runOnce('a reorganisation deeper than the window');
        const stale = await compareWithSandbox(sb, data, [1], datasets);
        const found = await cli(['verify', '--values', '--format', 'json'], env);
        const foundReport = JSON.parse(found.stdout) as { mismatches: { dataset: string }[] };
        // What the sandbox's rows say is stale, verify names: a dataset differs for both or for neither.
        expect(new Set(foundReport.mismatches.map((m) => m.dataset)), found.stderr).toEqual(
          new Set(stale.mismatches.map((m) => m.dataset)),
        );
        expect(found.code).toBe(stale.mismatches.length ? EXIT_GAPS : 0);
        const repaired = await cli(['verify', '--values', '--repair'], env);
        expect(repaired.code, repaired.stdout.slice(-3000) + repaired.stderr).toBe(0);
        await exact('after verify --values --repair');
      },
      300_000,
    );
  },
);
