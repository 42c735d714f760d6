/**
 * Writes a fixture of test/support/migration-fixture.ts (`warehouse` or `lake`): a data folder (warehouse, lake, views
 * file) written by pool-export at an earlier commit, against this checkout's sandbox: a backfill, new blocks, an
 * incremental run, and for the warehouse fixture a compaction. Run it from a git checkout with node_modules installed:
 * `npx tsx scripts/make-migration-fixture.ts warehouse|lake`.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSandbox } from '../src/sandbox/spawn.ts';
import { FIXTURE_ADVANCE, FIXTURE_SANDBOX_FLAGS, FIXTURES } from '../test/support/migration-fixture.ts';

const which = process.argv[2] as keyof typeof FIXTURES;
const fixture = FIXTURES[which];
if (!fixture) throw new Error(`name the fixture to write: ${Object.keys(FIXTURES).join(' or ')}`);

const root = resolve(fileURLToPath(new URL('..', import.meta.url)));
const work = mkdtempSync(join(tmpdir(), 'pool-export-fixture-'));
const old = join(work, 'old');
const data = join(work, 'data');
execFileSync('git', ['-C', root, 'worktree', 'add', '--detach', old, fixture.commit], { stdio: 'inherit' });
symlinkSync(join(root, 'node_modules'), join(old, 'node_modules'));
const sb = await startSandbox(FIXTURE_SANDBOX_FLAGS);
try {
  const env = {
    ...process.env,
    POOL_EXPORT_API_KEY: sb.apiKey,
    POOL_EXPORT_BASE_URL: sb.url,
    POOL_EXPORT_DATA_DIR: data,
    POOL_EXPORT_DEVELOPER_ID: 'fixture',
  };
  const cli = (...args: string[]) => {
    const r = spawnSync(process.execPath, [join(old, 'bin/pool-export.js'), ...args], { env, encoding: 'utf8' });
    process.stdout.write(r.stdout.split('\n').slice(-4).join('\n'));
    if (r.status !== 0) throw new Error(`${args.join(' ')} exited ${r.status}: ${r.stderr.slice(-2000)}`);
  };
  cli('run', '--chains', 'bsc');
  await sb.control('advance', { blocks: FIXTURE_ADVANCE });
  cli('run', '--chains', 'bsc');
  if (fixture.compact) cli('compact');
  execFileSync('tar', [
    '-C',
    data,
    '--exclude',
    '.lock*',
    '--exclude',
    '.tmp',
    '-czf',
    fileURLToPath(fixture.file),
    '.',
  ]);
  process.stdout.write(`\nwrote ${fileURLToPath(fixture.file)}\n`);
} finally {
  await sb.stop();
  execFileSync('git', ['-C', root, 'worktree', 'remove', '--force', old]);
  rmSync(work, { recursive: true, force: true });
}
