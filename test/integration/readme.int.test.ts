/**
 * The README's examples and its guide's (`docs/`), run as a new user would: `make demo`, then every block marked
 * `<!-- example: after-demo -->` in order, in one shell, from the project's folder; then the sandbox session of "The sandbox by hand" (the serve
 * block in the background, the client block in a second shell). And signals through the documented start forms: a
 * direct `node bin/pool-export.js` (systemd, cron, containers) and `npx`, whose own pid is what a user kills.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type SandboxProcess, startSandbox } from '../../src/sandbox/spawn.ts';
import { Warehouse } from '../../src/store/warehouse.ts';
import { processAlive } from '../../src/util/processes.ts';
import { waitForOutput } from '../support/child-output.ts';
import { waitForRequests } from '../support/sandbox-client.ts';
import { inTerminal, screen } from '../support/terminal.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
/**
 * The README and the guide's pages it links (`docs/`), in the order it lists them: their examples run in that order, as
 * a reader who follows the guide would run them.
 */
const README = (() => {
  const front = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const pages = [...new Set([...front.matchAll(/\]\((docs\/[\w-]+\.md)\)/g)].map((m) => m[1]!))];
  return [front, ...pages.map((p) => readFileSync(join(ROOT, p), 'utf8'))].join('\n');
})();

/** The sh blocks that follow a `<!-- example: KIND -->` marker, in order. */
function examples(kind: string): string[] {
  return [...README.matchAll(new RegExp(`<!-- example: ${kind} -->\\n\`\`\`sh\\n([\\s\\S]*?)\`\`\``, 'g'))].map(
    (m) => m[1]!,
  );
}

/** The environment of a new shell: no pool-export settings from the test's own. */
function cleanEnv(): NodeJS.ProcessEnv {
  return Object.fromEntries(
    Object.entries(process.env).filter(([k]) => !k.startsWith('POOL_EXPORT_') && !k.startsWith('npm_')),
  );
}

/** A clean environment with a key, for commands that need one but reach no upstream here. */
const keyed = () => ({ ...cleanEnv(), POOL_EXPORT_API_KEY: 'not-used-here' });

/**
 * Runs the lines of a block in one bash session from the project's folder; each command's output is cut out by a
 * marker, and the first failing command stops the block.
 */
async function runBlock(
  block: string,
): Promise<{ code: number | null; outputs: { command: string; output: string }[]; stderr: string }> {
  const commands = block
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const script = commands.map((c, i) => `echo "::: ${i}"\n${c} || { echo "::: failed $?"; exit 1; }`).join('\n');
  const r = await run('bash', ['-c', script]);
  const parts = r.stdout.split(/^::: (\d+)\n/m);
  const outputs = commands.map((command, i) => ({ command, output: parts[parts.indexOf(String(i)) + 1] ?? '' }));
  return { code: r.code, outputs, stderr: r.stderr };
}

/** Runs a command from the project's folder in a clean environment, without blocking the test worker. */
function run(program: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(program, args, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Waits until a process is gone, or the time is up. */
async function gone(pid: number, timeoutMs = 10_000): Promise<boolean> {
  for (const until = Date.now() + timeoutMs; Date.now() < until; await new Promise((r) => setTimeout(r, 100)))
    if (!processAlive(pid)) return true;
  return false;
}

afterAll(() => {
  for (const p of ['vol.csv', 'data/sandbox']) rmSync(join(ROOT, p), { recursive: true, force: true });
});

describe('the README, as a new user follows it', () => {
  it('make demo at a terminal: Ctrl-C during its first run stops the run, the sandbox and make, leaving nothing', async () => {
    const r = await inTerminal(['make', 'demo'], {
      env: cleanEnv(),
      cwd: ROOT,
      // Once the first run's bars show pages read.
      ctrlC: (raw) => / [1-9]\d* pages/.test(raw),
    });
    const { lines } = await screen(r.raw);
    const text = lines.join('\n');
    expect(r.code, text.slice(-2000)).toBe(130);
    expect(text).toMatch(/stopped on request/);
    // `make` (or, under an outer make such as `make test`, `make[2]`) says its recipe was interrupted.
    expect(text).toMatch(/make(\[\d+\])?: \*\*\* \[Makefile:\d+: demo\] Interrupt/);
    // The run's summary, captured by the demo, is wrapped at words to the demo's terminal: no word is cut.
    expect(text).toMatch(/\d+ tasks \(\d+ ok, 0 failed, \d+ stopped on request, \d+ with no new rows\): \d+ rows,/);
    // No process of the demo is left: not the run, nor the sandbox it started.
    expect(r.left).toEqual([]);
  }, 120_000);

  it("make demo, then every after-demo example, in order: each exits 0 and finds the demo's data", async () => {
    const demo = await run('make', ['demo']);
    expect(demo.code, demo.stdout.slice(-3000) + demo.stderr.slice(-3000)).toBe(0);
    expect(demo.stdout).toMatch(/warehouse: .*data\/demo\/warehouse\.duckdb/);
    // verify, while the demo's sandbox serves: bsc's identities compared, none differs.
    expect(demo.stdout).toMatch(/^== verify: /m);
    expect(demo.stdout).toMatch(/^bsc +dodoex\.swaps +(swaps per pool and day +)?\d+ +to \d{4}-\d\d-\d\d +\d+ +0$/m);
    expect(demo.stdout).toMatch(/^every identity checked holds$/m);
    // The demo prints where its dashboard is, and the page holds the charts' data.
    expect(demo.stdout).toMatch(/dashboard: \S*data\/demo\/dashboard\.html \(\d+ KiB; open it in a browser/);
    expect(readFileSync(join(ROOT, 'data', 'demo', 'dashboard.html'), 'utf8')).toContain('id="dashboard-data"');
    const blocks = examples('after-demo');
    expect(blocks.length).toBeGreaterThanOrEqual(2);
    const r = await runBlock(blocks.join('\n'));
    const failed = r.outputs.find((o) => o.output.includes('::: failed'));
    expect(r.code, `${failed?.command}: ${failed?.output}\n${r.stderr.slice(-2000)}`).toBe(0);
    for (const { command, output } of r.outputs) {
      if (/ (report|query) /.test(command) && !/--out|--list/.test(command))
        expect(output, command).not.toMatch(/^\(0 rows/m);
      if (/shell$/.test(command)) expect(output, command).toMatch(/\(\d+ rows\)/);
    }
    expect(r.outputs.find((o) => o.command.includes('status'))!.output).toMatch(/dodoex\.swaps +bsc /);
    expect(readFileSync(join(ROOT, 'vol.csv'), 'utf8').split('\n').length).toBeGreaterThan(2);
  }, 900_000);

  it("the sandbox by hand: it prints the README's export lines, the client block exports and queries, and stopping npx stops it", async () => {
    const [serve] = examples('sandbox-serve');
    const [client] = examples('sandbox-client');
    const [program, ...args] = serve!.trim().split(/\s+/);
    rmSync(join(ROOT, 'data/sandbox'), { recursive: true, force: true });
    const child = spawn(program!, args, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const printed = await waitForOutput(child, /^ready http:\/\/127\.0\.0\.1:8545$/m);
      // The export lines the README shows are the ones the sandbox prints.
      for (const line of client!.split('\n').filter((l) => l.startsWith('export ')))
        expect(printed).toContain(`  ${line}\n`);
      const r = await runBlock(client!);
      const failed = r.outputs.find((o) => o.output.includes('::: failed'));
      expect(r.code, `${failed?.command}: ${failed?.output}\n${r.stderr.slice(-2000)}`).toBe(0);
      expect(r.outputs.at(-1)!.output).toMatch(/swaps\n-+\n *\d+\n\(1 rows\)/);
    } finally {
      // The pid a user holds is npx's: SIGTERM to it stops the sandbox too, and frees the port.
      const sandbox = spawnSync('pgrep', ['-f', 'pool-export sandbox --port 8545'], { encoding: 'utf8' })
        .stdout.split('\n')
        .filter(Boolean)
        .map(Number)
        .filter((p) => p !== child.pid);
      child.kill('SIGTERM');
      for (const pid of sandbox)
        expect(await gone(pid), `sandbox process ${pid} still running after npx was stopped`).toBe(true);
    }
  }, 300_000);

  it('any subgraph: the sandbox serves the test schema, and the client block adds it, runs it, queries it and prints its DDL', async () => {
    const [serve] = examples('subgraph-serve');
    const [client] = examples('subgraph-client');
    const [program, ...args] = serve!.trim().split(/\s+/);
    rmSync(join(ROOT, 'data/subgraph-try'), { recursive: true, force: true });
    const child = spawn(program!, args, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    try {
      const printed = await waitForOutput(child, /^ready http:\/\/127\.0\.0\.1:8546$/m);
      // The URL the client block adds is the one the sandbox prints.
      const url = /--url (\S+)/.exec(client!)![1]!;
      expect(printed).toContain(`subgraph pools: ${url}\n`);
      const r = await runBlock(client!);
      const failed = r.outputs.find((o) => o.output.includes('::: failed'));
      expect(r.code, `${failed?.command}: ${failed?.output}\n${r.stderr.slice(-2000)}`).toBe(0);
      expect(r.outputs.find((o) => o.command.includes('query'))!.output).toMatch(/swaps\n-+\n *[1-9]\d*\n\(1 rows\)/);
      expect(r.outputs.find((o) => o.command.includes('dashboard'))!.output).toMatch(/^dashboard: .* KiB; open it/);
      const ddl = r.outputs.find((o) => o.command.includes('lake ddl'))!.output;
      expect(ddl).toContain('CREATE OR REPLACE VIEW "pools"."swaps" AS SELECT * FROM read_parquet(');
    } finally {
      child.kill('SIGTERM');
      rmSync(join(ROOT, 'data/subgraph-try'), { recursive: true, force: true });
    }
  }, 300_000);

  it('a bucket lake on one machine: make s3rver, then the client block exports to it, its DDL names the store, a query reads it', async () => {
    const [serve] = examples('sandbox-serve');
    const [store] = examples('bucket-serve');
    const [client] = examples('bucket-client');
    expect(store!.trim()).toBe('make s3rver');
    const [program, ...args] = serve!.trim().split(/\s+/);
    for (const d of ['data/bucket-try', 'data/s3rver']) rmSync(join(ROOT, d), { recursive: true, force: true });
    const sandbox = spawn(program!, args, { cwd: ROOT, env: cleanEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    // make and s3rver in a process group of their own, stopped together.
    const s3 = spawn('make', ['s3rver'], {
      cwd: ROOT,
      env: cleanEnv(),
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    try {
      await waitForOutput(sandbox, /^ready http:\/\/127\.0\.0\.1:8545$/m);
      const said = await waitForOutput(s3, /listening on 127\.0\.0\.1:4568/);
      expect(said).toContain('AWS_ACCESS_KEY_ID=S3RVER AWS_SECRET_ACCESS_KEY=S3RVER');
      const r = await runBlock(client!);
      const failed = r.outputs.find((o) => o.output.includes('::: failed'));
      expect(r.code, `${failed?.command}: ${failed?.output}\n${r.stderr.slice(-2000)}`).toBe(0);
      const ddl = r.outputs.find((o) => o.command.includes('lake ddl'))!.output;
      expect(ddl).toContain("ENDPOINT '127.0.0.1:4568'");
      expect(ddl).toContain("URL_STYLE 'path'");
      expect(r.outputs.at(-1)!.output).toMatch(/swaps\n-+\n *[1-9]\d*\n\(1 rows\)/);
      // The objects are in the store's folder, under the lake's prefix.
      expect(readdirSync(join(ROOT, 'data/s3rver/lake'), { recursive: true }).join('\n')).toMatch(
        /pool-export\/dodoex\/swaps\/_manifest\.json/,
      );
    } finally {
      sandbox.kill('SIGTERM');
      if (s3.pid) process.kill(-s3.pid, 'SIGTERM');
      for (const d of ['data/bucket-try', 'data/s3rver']) rmSync(join(ROOT, d), { recursive: true, force: true });
    }
  }, 300_000);
});

/**
 * The machine's own Node where it is older than 22 (Debian's is 20), which runs `node bin/pool-export.js` as the tool
 * on its own Node 24; undefined where there is none.
 */
const OLDER_NODE = (() => {
  const r = spawnSync('/usr/bin/node', ['-p', 'process.versions.node'], { encoding: 'utf8' });
  return r.status === 0 && Number(r.stdout.split('.')[0]) < 22 ? '/usr/bin/node' : undefined;
})();

/** The start form `node bin/pool-export.js` under the machine's older Node, where it has one. */
const onOlderNode = OLDER_NODE
  ? [
      [
        `node bin/pool-export.js on the machine's Node ${spawnSync(OLDER_NODE, ['-v'], { encoding: 'utf8' }).stdout.trim()}`,
        (a: string[], env: NodeJS.ProcessEnv = keyed()) =>
          spawn(OLDER_NODE, [join(ROOT, 'bin/pool-export.js'), ...a], {
            cwd: ROOT,
            env,
            stdio: ['ignore', 'pipe', 'pipe'],
          }),
      ] as const,
    ]
  : [];

describe('signals through the documented start forms', () => {
  it.skipIf(!OLDER_NODE)("node bin/pool-export.js on a Node older than 22 runs the tool on the project's own", () => {
    const r = spawnSync(OLDER_NODE!, ['bin/pool-export.js', '--version'], { cwd: ROOT, encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
    expect(r.stderr).toBe('');
    const node = spawnSync(OLDER_NODE!, ['bin/pool-export.js', 'query', '--help'], { cwd: ROOT, encoding: 'utf8' });
    expect(node.status, node.stderr).toBe(0);
  });

  it.skipIf(!OLDER_NODE)(
    "npx pool-export with the older Node first on the PATH prints the tool's output and nothing of npm",
    () => {
      const r = spawnSync('npx', ['pool-export', '--version'], {
        cwd: ROOT,
        encoding: 'utf8',
        env: { ...cleanEnv(), PATH: `/usr/bin:${process.env.PATH}` },
      });
      expect(r.status, r.stderr).toBe(0);
      expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version);
      expect(r.stderr).not.toMatch(/EBADENGINE|npm warn/i);
      expect(r.stderr).toBe('');
    },
  );

  it.each<readonly [string, (a: string[]) => ChildProcess]>([
    [
      'node bin/pool-export.js (systemd, cron, containers)',
      (a: string[]) =>
        spawn(process.execPath, [join(ROOT, 'bin/pool-export.js'), ...a], {
          cwd: ROOT,
          env: keyed(),
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
    ],
    ...onOlderNode,
    [
      "npx pool-export (a SIGTERM to npx's own pid)",
      (a: string[]) =>
        spawn('npx', ['pool-export', ...a], { cwd: ROOT, env: keyed(), stdio: ['ignore', 'pipe', 'pipe'] }),
    ],
  ])(
    '%s: SIGTERM stops the scheduler',
    async (_name, start) => {
      const data = join(ROOT, 'data', `signal-${Date.now()}`);
      try {
        const child = start(['schedule', '--data-dir', data, '--jobs', 'events', '--schedule', 'events=0 0 1 1 *']);
        await waitForOutput(child, /^scheduler started:/m);
        // Every process of it: npm, its shell and node under npx; node alone when started directly.
        const tool = spawnSync('pgrep', ['-f', `schedule --data-dir ${data}`], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter(Boolean)
          .map(Number);
        expect(tool).toContain(child.pid);
        child.kill('SIGTERM');
        for (const pid of tool) expect(await gone(pid), `pool-export (pid ${pid}) still running`).toBe(true);
      } finally {
        rmSync(data, { recursive: true, force: true });
      }
    },
    60_000,
  );
});

describe('stopping a run through the documented start forms', () => {
  let sb: SandboxProcess;
  beforeAll(async () => {
    sb = await startSandbox(['--scale', '3000', '--chains', '56']);
  });
  afterAll(async () => {
    await sb?.stop();
  });

  it.each([
    [
      'node bin/pool-export.js',
      'SIGINT',
      (a: string[], env: NodeJS.ProcessEnv) =>
        spawn(process.execPath, [join(ROOT, 'bin/pool-export.js'), ...a], {
          cwd: ROOT,
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        }),
    ],
    [
      "npx pool-export (SIGINT to npx's own pid)",
      'SIGINT',
      (a: string[], env: NodeJS.ProcessEnv) =>
        spawn('npx', ['pool-export', ...a], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    ],
    [
      "npx pool-export (SIGTERM to npx's own pid)",
      'SIGTERM',
      (a: string[], env: NodeJS.ProcessEnv) =>
        spawn('npx', ['pool-export', ...a], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] }),
    ],
    ...onOlderNode.map(([name, start]) => [name, 'SIGTERM', start] as const),
  ] as const)(
    '%s: %s stops the run, which ends by it and leaves the ledger closed',
    async (_name, sig, start) => {
      const data = join(ROOT, 'data', `stop-${sig}-${Date.now()}`);
      await sb.control('faults', { latencyMs: 100 });
      await sb.control('stats', {});
      try {
        const env = {
          ...cleanEnv(),
          POOL_EXPORT_API_KEY: sb.apiKey,
          POOL_EXPORT_BASE_URL: sb.url,
        };
        // The data folder on the command line, so that the processes of this run can be told by it.
        const child = start(['run', '--chains', 'bsc', '--data-dir', data], env);
        let stdout = '';
        let stderr = '';
        child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
        child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
        const ended = new Promise<{ code: number | null; signal: string | null }>((r) =>
          child.on('close', (code, signal) => r({ code, signal })),
        );
        await waitForRequests(sb, 10);
        // Every process of it: npm, its shell (if any) and node under npx; node alone when started directly.
        const tool = spawnSync('pgrep', ['-f', `run --chains bsc --data-dir ${data}`], { encoding: 'utf8' })
          .stdout.split('\n')
          .filter(Boolean)
          .map(Number);
        expect(tool, stderr.slice(-1500)).toContain(child.pid);
        child.kill(sig);
        // npx ends by the signal its child ended by, as node does started directly.
        expect(await ended).toEqual({ code: null, signal: sig });
        for (const pid of tool) expect(await gone(pid), `pool-export (pid ${pid}) still running`).toBe(true);
        expect(stdout, stderr.slice(-1500)).toContain('stopped on request');
        const w = await Warehouse.open(data, { readOnly: true });
        try {
          expect((await w.all('SELECT status FROM _pool_export.runs')).map((x) => x.status)).toEqual(['stopped']);
        } finally {
          await w.close();
        }
      } finally {
        await sb.control('faults', { latencyMs: 0 });
        rmSync(data, { recursive: true, force: true });
      }
    },
    60_000,
  );
});
