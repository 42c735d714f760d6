/**
 * The tool without a clone: `npm pack` gives a tarball that `npm install -g` puts into an empty prefix, and the
 * installed `pool-export` then runs from an empty folder, on the machine's own Node (20 here: the package brings its
 * Node 24), with nothing of the repository: `--version`, `sandbox`, and a run against that sandbox.
 */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitForOutput } from '../support/child-output.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The machine's own npm and Node where there are (Debian's, older than the project's), else the ones running here. */
const SYSTEM_BIN = existsSync('/usr/bin/npm') ? '/usr/bin' : undefined;

let dir: string;
let prefix: string;
let empty: string;
/** An environment with the installed package's bin first, the machine's Node next, and nothing of the project's. */
let env: NodeJS.ProcessEnv;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'pool-export-package-'));
  prefix = join(dir, 'prefix');
  empty = join(dir, 'empty');
  mkdirSync(empty);
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('POOL_EXPORT_') && !k.startsWith('npm_')),
  );
  const path = [join(prefix, 'bin'), SYSTEM_BIN ?? join(process.execPath, '..'), '/usr/bin', '/bin'].join(':');
  env = { ...clean, PATH: path };
  // The bundle as `make` built it before the tier: `prepack` would build it again under the other tests' feet.
  const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', dir], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env },
  });
  if (pack.status !== 0) throw new Error(`npm pack: ${pack.stderr}`);
  const tgz = join(dir, `pool-export-${VERSION}.tgz`);
  // From the empty folder, with the machine's npm: the dependencies from npm's cache (the clone's install filled it).
  const install = spawnSync(
    'npm',
    ['install', '-g', '--prefix', prefix, '--prefer-offline', '--no-audit', '--no-fund', tgz],
    { cwd: empty, encoding: 'utf8', env },
  );
  if (install.status !== 0) throw new Error(`npm install -g: ${install.stdout}${install.stderr}`);
}, 600_000);
afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('the packed tool, installed without the repository', () => {
  it('holds the bundle, the SQL and the schemas, and none of the sources or tests', () => {
    const pkg = join(prefix, 'lib', 'node_modules', 'pool-export');
    for (const f of ['bin/pool-export.js', 'dist/bin/pool-export.js', 'dist/bin/page-worker.js', 'sql/internal.sql'])
      expect(existsSync(join(pkg, f)), f).toBe(true);
    for (const f of ['bin/main.ts', 'src/export', 'test', 'bench', 'node_modules/tsx'])
      expect(existsSync(join(pkg, f)), f).toBe(false);
  });

  it('runs from an empty folder: --version, the sandbox, and a run against it, exact in its summary', async () => {
    const version = spawnSync('pool-export', ['--version'], { cwd: empty, encoding: 'utf8', env });
    expect(version.status, version.stderr).toBe(0);
    expect(version.stdout.trim()).toBe(VERSION);
    expect(version.stderr).toBe('');
    const sandbox = spawn('pool-export', ['sandbox', '--port', '0', '--chains', '56', '--scale', '300'], {
      cwd: empty,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    try {
      const printed = await waitForOutput(sandbox, /^ready http:\/\/127\.0\.0\.1:\d+$/m);
      const url = /^ready (\S+)$/m.exec(printed)![1]!;
      const run = spawnSync('pool-export', ['run', '--chains', 'bsc', '--jobs', 'events'], {
        cwd: empty,
        encoding: 'utf8',
        env: {
          ...env,
          POOL_EXPORT_BASE_URL: url,
          POOL_EXPORT_API_KEY: '5a4db0c5e1f0d1e2a3b4c5d6e7f80912',
          POOL_EXPORT_DATA_DIR: join(empty, 'data'),
        },
      });
      expect(run.status, run.stderr).toBe(0);
      expect(run.stdout).toMatch(/^dodoex\.swaps +1 +[1-9]\d* /m);
      expect(run.stdout).toMatch(/no gaps/);
      const report = spawnSync('pool-export', ['query', 'SELECT count(*) AS n FROM reports.volume_daily'], {
        cwd: empty,
        encoding: 'utf8',
        env: { ...env, POOL_EXPORT_DATA_DIR: join(empty, 'data') },
      });
      expect(report.status, report.stderr).toBe(0);
      expect(report.stdout).toMatch(/^ *[1-9]\d*$/m);
    } finally {
      sandbox.kill('SIGTERM');
    }
  }, 180_000);
});
