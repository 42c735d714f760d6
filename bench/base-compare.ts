/**
 * What a DODO-only run costs now against an earlier commit (`--base REF`, by default the last one before subgraphs of
 * any schema), on the demo's data (8 chains, every job, `--scale 5000`, one sandbox for both): the earlier commit's
 * command line is built from its own files (`git archive`, then its own `scripts/build.mjs`) under `.tmp/`, where it
 * finds this checkout's `node_modules`. One backfill, then paired runs on copies of it, the order of each pair
 * alternating: runs with nothing new upstream, then runs after 100 new blocks. For each: the requests the sandbox
 * served (equal, or the change costs requests) and the wall time, as medians and the median of the pairs' ratios.
 *
 *   npx tsx bench/base-compare.ts [--base REF] [--pairs N]      (make bench-base; about 6 minutes)
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN, startSandbox } from '../src/sandbox/spawn.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const arg = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : undefined;
};
/** The last commit before subgraphs of any schema: every DODO path since must cost what it cost there. */
const BASE = arg('base') ?? process.env.BASE ?? 'f9ac50e';
const PAIRS = Number(arg('pairs') ?? 5);

const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const sha = git('rev-parse', '--verify', `${BASE}^{commit}`);
const here = git('rev-parse', 'HEAD');

/** The earlier commit's command line, built once per commit under `.tmp/`. */
function baseBin(): string {
  const tree = join(ROOT, '.tmp', `bench-base-${sha.slice(0, 12)}`);
  const bin = join(tree, 'bin', 'pool-export.js');
  if (!existsSync(join(tree, 'dist', 'bin', 'pool-export.js'))) {
    rmSync(tree, { recursive: true, force: true });
    mkdirSync(tree, { recursive: true });
    execFileSync('bash', ['-c', `git archive ${sha} | tar -x -C ${JSON.stringify(tree)}`], { cwd: ROOT });
    execFileSync(process.execPath, ['scripts/build.mjs'], { cwd: tree, stdio: 'inherit' });
  }
  return bin;
}

const bins = { base: baseBin(), now: BIN };
const sb = await startSandbox(['--scale', '5000', '--now', '2026-11-20T00:00:00Z']);
const root = mkdtempSync(join(tmpdir(), 'pe-base-'));

interface Cost {
  readonly requests: number;
  readonly secs: number;
}

/** One run of every job on `data` by one commit's command line: the requests the sandbox served and the seconds. */
async function run(which: keyof typeof bins, data: string): Promise<Cost> {
  await sb.control('stats', {});
  const t = performance.now();
  const r = spawnSync(process.execPath, [bins[which], 'run', '--log-format', 'json'], {
    env: { ...process.env, POOL_EXPORT_API_KEY: sb.apiKey, POOL_EXPORT_BASE_URL: sb.url, POOL_EXPORT_DATA_DIR: data },
    encoding: 'utf8',
    maxBuffer: 1 << 28,
  });
  const secs = (performance.now() - t) / 1000;
  if (r.status !== 0) throw new Error(`${which}: exit ${r.status}: ${r.stderr.slice(-2000)}`);
  return { requests: (await sb.control<{ requests: number }>('stats')).requests, secs };
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** `PAIRS` pairs of runs, each pair on two fresh copies of `seed`, the order alternating. */
async function pairs(what: string, seed: string): Promise<string> {
  const got: { base: Cost; now: Cost }[] = [];
  for (let i = 0; i < PAIRS; i++) {
    const [a, b] = [join(root, `${what}-${i}-base`), join(root, `${what}-${i}-now`)];
    cpSync(seed, a, { recursive: true });
    cpSync(seed, b, { recursive: true });
    const order: (keyof typeof bins)[] = i % 2 === 0 ? ['base', 'now'] : ['now', 'base'];
    const pair: Partial<Record<keyof typeof bins, Cost>> = {};
    for (const which of order) pair[which] = await run(which, which === 'base' ? a : b);
    got.push(pair as { base: Cost; now: Cost });
    rmSync(a, { recursive: true, force: true });
    rmSync(b, { recursive: true, force: true });
  }
  const req = (k: keyof typeof bins) => [...new Set(got.map((g) => g[k].requests))].join('/');
  const secs = (k: keyof typeof bins) => median(got.map((g) => g[k].secs));
  const ratio = median(got.map((g) => g.now.secs / g.base.secs));
  const [lo, hi] = [
    Math.min(...got.map((g) => g.now.secs / g.base.secs)),
    Math.max(...got.map((g) => g.now.secs / g.base.secs)),
  ];
  return `| ${what} | ${req('base')} | ${req('now')} | ${secs('base').toFixed(2)} s | ${secs('now').toFixed(2)} s | ${ratio.toFixed(3)} (${lo.toFixed(2)}-${hi.toFixed(2)}) |`;
}

try {
  const seed = join(root, 'seed');
  await run('now', seed);
  const lines = [
    `DODO-only runs of every job on 8 chains: ${sha.slice(0, 12)} (base) against ${here.slice(0, 12)} (now), ${PAIRS} pairs each`,
    '',
    '| run | requests, base | requests, now | wall time, base (median) | now (median) | now / base (median of pairs, range) |',
    '|---|---|---|---|---|---|',
    await pairs('nothing new upstream', seed),
  ];
  await sb.control('advance', { blocks: 100 });
  lines.push(await pairs('after 100 new blocks', seed));
  console.log(lines.join('\n'));
} finally {
  await sb.stop();
  rmSync(root, { recursive: true, force: true });
}
