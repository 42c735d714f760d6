/**
 * The command table: a command named on the command line is loaded whole (its options and handler), the others stay a
 * line of `--help`, and the command line started from any folder knows its own version.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { JOBS } from '../../jobs/index.ts';
import { COMMANDS, commandModules } from '../../src/cli/commands.ts';
import { BIN } from '../../src/sandbox/spawn.ts';

const jobs = async () => JOBS;
const elsewhere = mkdtempSync(join(tmpdir(), 'pool-export-cwd-'));
afterAll(() => rmSync(elsewhere, { recursive: true, force: true }));

/** The command line run from a folder that is not the project's, with no data folder or config of its own. */
function run(args: string[]) {
  const r = spawnSync(process.execPath, [BIN, ...args], {
    cwd: elsewhere,
    encoding: 'utf8',
    env: { ...process.env, POOL_EXPORT_DATA_DIR: join(elsewhere, 'data'), POOL_EXPORT_API_KEY: '' },
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe('the command table', () => {
  it('loads the commands the command line names and no other', async () => {
    const modules = await commandModules(['status', '--json'], jobs);
    expect(modules.map((m) => m.command)).toEqual(COMMANDS.map((c) => c.command));
    // Only status is loaded (its options come with it); every other handler is the stand-in that refuses to run.
    const [loaded, others] = [modules.filter((m) => m.builder), modules.filter((m) => !m.builder)];
    expect(loaded.map((m) => m.command)).toEqual(['status']);
    for (const m of others) expect(() => (m.handler as () => void)()).toThrow(/ran without its module/);
  });

  it('loads nothing for --version or --help', async () => {
    for (const argv of [['--version'], ['--help']]) {
      for (const m of await commandModules(argv, jobs)) {
        expect(m.builder, m.command as string).toBeUndefined();
        expect(() => (m.handler as () => void)()).toThrow(/ran without its module/);
      }
    }
  });

  it('shows the options of the command it is asked about', () => {
    // Each option below is declared by that command's own module, which the table loads when the command is named.
    for (const [command, option] of [
      ['run', '--dry-run'],
      ['status', '--stale-after'],
      ['report', '--list'],
      ['schedule', '--run-now'],
      ['sandbox', '--max-skip'],
    ] as const) {
      const r = run([command, '--help']);
      expect(r.code, `${command} --help: ${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(option);
    }
  });

  it('lists every command with its description, and runs a command from any folder', () => {
    const help = run(['--help']);
    expect(help.code).toBe(0);
    // yargs wraps the descriptions at the terminal's width.
    const text = help.stdout.replace(/\s+/g, ' ');
    for (const c of COMMANDS) expect(text).toContain(c.describe.slice(0, 60));
    const jobsOut = run(['jobs']);
    expect(jobsOut.code).toBe(0);
    expect(
      jobsOut.stdout
        .split('\n')
        .filter(Boolean)
        .map((l) => l.split(' ')[0]),
    ).toEqual(JOBS.map((j) => j.name));
  });

  it("prints this package's version from any folder", () => {
    const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
    const r = run(['--version']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(pkg.version);
  });
});
