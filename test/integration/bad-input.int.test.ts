/**
 * Bad input of every kind: a clear message naming the fix, exit 2 for usage and 1 for runtime errors, stored data
 * untouched. The cases and the folder they must leave as it was are in test/support/bad-input-fixture.ts.
 */
import { spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { type AddressInfo, createServer } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { events } from '../../jobs/events.ts';
import { lockDataDir } from '../../src/store/data-lock.ts';
import { cases, data, dir, env, sb, stored, useBadInputFolder } from '../support/bad-input-fixture.ts';
import { cli, sandboxEnv } from '../support/cli-process.ts';
import { compareWithSandbox, lakeBehindWarehouse } from '../support/export-check.ts';
import { waitForRequests } from '../support/sandbox-client.ts';

useBadInputFolder();

function closedPort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/** Root can mount a small tmpfs: a real file system that fills up. */
const canMount = process.getuid?.() === 0 && spawnSync('mount', ['--version']).status === 0;

/** Fills the file system holding `dir` to the last byte. */
function fill(dir: string): void {
  const fd = openSync(join(dir, 'filler'), 'w');
  const chunk = Buffer.alloc(64 * 1024);
  try {
    for (;;) writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
  } finally {
    closeSync(fd);
  }
}

describe('bad input', () => {
  it('gets a clear message naming the fix and the right exit code, and stored data stay untouched', async () => {
    const before = await stored(data);
    const table = cases();
    expect(table.length).toBeGreaterThanOrEqual(30);
    for (const [name, args, extra, code, message] of table) {
      const r = await cli(args, { ...env, ...extra });
      expect(r.code, `${name}: ${r.stderr}`).toBe(code);
      expect(r.stderr + r.stdout, name).toMatch(message);
      expect(r.stderr + r.stdout, name).not.toContain(sb.apiKey);
    }
    expect(await stored(data)).toBe(before);
  }, 240_000);

  it('names chains one way in every command: --chains takes a list, --chain is the same option', async () => {
    // The rows' keys: the last digits of a sum of doubles may differ from one parallel run to the next.
    const keys = async (chains: string[]) => {
      const r = await cli(['report', 'tvl_list', '--format', 'json', ...chains], env);
      expect(r.code, r.stderr).toBe(0);
      return (JSON.parse(r.stdout) as { chain_id: number; pool: string; time: string }[]).map(
        (x) => `${x.chain_id} ${x.pool} ${x.time}`,
      );
    };
    const list = await keys(['--chains', 'bsc,56']);
    expect(list.length).toBeGreaterThan(2);
    expect(await keys(['--chain', 'bsc'])).toEqual(list);
    expect(await keys([])).toEqual(list);
    for (const args of [
      ['run', '--chain', 'mars'],
      ['status', '--chain', 'mars'],
      ['dashboard', '--chain', 'mars', '--out', join(dir, 'x.html')],
      ['schema', 'check', '--chain', 'mars'],
    ]) {
      const r = await cli(args, env);
      expect([r.code, r.stderr], args.join(' ')).toEqual([2, expect.stringMatching(/unknown chain "mars"/)]);
    }
  });

  it.runIf(canMount)(
    'a full disk: a clear message naming the folder and the fix, exit 1, stored data untouched; exact once space is freed',
    async () => {
      const disk = join(dir, 'disk');
      mkdirSync(disk);
      const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=24m', 'tmpfs', disk], { encoding: 'utf8' });
      expect(mounted.status, mounted.stderr).toBe(0);
      try {
        const small = join(disk, 'data');
        const envSmall = sandboxEnv(sb, small);
        // With DuckDB's memory capped (the default), a run first asks for 1 GiB to spill to, and stops before starting.
        const refused = await cli(['run', '--chains', 'bsc', '--jobs', 'events'], envSmall);
        expect(refused.code, refused.stdout + refused.stderr).toBe(1);
        expect(refused.stdout + refused.stderr).toMatch(
          new RegExp(
            `the data folder ${small} has \\d+ (KiB|MiB) free; a run needs at least 1024 MiB there, since DuckDB writes what does not fit in duckdbMemoryLimit \\(2048MiB\\) to that disk`,
          ),
        );
        expect(existsSync(join(small, 'warehouse.duckdb'))).toBe(false);
        // The rest of this test fills the disk during a run: DuckDB uncapped, so the space check does not stop it.
        const uncapped = join(dir, 'uncapped.json');
        writeFileSync(uncapped, JSON.stringify({ duckdbMemoryLimit: '' }));
        const args = ['run', '--chains', 'bsc', '--jobs', 'events', '--config', uncapped];
        const first = await cli(args, envSmall);
        expect(
          first.code,
          first.stdout +
            first.stderr
              .split('\n')
              .filter((l) => !l.startsWith('{'))
              .join('\n'),
        ).toBe(0);
        await sb.control('advance', { blocks: 400 });
        fill(disk);
        const before = await stored(small);
        for (const attempt of [1, 2]) {
          const r = await cli(args, envSmall);
          expect(r.code, `attempt ${attempt}: ${r.stdout}${r.stderr}`).toBe(1);
          expect(r.stdout + r.stderr).toMatch(
            new RegExp(
              `the disk holding the data folder ${small} is full \\(.*(ENOSPC|No space left on device).*\\); free space there, or point --data-dir at a folder on another disk, and run again`,
            ),
          );
          expect(await stored(small)).toBe(before);
          // No half-written file is left: no batch files, no views file under construction, no empty lock owner.
          expect(readdirSync(join(small, '.tmp'))).toEqual([]);
          expect(
            readdirSync(small).filter((n) => n !== '.tmp' && (n.endsWith('.tmp') || n.startsWith('.lock'))),
          ).toEqual([]);
        }
        rmSync(join(disk, 'filler'));
        const r = await cli(args, envSmall);
        expect(r.code, r.stdout + r.stderr).toBe(0);
        expect((await compareWithSandbox(sb, small, [56], events.datasets)).mismatches).toEqual([]);
        expect(await lakeBehindWarehouse(small)).toEqual([]);
      } finally {
        spawnSync('umount', [disk]);
      }
    },
    180_000,
  );

  it('an unreachable upstream fails within a few attempts, with one line for all of its tasks, and retries logged', async () => {
    const before = await stored(data);
    const port = await closedPort();
    const r = await cli(['run', '--chains', 'bsc', '--jobs', 'events'], {
      ...env,
      POOL_EXPORT_BASE_URL: `http://127.0.0.1:${port}`,
    });
    expect(r.code).toBe(1);
    expect(r.stdout.match(/^FAILED .*$/gm)).toEqual([
      expect.stringMatching(
        new RegExp(
          `^FAILED \\d+ tasks \\(\\d+ datasets on bsc\\): the upstream host 127\\.0\\.0\\.1:${port} could not be reached \\(.*ECONNREFUSED.*\\): check the address, the network and any proxy \\(gave up after 3 attempts\\)$`,
        ),
      ),
    ]);
    // One host, asked once: three attempts (two retries, each logged), never one per endpoint.
    expect(r.stderr.match(/"event":"retry"/g)).toHaveLength(2);
    expect(r.stderr.match(/"event":"host-unreachable"/g)).toHaveLength(1);
    expect(await stored(data)).toBe(before);
  });

  it('tables and status fit 80 columns, with numbers for reading; csv stays exact', async () => {
    const narrow = { ...env, COLUMNS: '80' };
    for (const args of [
      ['report', 'volume_daily'],
      ['report', 'top_pools'],
      ['query', 'SELECT * FROM reports.apy'],
      ['status', '--offline', '--stale-after', '10000d'],
      ['verify', '--chains', 'bsc'],
    ]) {
      const r = await cli(args, narrow);
      expect(r.code, `${args.join(' ')}: ${r.stderr}`).toBe(0);
      const wide = r.stdout.split('\n').filter((l) => [...l].length > 80);
      expect(wide, args.join(' ')).toEqual([]);
      expect(r.stdout, args.join(' ')).not.toMatch(/\d\.\d{9,}|e-\d{2,}\d/);
    }
    // verify's table leaves its identity column out at 80 columns, and says where it is.
    const verified = await cli(['verify', '--chains', 'bsc'], narrow);
    expect(verified.stdout).toMatch(/^chain +dataset +block +days +groups +differ$/m);
    expect(verified.stdout).toMatch(
      /^\(each dataset's identity: `verify --format json`, or a terminal of \d+ columns\)$/m,
    );
    const wideVerify = await cli(['verify', '--chains', 'bsc'], { ...env, COLUMNS: '200' });
    expect(wideVerify.stdout).toMatch(/^chain +dataset +identity +block +days +groups +differ$/m);
    // A report shows its own most important columns first, then says which it left out and how to see them.
    const top = await cli(['report', 'top_pools', '--limit', '5'], narrow);
    expect(top.stdout.split('\n')[0]).toMatch(/^chain_id +rank +base_token_symbol +quote_token_symbol +tvl_usd\b/);
    expect(top.stdout.replace(/\s+/g, ' ')).toMatch(
      /\(\d+ more columns: [^)]*\bpool\b[^)]*; --wide shows them all, --columns chooses, --format csv gives them exactly\)/,
    );
    const all = await cli(['report', 'top_pools', '--limit', '5', '--wide'], narrow);
    expect(all.stdout.split('\n')[0]).toMatch(/\btvl_service_usd\b.*\bpool\b.*\bday\b.*\bmining_base_apy$/);
    expect(all.stdout).not.toMatch(/more columns/);
    const table = await cli(['report', 'volume_daily', '--columns', 'day,pool,volume_usd'], narrow);
    expect(table.stdout).toMatch(/^day +pool +volume_usd$/m);
    expect(table.stdout).toMatch(/\d(\.\d+)?[KMBT]?$/m);
    const csv = await cli(
      [
        'query',
        'SELECT amount_in, _exact.amount_in AS amount_in_text FROM dodoex.swaps ORDER BY id LIMIT 20',
        '--format',
        'csv',
      ],
      narrow,
    );
    for (const line of csv.stdout.trim().split('\n').slice(1)) {
      const [number, text] = line.split(',');
      expect(Number(number)).toBe(Number(text));
    }
  });

  it('status names datasets that were never exported, and answers during a run', async () => {
    const never = await cli(['status', '--offline', '--datasets', 'dodoex.swaps,token.tokens', '--chains', 'bsc'], env);
    expect(never.code).toBe(3);
    expect(never.stdout).toMatch(/^token\.tokens +bsc +0 +- +never +STALE$/m);
    expect(never.stdout).toMatch(/^lag is measured against the clock: asked not to \(--offline\)$/m);
    await sb.control('faults', { latencyMs: 200 });
    await sb.control('stats', {});
    const running = cli(['run', '--chains', 'bsc', '--jobs', 'state', '--wait-lock', '60'], env);
    await waitForRequests(sb, 4);
    const during = await cli(['status', '--offline', '--json', '--stale-after', '10000d'], env);
    await sb.control('faults', { latencyMs: 0 });
    expect((await running).code).toBe(0);
    expect(during.code, during.stderr).toBe(0);
    const report = JSON.parse(during.stdout) as { running: { pid: number } | null; datasets: unknown[] };
    expect(report.running?.pid).toBeGreaterThan(0);
    expect(report.datasets.length).toBeGreaterThan(5);
  }, 120_000);

  it('a dry run writes nothing, not even a data folder, and shows no key where none is set', async () => {
    const fresh = join(dir, 'dry-run-folder');
    const r = await cli(['run', '--dry-run', '--chains', 'bsc', '--datasets', 'dodoex.swaps,list.liquidity'], {
      ...env,
      POOL_EXPORT_DATA_DIR: fresh,
      POOL_EXPORT_API_KEY: '',
    });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^plan: 2 tasks, data folder .*dry-run-folder \(nothing exported there yet\)$/m);
    expect(r.stdout).toContain("no API key is set: DODO's tasks need POOL_EXPORT_API_KEY");
    expect(r.stdout).not.toContain('apikey=');
    expect(r.stdout).toMatch(
      /dodoex\.swaps +bsc +event +http:\/\/127\.0\.0\.1:\d+\/subgraph\/graphql\?chainId=56&schemaName=dodoex +cursor \(start of history\)/,
    );
    expect(existsSync(fresh)).toBe(false);
    // With a warehouse, the cursors are read without writing to it.
    const before = await stored(data);
    const again = await cli(['run', '--dry-run', '--chains', 'bsc', '--datasets', 'dodoex.swaps'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(
      /dodoex\.swaps +bsc +event +.*apikey=\*\*\* {2}cursor \{"seq":"\d+","id":"0x[0-9a-f-]+","block":\d+\}/,
    );
    expect(await stored(data)).toBe(before);
  });

  it('stops at once when another process holds the data folder, naming it, and touches nothing', async () => {
    const before = await stored(data);
    const lock = await lockDataDir(data, { what: 'a test holding the folder', waitSecs: 0, onLost: () => undefined });
    try {
      const r = await cli(['run', '--chains', 'bsc'], env);
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(`in use by another pool-export process \\(pid ${process.pid}, a test holding the folder, since `),
      );
    } finally {
      await lock.release();
    }
    expect(await stored(data)).toBe(before);
  }, 60_000);
});
