/**
 * DuckDB's memory limit when the configuration leaves it to the machine (`duckdbMemoryLimit: "auto"`, the default):
 * - under a control group's memory limit (a container's `--memory`, a Kubernetes memory limit, a systemd
 *   `MemoryMax=`): 40% of it, at least 64 MiB. The other 60% is the Node.js process' own (about 160 MB at its peak in a
 *   run) and DuckDB's allocations outside its buffer manager;
 * - where no control group sets one: 25% of the machine's memory (`MemTotal` of `/proc/meminfo`, else
 *   `os.totalmem()`), at least 64 MiB. DuckDB's own default is 80%, for a process that owns the machine; a run started
 *   from cron shares it with whatever else runs there, and nothing reserved memory for it. A quarter is 6 GiB on a
 *   24 GiB host, 2 GiB on an 8 GiB laptop, 256 MiB on a 1 GiB virtual machine.
 * DuckDB spills what does not fit to the data folder, whose free space a run checks first.
 *
 * The files are read under `POOL_EXPORT_HOST_FILES` when it is set (a folder holding `proc/` and `sys/fs/cgroup/`), so
 * that a test can play a host with or without a limit whatever machine runs it.
 */
import { readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { minOf } from '../util/extremes.ts';

/** The share of a control group's limit given to DuckDB. */
export const CGROUP_SHARE = 0.4;

/** The share of the machine's memory given to DuckDB where no control group sets a limit. */
export const HOST_SHARE = 0.25;

/** The least `auto` gives: below it DuckDB cannot hold one page of the widest dataset while it writes. */
const MIN_MIB = 64;

/** The folder the host's files are read under instead of `/` (tests). */
export const HOST_FILES_ENV = 'POOL_EXPORT_HOST_FILES';

const MIB = 1024 ** 2;

/** Reads a file of the host, or undefined when it cannot be read. */
export type HostReader = (path: string) => string | undefined;

/** A folder and its parents up to the root, as cgroup paths (`/a/b`, `/a`, `/`). */
function upwards(path: string): string[] {
  const parts = path.split('/').filter(Boolean);
  return parts.map((_, i) => `/${parts.slice(0, parts.length - i).join('/')}`).concat('/');
}

/** A limit file's bytes, or undefined for none ("max" in v2; v1's largest page-aligned 64-bit value; unreadable). */
function limitOf(text: string | undefined): number | undefined {
  const t = text?.trim();
  if (!t || t === 'max') return undefined;
  const n = Number(t);
  return Number.isSafeInteger(n) && n > 0 && n < 2 ** 60 ? n : undefined;
}

/**
 * The memory limit of this process' control group in bytes, or undefined when none is set: the least of cgroup v2's
 * `memory.max` and cgroup v1's `memory.limit_in_bytes` over the process' group (from `/proc/self/cgroup`) and its
 * parents. Inside a container the group is the file system's root; under systemd it is the service's slice.
 */
export function cgroupMemoryLimit(read: HostReader = hostReader()): number | undefined {
  const groups = (read('/proc/self/cgroup') ?? '').split('\n');
  const v2 = groups.find((l) => l.startsWith('0::'))?.slice(3) ?? '/';
  const v1 = groups.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('memory'))?.[2] ?? '/';
  const files = [
    ...upwards(v2).map((g) => `/sys/fs/cgroup${g === '/' ? '' : g}/memory.max`),
    ...upwards(v1).map((g) => `/sys/fs/cgroup/memory${g === '/' ? '' : g}/memory.limit_in_bytes`),
  ];
  const limits = files.map((f) => limitOf(read(f))).filter((n): n is number => n !== undefined);
  return limits.length ? minOf(limits) : undefined;
}

/** The machine's memory in bytes: `MemTotal` of `/proc/meminfo`, else what Node.js reports. */
export function hostMemory(read: HostReader = hostReader()): number {
  const m = /^MemTotal:\s+(\d+)\s*kB\s*$/m.exec(read('/proc/meminfo') ?? '');
  return m ? Number(m[1]) * 1024 : totalmem();
}

/** A reader of the host's files, under `POOL_EXPORT_HOST_FILES` when that is set. */
export function hostReader(env: NodeJS.ProcessEnv = process.env): HostReader {
  const root = env[HOST_FILES_ENV];
  return (path) => {
    try {
      return readFileSync(root ? join(root, path) : path, 'utf8');
    } catch {
      return undefined;
    }
  };
}

/** A memory limit in force, and where it came from, in words (`run --dry-run` and the run's first log line say both). */
export interface MemoryLimit {
  readonly limit: string;
  readonly from: string;
}

const gib = (bytes: number) => `${(bytes / 1024 ** 3).toFixed(1)} GiB`;

/** The limit `auto` stands for on the host `read` shows (see the header). */
export function autoMemoryLimit(read: HostReader = hostReader()): MemoryLimit {
  const cgroup = cgroupMemoryLimit(read);
  if (cgroup !== undefined) {
    const mib = Math.max(MIN_MIB, Math.floor((cgroup * CGROUP_SHARE) / MIB));
    return {
      limit: `${mib}MiB`,
      from: `auto: 40% of the control group's memory limit, ${Math.round(cgroup / MIB)} MiB`,
    };
  }
  const host = hostMemory(read);
  const mib = Math.max(MIN_MIB, Math.floor((host * HOST_SHARE) / MIB));
  return { limit: `${mib}MiB`, from: `auto: 25% of the machine's ${gib(host)}, no control group limit being set` };
}

/** The bytes of a size as the configuration writes it (`256MB`, `1.5 GiB`: DuckDB's units), or undefined for "". */
export function sizeBytes(size: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|KiB|MiB|GiB)$/i.exec(size.trim());
  if (!m) return undefined;
  const unit = m[2]!.toLowerCase();
  const base = unit.endsWith('ib') ? 1024 : 1000;
  return Number(m[1]) * base ** { k: 1, m: 2, g: 3 }[unit[0] as 'k' | 'm' | 'g'];
}
