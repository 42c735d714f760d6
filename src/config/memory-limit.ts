/**
 * DuckDB's memory limit when the configuration leaves it to the machine (`duckdbMemoryLimit: "auto"`, the default):
 * 40% of the memory limit of the process' control group (a container's `--memory`, a Kubernetes memory limit, a
 * systemd `MemoryMax=`), at least 64 MiB; 256MB where no limit is set. The other 60% is the Node.js process' own
 * (about 160 MB at its peak in a run) and DuckDB's allocations outside its buffer manager. DuckDB spills what does not
 * fit to the data folder, whose free space a run checks first.
 */
import { readFileSync } from 'node:fs';

/** The limit where the control group sets none. */
export const UNLIMITED_DEFAULT = '256MB';

/** The share of a control group's limit given to DuckDB. */
export const CGROUP_SHARE = 0.4;

const MIB = 1024 ** 2;

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
export function cgroupMemoryLimit(read: (path: string) => string | undefined = readText): number | undefined {
  const groups = (read('/proc/self/cgroup') ?? '').split('\n');
  const v2 = groups.find((l) => l.startsWith('0::'))?.slice(3) ?? '/';
  const v1 = groups.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('memory'))?.[2] ?? '/';
  const files = [
    ...upwards(v2).map((g) => `/sys/fs/cgroup${g === '/' ? '' : g}/memory.max`),
    ...upwards(v1).map((g) => `/sys/fs/cgroup/memory${g === '/' ? '' : g}/memory.limit_in_bytes`),
  ];
  const limits = files.map((f) => limitOf(read(f))).filter((n): n is number => n !== undefined);
  return limits.length ? Math.min(...limits) : undefined;
}

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** The limit `auto` stands for, given the control group's limit in bytes (or none). */
export function autoMemoryLimit(cgroupBytes: number | undefined): string {
  if (cgroupBytes === undefined) return UNLIMITED_DEFAULT;
  return `${Math.max(64, Math.floor((cgroupBytes * CGROUP_SHARE) / MIB))}MiB`;
}

/** The bytes of a size as the configuration writes it (`256MB`, `1.5 GiB`: DuckDB's units), or undefined for "". */
export function sizeBytes(size: string): number | undefined {
  const m = /^(\d+(?:\.\d+)?)\s*(KB|MB|GB|KiB|MiB|GiB)$/i.exec(size.trim());
  if (!m) return undefined;
  const unit = m[2]!.toLowerCase();
  const base = unit.endsWith('ib') ? 1024 : 1000;
  return Number(m[1]) * base ** { k: 1, m: 2, g: 3 }[unit[0] as 'k' | 'm' | 'g'];
}
