/** DuckDB's memory limit from the control group's (`duckdbMemoryLimit: "auto"`), read from fake cgroup files. */
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { autoMemoryLimit, cgroupMemoryLimit } from '../../src/config/memory-limit.ts';

/** A reader of the given files; every other path is absent. */
const files = (f: Record<string, string>) => (path: string) => f[path];
const MiB = 1024 ** 2;

describe('the control group memory limit', () => {
  it("reads cgroup v2's memory.max of the process' own group, and the least of it and its parents'", () => {
    const read = files({
      '/proc/self/cgroup': '0::/system.slice/pool-export.service\n',
      '/sys/fs/cgroup/system.slice/pool-export.service/memory.max': '536870912\n',
      '/sys/fs/cgroup/system.slice/memory.max': 'max\n',
    });
    expect(cgroupMemoryLimit(read)).toBe(512 * MiB);
    const parentLower = files({
      '/proc/self/cgroup': '0::/system.slice/pool-export.service\n',
      '/sys/fs/cgroup/system.slice/pool-export.service/memory.max': 'max\n',
      '/sys/fs/cgroup/system.slice/memory.max': '1073741824\n',
    });
    expect(cgroupMemoryLimit(parentLower)).toBe(1024 * MiB);
  });

  it("reads cgroup v1's memory.limit_in_bytes, where a container sees its own group at the root", () => {
    const read = files({
      '/proc/self/cgroup': '4:memory:/docker/6555b4d3\n0::/docker/6555b4d3\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '536870912\n',
    });
    expect(cgroupMemoryLimit(read)).toBe(512 * MiB);
  });

  it('finds no limit where none is set: "max", v1\'s huge value, or no files at all', () => {
    expect(cgroupMemoryLimit(files({ '/proc/self/cgroup': '0::/\n', '/sys/fs/cgroup/memory.max': 'max\n' }))).toBe(
      undefined,
    );
    const v1 = files({
      '/proc/self/cgroup': '4:memory:/\n',
      '/sys/fs/cgroup/memory/memory.limit_in_bytes': '9223372036854771712\n',
    });
    expect(cgroupMemoryLimit(v1)).toBe(undefined);
    expect(cgroupMemoryLimit(files({}))).toBe(undefined);
  });

  it('gives DuckDB 40% of the limit in MiB, at least 64 MiB, and 256MB without a limit', () => {
    expect(autoMemoryLimit(512 * MiB)).toBe('204MiB');
    expect(autoMemoryLimit(4096 * MiB)).toBe('1638MiB');
    expect(autoMemoryLimit(100 * MiB)).toBe('64MiB');
    expect(autoMemoryLimit(undefined)).toBe('256MB');
  });

  it('is what the configuration holds by default, and a set limit (or "") is kept as given', () => {
    const def = loadConfig({ env: {} }).duckdbMemoryLimit;
    expect(def).toBe(autoMemoryLimit(cgroupMemoryLimit()));
    expect(loadConfig({ env: {}, overrides: { duckdbMemoryLimit: '1GB' } }).duckdbMemoryLimit).toBe('1GB');
    expect(loadConfig({ env: {}, overrides: { duckdbMemoryLimit: '' } }).duckdbMemoryLimit).toBe('');
    expect(loadConfig({ env: {}, overrides: { duckdbMemoryLimit: 'auto' } }).duckdbMemoryLimit).toBe(def);
  });
});
