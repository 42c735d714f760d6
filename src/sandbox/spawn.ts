/** Starts `pool-export sandbox` as a child process and waits for its URL; used by the demo and the tests. */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { readJson } from '../util/http-body.ts';

/** Bytes a control-API answer may take: its answers are a few kilobytes. */
const CONTROL_ANSWER_BYTES = 4 * 1024 ** 2;

/** The CLI entry point. */
export const BIN = fileURLToPath(new URL('../../bin/pool-export.js', import.meta.url));

/** A running sandbox, wherever it runs (a child process or a container). */
export interface SandboxEndpoint {
  readonly url: string;
  readonly apiKey: string;
  /** Calls the control API. */
  control<T = Record<string, unknown>>(path: string, body?: unknown): Promise<T>;
}

/** A sandbox process. */
export interface SandboxProcess extends SandboxEndpoint {
  readonly child: ChildProcess;
  /** What it printed before it was ready: its routes, and a `subgraph NAME: <url>` line per named subgraph and chain. */
  readonly banner: string;
  /** Stops the process (SIGTERM, then SIGKILL after 5 s). */
  stop(): Promise<void>;
}

/** The control API of the sandbox at `url`. */
export async function callControl<T>(url: string, path: string, body?: unknown): Promise<T> {
  const call = () =>
    fetch(
      `${url}/_sandbox/${path}`,
      body === undefined
        ? {}
        : { method: 'POST', body: JSON.stringify(body), headers: { 'content-type': 'application/json' } },
    );
  let res: Response;
  try {
    res = await call();
  } catch {
    // A kept-alive connection that the server closed while this process was busy (a caller blocked in spawnSync
    // cannot see the close): one more try opens a new connection.
    res = await call();
  }
  return readJson<T>(res, CONTROL_ANSWER_BYTES);
}

/**
 * V8 flags for a sandbox process. A larger young generation makes the page-serving hot path about 20% faster: each
 * 1000-row page allocates tens of megabytes of short-lived rows, and a small one is scavenged several times per page.
 */
export const SANDBOX_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=64'];

/** How long the sandbox may take to print its URL. */
const START_TIMEOUT_MS = 30_000;

/** The end of history that tests and benchmarks pin, so that their data are the same on every run (2026-01-01T00:00Z). */
export const PINNED_NOW = '2026-01-01T00:00:00Z';

/** Starts a sandbox with the given extra flags (`--api-key` is always set; `--now` is pinned unless given). */
export async function startSandbox(
  flags: string[] = [],
  apiKey = '5a4db0c5e1f0d1e2a3b4c5d6e7f80912',
): Promise<SandboxProcess> {
  const now = flags.includes('--now') ? [] : ['--now', PINNED_NOW];
  const child = spawn(
    process.execPath,
    [...SANDBOX_NODE_FLAGS, BIN, 'sandbox', '--port', '0', '--api-key', apiKey, ...now, ...flags],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`sandbox did not start within ${START_TIMEOUT_MS} ms: ${stderr}`)),
      START_TIMEOUT_MS,
    );
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      const m = /^ready (\S+)$/m.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with code ${code}: ${stderr}`));
    });
  });
  child.stdout!.resume();
  return {
    url,
    apiKey,
    child,
    banner: out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((r) => child.once('exit', () => r()));
      child.kill('SIGTERM');
      const kill = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(kill);
    },
    control: <T>(path: string, body?: unknown) => callControl<T>(url, path, body),
  };
}
