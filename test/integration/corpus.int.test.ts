/**
 * Every real public schema of the corpus (`../shared/schemas/corpus` beside the repository: 40 schemas from 37
 * repositories, `SOURCES.tsv` names each) in one data folder, as a user of many subgraphs has it: the sandbox serves
 * each, `subgraph add` takes each from its deployment's own files (no schema file), one plain `run` exports them all,
 * and every dataset is compared with the sandbox's rows (count, digest, every typed column) and every lake view with the
 * warehouse, after the backfill and after 100 new blocks and a reorganisation within the re-read window. A small scale
 * keeps `make test` in its budget; `make test-schemas SCHEMAS=../shared/schemas/corpus` runs each in a folder of its
 * own, deeper (real-schemas.int.test.ts). Where the corpus is not there, the file says so and checks nothing.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DATASETS } from '../../src/catalog/catalog.ts';
import { loadConfig } from '../../src/config/config.ts';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';

const CORPUS = resolve(fileURLToPath(new URL('../../..', import.meta.url)), 'shared', 'schemas', 'corpus');
const FILES = existsSync(CORPUS)
  ? readdirSync(CORPUS)
      .filter((f) => f.endsWith('.graphql'))
      .sort()
  : [];
if (!FILES.length) process.stderr.write(`corpus: no ${CORPUS}: the corpus of real schemas is not checked\n`);

/** A subgraph name from a corpus file (`owner--repo--name.graphql` → `c_name`, numbered where two meet). */
function namesOf(files: readonly string[]): Map<string, string> {
  const out = new Map<string, string>();
  for (const f of files) {
    const stem = `c_${basename(f, '.graphql')
      .split('--')
      .at(-1)!
      .toLowerCase()
      .replace(/[^a-z0-9_]+/g, '_')}`.slice(0, 60);
    let name = stem;
    for (let i = 2; [...out.values()].includes(name); i++) name = `${stem}${i}`;
    out.set(f, name);
  }
  return out;
}

const NAMES = namesOf(FILES);
let sb: SandboxProcess;
let dir: string;
let env: Record<string, string>;

describe.skipIf(!FILES.length)(`the corpus of real schemas, from ${CORPUS}, in one data folder`, () => {
  beforeAll(async () => {
    const served = FILES.flatMap((f) => ['--subgraph', `${NAMES.get(f)}=${join(CORPUS, f)}`]);
    sb = await startSandbox(['--scale', '600', '--history-days', '2', '--chains', '1', ...served]);
    dir = mkdtempSync(join(tmpdir(), 'pe-corpus-'));
    // A folder of subgraphs alone: no DODO key, so a plain run takes the subgraphs and nothing of DODO's.
    env = { ...sandboxEnv(sb, join(dir, 'data')), POOL_EXPORT_API_KEY: '' };
  }, 120_000);
  afterAll(async () => {
    await sb?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** Every dataset of the corpus, exact against the sandbox, and the lake's views equal to the warehouse. */
  const exact = async (when: string) => {
    loadConfig({ env });
    const datasets = DATASETS.filter((d) => [...NAMES.values()].includes(d.schema)).map((d) => d.name);
    const cmp = await compareWithSandbox(sb, env.POOL_EXPORT_DATA_DIR!, [1], datasets);
    expect(cmp.mismatches, when).toEqual([]);
    expect(cmp.checked, when).toBe(datasets.length);
    expect(await lakeBehindWarehouse(env.POOL_EXPORT_DATA_DIR!), when).toEqual([]);
  };

  it('adds each schema from its deployment, with no schema file', async () => {
    for (const [file, name] of NAMES) {
      const url = new RegExp(`^subgraph ${name}: (\\S+)$`, 'm').exec(sb.banner)![1]!;
      const added = await cli(['subgraph', 'add', name, '--chain', 'ethereum', '--url', url], env);
      expect(added.code, `${file}: ${added.stderr}`).toBe(0);
    }
    const listed = await cli(['subgraph', 'list'], env);
    expect(listed.stdout.match(/^c_\w+: \d+ entities/gm)).toHaveLength(FILES.length);
  }, 300_000);

  it('exports them all exactly with one plain run', async () => {
    const run = await cli(['run'], env);
    expect(run.code, run.stdout.slice(-3000) + run.stderr.slice(-2000)).toBe(0);
    await exact('after the backfill');
  }, 400_000);

  it("shows the folder by subgraph, and nothing of DODO's: status, datasets, lake ddl", async () => {
    const status = await cli(['status', '--offline'], env);
    expect(status.stdout.match(/^subgraph c_\w+: \d+ datasets on ethereum, most behind /gm)).toHaveLength(FILES.length);
    const datasets = await cli(['datasets'], env);
    expect(datasets.stdout).not.toMatch(/^(dodoex|token|mine|list)\./m);
    expect(datasets.stdout).toMatch(/DODO's 41 datasets are not this folder's/);
    const ddl = await cli(['lake', 'ddl', '--engine', 'duckdb'], env);
    expect(ddl.code).toBe(0);
    expect(ddl.stdout).not.toMatch(/"(dodoex|token|mine|list)"/);
  });

  it('stays exact through 100 new blocks and a reorganisation, with one plain run', async () => {
    await sb.control('advance', { blocks: 100 });
    await sb.control('reorg', { depth: 250 });
    const run = await cli(['run'], env);
    expect(run.code, run.stdout.slice(-3000) + run.stderr.slice(-2000)).toBe(0);
    await exact('after new blocks and a reorganisation');
  }, 400_000);
});
