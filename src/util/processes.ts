/**
 * Other processes, as Linux's /proc shows them: whether one is alive (a zombie is not: `kill(pid, 0)` succeeds on a
 * process that has exited and not been reaped), who its parent is, and which process listens on a TCP port. Outside
 * Linux, the answers fall back to what `kill` tells, or to nothing.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

/** The state letter and parent of a process from /proc/<pid>/stat, or undefined when /proc cannot tell. */
function stat(pid: number): { state: string; ppid: number } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is in parentheses and may itself hold spaces or parentheses: the fields follow the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0]!, ppid: Number(fields[1]) };
  } catch {
    return undefined;
  }
}

/** Whether a process is alive: it exists, and is not a zombie (exited, waiting to be reaped). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return stat(pid)?.state !== 'Z';
}

/** The parent of a process, where /proc tells. */
export function parentOf(pid: number): number | undefined {
  return stat(pid)?.ppid;
}

/** The short command name of a process (`/proc/<pid>/comm`), where /proc tells. */
export function commandOf(pid: number): string | undefined {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return undefined;
  }
}

/** The value after a flag that names a secret (`--api-key K`, `--token=K`, `password K`). */
const SECRET_FLAG = /((?:^|\s)-*[\w-]*(?:key|token|secret|password)[\w-]*(?:=|\s+))(\S+)/gi;

/** A process's command line, for messages (`/proc/<pid>/cmdline`): secrets in flags masked, cut to 160 characters. */
export function commandLineOf(pid: number): string | undefined {
  try {
    const line = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .join(' ')
      .replace(SECRET_FLAG, '$1***');
    return line.length > 160 ? `${line.slice(0, 159)}…` : line;
  } catch {
    return undefined;
  }
}

/** The socket inodes listening on a TCP port, from /proc/net/tcp and tcp6. */
function listeningInodes(port: number): Set<string> {
  const inodes = new Set<string>();
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local address `ADDR:PORT`, state 0A = LISTEN, inode in field 9.
      if (f[1]?.endsWith(`:${hex}`) && f[3] === '0A' && f[9]) inodes.add(f[9]);
    }
  }
  return inodes;
}

/** The process that listens on a TCP port, where /proc lets this user see it. */
export function portHolder(port: number): { pid: number; command: string } | undefined {
  const inodes = listeningInodes(port);
  if (!inodes.size) return undefined;
  let pids: string[];
  try {
    pids = readdirSync('/proc').filter((n) => /^\d+$/.test(n));
  } catch {
    return undefined;
  }
  for (const pid of pids) {
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
        if (m && inodes.has(m[1]!)) return { pid: Number(pid), command: commandLineOf(Number(pid)) ?? '?' };
      } catch {
        // The fd closed while we looked.
      }
    }
  }
  return undefined;
}
