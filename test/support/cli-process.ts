/** The CLI as a child process, pointed at a sandbox: its exit code and output, and progress sinks that reach into a run. */
import { spawn } from 'node:child_process';
import type { ProgressSink } from '../../src/export/run-args.ts';
import { BIN, type SandboxEndpoint, type SandboxProcess } from '../../src/sandbox/spawn.ts';

/** Runs the CLI as a child process; resolves with its exit code and output. */
export function cli(
  args: string[],
  env: Record<string, string>,
  opts: {
    killAfterMs?: number;
    termAfterMs?: number;
    termWhen?: (stderr: string) => boolean;
    killWhen?: Promise<unknown>;
    /** SIGTERM once this settles (an event of the process under test), if still running. */
    termOn?: Promise<unknown>;
    /** Called with all of stderr so far, each time more arrives. */
    onStderr?: (stderr: string) => void;
  } = {},
): Promise<{ code: number | null; signal: string | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    let termed = false;
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      stderr += d;
      opts.onStderr?.(stderr);
      if (!termed && opts.termWhen?.(stderr)) {
        termed = true;
        child.kill('SIGTERM');
      }
    });
    void opts.termOn?.then(
      () => child.exitCode === null && child.signalCode === null && child.kill('SIGTERM'),
      () => undefined,
    );
    // Killed once `killWhen` settles (an event of the process under test, such as requests served), if still running.
    void opts.killWhen?.then(
      () => child.exitCode === null && child.signalCode === null && child.kill('SIGKILL'),
      () => undefined,
    );
    const timer =
      opts.killAfterMs !== undefined
        ? setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs)
        : opts.termAfterMs !== undefined
          ? setTimeout(() => child.kill('SIGTERM'), opts.termAfterMs)
          : undefined;
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A run's progress sink that does nothing but the hooks given (a test's way into a run between its steps). */
export function progressOn(hooks: Partial<ProgressSink>): ProgressSink {
  return { start: () => {}, page: () => {}, done: () => {}, stop: () => {}, ...hooks };
}

/**
 * A progress sink that kills `victim` once the run has probed its routes and planned its tasks, before their first
 * pages; `killed()` resolves once the process has exited.
 */
export function killOnStart(victim: SandboxProcess) {
  let exited: Promise<unknown> | undefined;
  const progress = progressOn({
    start: () => {
      exited = new Promise((r) => victim.child.once('exit', r));
      victim.child.kill('SIGKILL');
    },
  });
  return { progress, killed: () => exited };
}

/** The environment that points the CLI at a sandbox (or any address with the sandbox's key) and a data folder. */
export function sandboxEnv(sb: Pick<SandboxEndpoint, 'url' | 'apiKey'>, dataDir: string): Record<string, string> {
  return {
    POOL_EXPORT_API_KEY: sb.apiKey,
    POOL_EXPORT_BASE_URL: sb.url,
    POOL_EXPORT_DATA_DIR: dataDir,
    POOL_EXPORT_DEVELOPER_ID: 'dev42',
    // The sandbox's IPFS node holds its subgraphs' manifests and schemas (never The Graph's, the default).
    POOL_EXPORT_IPFS_URL: `${sb.url}/ipfs/`,
  };
}
