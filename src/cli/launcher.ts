/**
 * Signals through `npx`: `npx pool-export …` runs the tool as `npm exec` → `sh -c 'pool-export …'` → node. A SIGTERM to
 * the npx process (the pid a user sees, or a supervisor holds) ends npm and the shell, and never reaches node, which
 * would go on running and keep the data folder's lock. So, when npm started this process, it watches npm: once npm is
 * gone, the tool stops as if it had received the signal itself (a graceful stop: the current batch commits or rolls
 * back). Started any other way (node, the bin link, a service manager), nothing is watched.
 */
import { commandOf, parentOf, processAlive } from '../util/processes.ts';

/** How often the launcher is looked at. */
const WATCH_MS = 500;

/** The npm process that started this one through `npm exec` (npx), or undefined. */
function npmLauncher(): number | undefined {
  if (process.env.npm_command !== 'exec') return undefined;
  let pid = process.ppid;
  // `npm exec` runs the bin through a shell; the shell's parent is npm.
  if (/^(sh|dash|bash|zsh)$/.test(commandOf(pid) ?? '')) pid = parentOf(pid) ?? pid;
  return /^(npm|node|npx)/.test(commandOf(pid) ?? '') ? pid : undefined;
}

/** When npm started this process, stops it (SIGTERM to itself) once npm has gone. */
export function followLauncher(): void {
  const npm = npmLauncher();
  if (npm === undefined) return;
  const timer = setInterval(() => {
    if (processAlive(npm)) return;
    clearInterval(timer);
    process.kill(process.pid, 'SIGTERM');
  }, WATCH_MS);
  timer.unref();
}
