/** DuckDB's memory limit of `duckdbMemoryLimit: "auto"`, from hand-written cgroup files and `/proc/meminfo`. */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/config.ts';
import { autoMemoryLimit, cgroupMemoryLimit, hostMemory } from '../../src/config/memory-limit.ts';

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

  // `/proc/meminfo` as Linux 6.1 writes it (first lines), for a 24 GiB machine and a 1 GiB one.
  const meminfo = (kB: number) =>
    `MemTotal:       ${kB} kB\nMemFree:        ${kB - 204800} kB\nMemAvailable:   ${kB - 102400} kB\nBuffers:            2048 kB\n`;
  const v1Unlimited = {
    '/proc/self/cgroup': '4:memory:/process_api/fafab1df\n0::/\n',
    '/sys/fs/cgroup/memory/process_api/fafab1df/memory.limit_in_bytes': '9223372036854771712\n',
  };

  it('gives DuckDB 40% of a control group limit in MiB, at least 64 MiB, whatever the machine holds', () => {
    const under = (limit: number) =>
      autoMemoryLimit(
        files({
          '/proc/self/cgroup': '0::/\n',
          '/sys/fs/cgroup/memory.max': `${limit}\n`,
          '/proc/meminfo': meminfo(24 * 1024 ** 2),
        }),
      );
    // 512 MiB × 0.4 = 204.8 MiB, 4 GiB × 0.4 = 1638.4 MiB, 100 MiB × 0.4 = 40 MiB (raised to 64).
    expect(under(536_870_912)).toEqual({
      limit: '204MiB',
      from: "auto: 40% of the control group's memory limit, 512 MiB",
    });
    expect(under(4_294_967_296).limit).toBe('1638MiB');
    expect(under(104_857_600).limit).toBe('64MiB');
  });

  it("gives DuckDB 25% of the machine's MemTotal where no control group sets a limit", () => {
    // 24 GiB = 25,165,824 kB; a quarter is 6144 MiB. 1 GiB: 256 MiB. 200 MiB: 50, raised to 64.
    expect(autoMemoryLimit(files({ ...v1Unlimited, '/proc/meminfo': meminfo(25_165_824) }))).toEqual({
      limit: '6144MiB',
      from: "auto: 25% of the machine's 24.0 GiB, no control group limit being set",
    });
    expect(autoMemoryLimit(files({ ...v1Unlimited, '/proc/meminfo': meminfo(1_048_576) })).limit).toBe('256MiB');
    expect(autoMemoryLimit(files({ '/proc/meminfo': meminfo(204_800) })).limit).toBe('64MiB');
  });

  it("takes Node's count of the machine's memory where /proc/meminfo cannot be read", () => {
    expect(hostMemory(files({}))).toBe(totalmem());
    expect(hostMemory(files({ '/proc/meminfo': 'MemFree: 1 kB\n' }))).toBe(totalmem());
    expect(hostMemory(files({ '/proc/meminfo': meminfo(1_048_576) }))).toBe(1024 ** 3);
  });

  it('reads the host under POOL_EXPORT_HOST_FILES, so that a test can play a host with or without a limit', () => {
    const root = mkdtempSync(join(tmpdir(), 'pool-export-host-'));
    try {
      mkdirSync(join(root, 'proc/self'), { recursive: true });
      writeFileSync(join(root, 'proc/self/cgroup'), '0::/\n');
      writeFileSync(join(root, 'proc/meminfo'), meminfo(8_388_608));
      const env = { POOL_EXPORT_HOST_FILES: root };
      expect(loadConfig({ env }).duckdbMemoryLimit).toBe('2048MiB');
      mkdirSync(join(root, 'sys/fs/cgroup'), { recursive: true });
      writeFileSync(join(root, 'sys/fs/cgroup/memory.max'), '536870912\n');
      const c = loadConfig({ env });
      expect([c.duckdbMemoryLimit, c.duckdbMemoryLimitFrom]).toEqual([
        '204MiB',
        "auto: 40% of the control group's memory limit, 512 MiB",
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('is what the configuration holds by default, and a set limit (or "") is kept as given, with where it came from', () => {
    const def = loadConfig({ env: {} });
    expect(def.duckdbMemoryLimit).toBe(autoMemoryLimit().limit);
    expect(def.duckdbMemoryLimitFrom).toBe(autoMemoryLimit().from);
    const set = loadConfig({ env: {}, overrides: { duckdbMemoryLimit: '1GB' } });
    expect([set.duckdbMemoryLimit, set.duckdbMemoryLimitFrom]).toEqual(['1GB', 'the configuration']);
    const none = loadConfig({ env: {}, overrides: { duckdbMemoryLimit: '' } });
    expect([none.duckdbMemoryLimit, none.duckdbMemoryLimitFrom]).toEqual([
      '',
      "none set: DuckDB's own default, 80% of the machine's memory",
    ]);
    expect(loadConfig({ env: {}, overrides: { duckdbMemoryLimit: 'auto' } }).duckdbMemoryLimit).toBe(
      def.duckdbMemoryLimit,
    );
  });
});
